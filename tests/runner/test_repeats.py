"""``run --repeats K --repeat-sample N``: a seeded sample of sessions judged K times, each a
fresh request (the fake server counts them), and each judge's noise in run.json and
meta.json; an offline twin is not repeated and says it is deterministic."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.ingest import load_sessions
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"


def _scenario(folder: Path, provider: str, base_url: str | None) -> Path:
    llm = f'provider = "{provider}"\n' + (f'base_url = "{base_url}"\n' if base_url else "")
    path = folder / "s.toml"
    path.write_text(
        f"""
name = "noise"
[input]
path = {json.dumps(str(DEMO_CSV))}
format = "urge"
[llm]
{llm}
[engine]
concurrency = 2
cache = false
[[judges]]
name = "link_usefulness.dna"
[meta]
n_boot = 20
""",
        encoding="utf-8",
    )
    return path


def _links_of(session_ids: set[str]) -> int:
    return sum(
        len(t.cited_link_ids)
        for s in load_sessions(DEMO_CSV).sessions
        if s.session_id in session_ids
        for t in s.turns
    )


def test_repeats_measure_the_judges_noise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake-key")
    rng = random.Random(3)

    def noisy(request: object) -> str:  # a judge whose usefulness wobbles by one grade
        return json.dumps({"M": 2, "T": 2, "O": rng.choice([1, 2, 2, 3])})

    sessions = load_sessions(DEMO_CSV).sessions
    with FakeLLMServer(reply=noisy) as server:
        scenario = _scenario(tmp_path, "openai", server.openai_base_url)
        out = tmp_path / "run"
        args = ["run", str(scenario), "--out", str(out), "--repeats", "3"]
        assert main([*args, "--repeat-sample", "2", "--quiet"]) == 0
        requests = server.stats.total
    capsys.readouterr()
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    block = info["judge_noise"]["link_usefulness.dna"]
    assert block["deterministic"] is False and block["repeats"] == 3
    assert block["sessions"] == 2 and block["icc"] is not None
    assert -1 <= block["icc_ci95"][0] <= block["icc"] <= block["icc_ci95"][1] <= 1
    assert block["within_item_sd"] > 0 and 0 <= block["verdict_flip_share"] <= 1
    # the run's own judgments, then two fresh repeats of the sample's (no cache, no reuse)
    sampled = block["items"]
    assert requests == _links_of({s.session_id for s in sessions}) + 2 * sampled
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert meta["judge_noise"] == info["judge_noise"]
    # the judge's quality card shows it, in the terminal's words, in the report
    assert meta["judges"]["link_usefulness.dna"]["noise"] == block
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"judge noise: ICC {block['icc']:.3f}" in page


def test_offline_twins_are_deterministic_and_not_repeated(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, "offline", None)
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(out), "--repeats", "4", "--quiet"]) == 0
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    block = info["judge_noise"]["link_usefulness.dna"]
    assert block == {
        "deterministic": True,
        "note": "deterministic: an offline twin gives an item the same label every time",
    }
