"""A Ray cluster's own processes killed mid-run: ``genir-eval run --executor ray`` in a
subprocess with a local cluster of its own, and the cluster's GCS (Ray's head process) or its
node's dashboard agent (the raylet ends with it) killed with SIGKILL once the journal shards
hold a few judgments. The run ends with one ``genir-eval:`` line naming where the judgments
are kept, exit 2, no traceback; a local resume pays only for what the journals lack.
Skipped when Ray is not installed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from genir_eval.runner.ray_executor import GCS_LOST_S
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.runner.scenario import load_scenario
from genir_eval.testing import FakeLLMServer

pytestmark = pytest.mark.ray

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-fake-key"
WORKERS = 2
CONCURRENCY = 1
#: Each call takes this long: a shard (about 15 links, one at a time) outlasts the GCS
#: watch's GCS_LOST_S after the kill, so the kill lands mid-run.
LATENCY_S = 2.0


def _reply(request: Any) -> str:
    return '{"O": 2, "M": 2, "T": 1}'


def _journaled(out: Path) -> int:
    """Finished judgments over the journal shards in ``out``."""
    total = 0
    for path in out.glob("journal.shard-*.sqlite"):
        with contextlib.suppress(sqlite3.Error):
            uri = f"file:{path}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
                query = "SELECT count(*) FROM journal WHERE status = 'ok'"
                total += int(db.execute(query).fetchone()[0])
    return total


def _processes() -> list[tuple[int, int, str]]:
    """(pid, parent pid, name) of every process (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        parent = int(text[text.rindex(")") + 2 :].split()[1])
        found.append((int(stat.parent.name), parent, name))
    return found


def _descendants(pid: int) -> list[tuple[int, str]]:
    processes = _processes()
    family = {pid}
    grew = True
    while grew:
        grew = False
        for child, parent, _name in processes:
            if parent in family and child not in family:
                family.add(child)
                grew = True
    return [(child, name) for child, _parent, name in processes if child in family - {pid}]


def _scenario(folder: Path, base_url: str) -> Path:
    path = folder / "scenario.toml"
    path.write_text(
        f"""version = 1
name = "cluster-faults"
[input]
path = "{ROOT / "fixtures" / "demo_sessions.csv"}"
format = "urge"
[llm]
provider = "openai"
model = "fake-model"
base_url = "{base_url}"
[engine]
concurrency = {CONCURRENCY}
[[judges]]
name = "link_usefulness.dna"
[aggregate]
link_judges = ["link_usefulness.dna"]
measures = ["sdcg_urge"]
session = "decreasing"
""",
        encoding="utf-8",
    )
    return path


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds Ray's processes in /proc")
@pytest.mark.parametrize(
    ("victim", "words"),
    [
        ("gcs_server", f"has refused connections for {GCS_LOST_S:.0f} s"),
        ("ray::DashboardA", "raylet died"),
    ],
    ids=["gcs", "dashboard-agent"],
)
def test_a_cluster_process_killed_mid_run_gives_one_line_and_a_resume_pays_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: str, words: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # Ray's sockets live under RAY_TMPDIR, whose path must stay short
    ray_tmp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    out = tmp_path / "run"
    family: list[tuple[int, str]] = []
    try:
        with FakeLLMServer(reply=_reply, latency=LATENCY_S) as server:
            scenario = _scenario(tmp_path, server.openai_base_url)
            env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
            env.update(OPENAI_API_KEY=KEY, RAY_TMPDIR=str(ray_tmp))
            argv = ["run", str(scenario), "--out", str(out), "--executor", "ray"]
            argv += ["--ray-workers", str(WORKERS), "--quiet"]
            run = subprocess.Popen(
                [sys.executable, "-m", "genir_eval", *argv],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            deadline = time.monotonic() + 240
            while _journaled(out) < 3 and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            family = _descendants(run.pid)
            targets = [pid for pid, name in family if name == victim]
            assert _journaled(out) >= 3 and targets, (family, run.poll())
            for pid in targets:
                os.kill(pid, signal.SIGKILL)
            _stdout, stderr = run.communicate(timeout=240)
            kept = _journaled(out)
            paid = server.stats.total

            # One line, the documented exit code, no traceback, the judgments kept
            assert run.returncode == 2, stderr[-3000:]
            ours = [line for line in stderr.splitlines() if line.startswith("genir-eval")]
            assert len(ours) == 1, stderr[-3000:]
            assert words in ours[0] and f"journal shards in {out}" in ours[0], ours[0]
            assert "Traceback" not in stderr and "never retrieved" not in stderr, stderr[-3000:]
            assert 3 <= kept <= paid

            # A local resume asks only for what no journal shard holds (all at once: the
            # concurrency is no part of a judgment's fingerprint)
            resumed = run_scenario(
                load_scenario(scenario), out_dir=out, overrides=Overrides(concurrency=32)
            )
            asked = dict(server.stats.by_prompt)
        labels = resumed.info["judges"][0]["labels"]
        assert resumed.info["status"]["ok"] and resumed.info["judges"][0]["missing"] == 0
        assert resumed.info["provider_calls"] == labels - kept
        assert len(asked) == labels
        # asked twice: at most the calls in flight when the workers were stopped
        assert sum(count - 1 for count in asked.values()) <= WORKERS * CONCURRENCY
    finally:
        for pid, _name in family:  # Ray's agents may outlive a cluster that lost its GCS
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(ray_tmp, ignore_errors=True)
