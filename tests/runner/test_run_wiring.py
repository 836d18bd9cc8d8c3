"""Wiring that a unit test of its class does not prove (issue 25), and what a stopped run
leaves behind (issue 23).

- A run without a terminal prints its waiting line (the heartbeat is wired into the run,
  not only a class that works): a slow endpoint, the interval shortened, the log a file.
- The part files and temporary files a killed run or a killed ``parse`` left are removed by
  the next run or parse into the same place, while those of a writer still running stay.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import genir_eval.runner.executor as executor
from genir_eval.cli import main
from genir_eval.paths import claim_folder
from genir_eval.rundir.folder import RunWriter, remove_stale_parts
from genir_eval.runner import parse_scenario, run_scenario
from genir_eval.runner.run import RUN_SIGNATURE
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"
REPLY = '{"M": 2, "T": 3, "O": 2}'


def _scenario(tmp_path: Path, base_url: str):  # type: ignore[no-untyped-def]
    return parse_scenario(
        {
            "input": {"path": str(DEMO_CSV), "limit": 2},
            "llm": {"provider": "openai", "base_url": base_url, "model": "m"},
            "engine": {"cache": False, "concurrency": 2},
            "judges": [{"name": "link_usefulness.dna"}],
            "meta": {"n_boot": 20},
        },
        base_dir=tmp_path,
    )


@pytest.mark.slow
def test_a_run_without_a_terminal_prints_its_waiting_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "HEARTBEAT_S", 0.05)
    log = io.StringIO()  # not a terminal
    with FakeLLMServer(reply=lambda request: REPLY, latency=0.4) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        run_scenario(
            _scenario(tmp_path, server.openai_base_url),
            out_dir=tmp_path / "run",
            progress=True,
            log=log,
        )
    lines = [line for line in log.getvalue().splitlines() if "judgments done" in line]
    assert lines, log.getvalue()
    assert lines[0].startswith("genir-eval: ") and "failed" in lines[0]
    assert any("waiting for" in line for line in lines), lines


@pytest.mark.slow
def test_the_waiting_line_knows_its_total_before_the_first_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: the line read "0/0 judgments done" until the first answer (the engines never
    announced their calls). Each judgment counts as under way as it begins: with replies
    slower than the heartbeat, the lines before the first answer read "0 judgments done, N
    under way", N the calls begun (at least the two in flight). Issue 45: no line states a
    total (it grew as the judges found calls, 0/1 -> 0/268 -> 717, and the bar moved
    backwards); the counts done only grow."""
    monkeypatch.setattr(executor, "HEARTBEAT_S", 0.05)
    log = io.StringIO()
    with FakeLLMServer(reply=lambda request: REPLY, latency=0.4) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        run_scenario(
            _scenario(tmp_path, server.openai_base_url),
            out_dir=tmp_path / "run",
            progress=True,
            log=log,
        )
        calls = server.stats.total
    counts = [
        re.search(r"genir-eval: ([\d,]+) judgments done, ([\d,]+) under way", line)
        for line in log.getvalue().splitlines()
        if "judgments done" in line
    ]
    assert counts and all(counts), log.getvalue()
    done = [int(m.group(1).replace(",", "")) for m in counts if m]
    under_way = [int(m.group(2).replace(",", "")) for m in counts if m]
    assert done[0] == 0 and 2 <= under_way[0] <= calls, (done, under_way, calls)
    assert done == sorted(done)  # never backwards
    assert not re.search(r"\d+/\d+ judgments", log.getvalue())  # no done/total


@pytest.mark.slow
def test_quiet_runs_print_no_waiting_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The line above comes from the heartbeat, not from anything else the run prints."""
    monkeypatch.setattr(executor, "HEARTBEAT_S", 0.05)
    log = io.StringIO()
    with FakeLLMServer(reply=lambda request: REPLY, latency=0.4) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        run_scenario(
            _scenario(tmp_path, server.openai_base_url),
            out_dir=tmp_path / "run",
            progress=False,
            log=log,
        )
    assert "judgments done" not in log.getvalue()


def _dead_pid() -> int:
    """The id of a process that has ended (a child started and waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


STALE = [
    ".links.jsonl.{pid}.a1b2c3d4e5f6.part",
    ".turns.jsonl.{pid}.0123456789ab.part",
    ".sessions.jsonl.{pid}.ffffffffffff.part",
    ".citations.jsonl.{pid}.abcdefabcdef.part",
    ".evidence.jsonl.{pid}.123456123456.part",
    ".failures.jsonl.{pid}.654321654321.part",
    ".links.csv.{pid}.a1b2c3d4e5f6.tmp",
    ".report.html.{pid}.a1b2c3d4e5f6.tmp",
    ".meta.json.{pid}.a1b2c3d4e5f6.tmp",
    ".run.json.{pid}.a1b2c3d4e5f6.tmp",
]


def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # the killed run had claimed its folder (genir_eval.paths): a run writes only into a
    # folder a run made, and the user's file put there since stays
    claim_folder(out, "run", signature=RUN_SIGNATURE, option="--out")
    dead, alive = _dead_pid(), os.getppid()  # the parent of this test runs on
    for pattern in STALE:
        (out / pattern.format(pid=dead)).write_bytes(b"x" * 100)
        (out / pattern.format(pid=alive)).write_bytes(b"x")
    mine = ["notes.txt", ".links.jsonl.part", f".other.txt.{dead}.a1b2c3d4e5f6.part"]
    for name in mine:
        (out / name).write_text("mine", encoding="utf-8")
    code = main(
        ["run", str(ROOT / "scenarios" / "demo-offline.toml"), "--out", str(out), "--quiet"]
    )
    assert code == 0
    left = {p.name for p in out.iterdir()}
    # the dead writer's files are gone; a running writer's and the user's stay
    assert not {pattern.format(pid=dead) for pattern in STALE} & left
    assert {pattern.format(pid=alive) for pattern in STALE} <= left
    assert set(mine) <= left
    # and this run left none of its own
    assert not [name for name in left if name.endswith(".part") and str(os.getpid()) in name]


def test_a_writer_removes_stale_parts_and_says_which(tmp_path: Path) -> None:
    dead = _dead_pid()
    for pattern in STALE:
        (tmp_path / pattern.format(pid=dead)).write_bytes(b"")
    writer = RunWriter(tmp_path)
    assert writer.removed_stale == sorted(p.format(pid=dead) for p in STALE)
    writer.abort()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".part", ".tmp"))]


def test_a_killed_parse_leaves_nothing_for_long(tmp_path: Path) -> None:
    """A parse killed mid-way leaves its temporary output; the next parse to the same file
    removes it (and a parse still running elsewhere keeps its own)."""
    output = tmp_path / "out.jsonl"
    dead = _dead_pid()
    stale = tmp_path / f".out.jsonl.{dead}.k1ll3d_x.tmp"
    stale.write_bytes(b"half a file")
    running = tmp_path / f".out.jsonl.{os.getppid()}.st1ll_up.tmp"
    running.write_bytes(b"another parse")
    other = tmp_path / f".other.jsonl.{dead}.k1ll3d_x.tmp"
    other.write_bytes(b"not this output's")
    assert main(["parse", str(DEMO_CSV), "-o", str(output)]) == 0
    assert not stale.exists() and running.exists() and other.exists()
    assert json.loads(output.read_text(encoding="utf-8").splitlines()[0])["session_id"]


@pytest.mark.slow
def test_a_kill_mid_parse_is_cleaned_by_the_next(tmp_path: Path) -> None:
    """A real kill: a parse of a large input is stopped with SIGKILL while it writes."""
    big = tmp_path / "big.jsonl"
    assert main(["parse", str(DEMO_CSV), "-o", str(big)]) == 0
    line = big.read_text(encoding="utf-8").splitlines()[0]
    record = json.loads(line)
    with big.open("w", encoding="utf-8") as handle:
        for i in range(60_000):
            record["session_id"] = f"s{i}"
            handle.write(json.dumps(record) + "\n")
    output = tmp_path / "out.jsonl"
    script = (
        "import sys; from genir_eval.cli import main; "
        f"sys.exit(main(['parse', {str(big)!r}, '-o', {str(output)!r}]))"
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(600):  # until its temporary output appears (at most 60 s)
            if [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")]:
                break
            if child.poll() is not None:
                pytest.fail("the parse ended before it could be killed")

            time.sleep(0.1)
        child.kill()
    finally:
        child.wait()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")]
    assert not output.exists()
    removed = remove_stale_parts(tmp_path, ["out.jsonl"])
    assert len(removed) == 1 and removed[0].startswith(f".out.jsonl.{child.pid}.")
