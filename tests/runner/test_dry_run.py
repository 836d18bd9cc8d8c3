"""``run --dry-run``: the calls, tokens and cost a run would spend, with no call made and
nothing written; cache hits counted apart; the estimate against what a real run against the
fake server then spends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.ingest import load_sessions
from genir_eval.llm.dry_run import APPROXIMATION, token_counter
from genir_eval.runner.dry_run import dry_run
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"
REPLY = '{"M": 2, "T": 3, "O": 2}'
#: $1 and $2 per million tokens in and out: a price the test can reckon with
PRICES = {
    "prices": [
        {
            "provider": "openai",
            "models": ["priced-model"],
            "input": 1.0,
            "output": 2.0,
            "as_of": "2026-12-01",
            "source": "a test's own",
        }
    ]
}


def _cited() -> int:
    return sum(len(t.cited_link_ids) for s in load_sessions(DEMO_CSV).sessions for t in s.turns)


def _scenario(folder: Path, base_url: str) -> Path:
    (folder / "prices.json").write_text(json.dumps(PRICES), encoding="utf-8")
    path = folder / "s.toml"
    path.write_text(
        f"""
name = "dry"
[input]
path = {json.dumps(str(DEMO_CSV))}
format = "urge"
[llm]
provider = "openai"
model = "priced-model"
base_url = {json.dumps(base_url)}
[engine]
concurrency = 2
cache = {json.dumps(str(folder / "cache.sqlite"))}
prices = {json.dumps(str(folder / "prices.json"))}
[[judges]]
name = "link_usefulness.dna"
[meta]
n_boot = 20
""",
        encoding="utf-8",
    )
    return path


def test_a_dry_run_makes_no_call_and_its_estimate_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake-key")
    with FakeLLMServer(reply=lambda request: REPLY) as server:
        scenario = _scenario(tmp_path, server.openai_base_url)
        code = main(["run", str(scenario), "--dry-run", "--max-cost", "0.0000001"])
        captured = capsys.readouterr()
        assert code == 0 and server.stats.total == 0
        assert not (tmp_path / "cache.sqlite").exists() and not (tmp_path / "runs").exists()
        assert f"link_usefulness.dna (openai/priced-model): {_cited()} calls, 0 cached" in (
            captured.out
        )
        assert APPROXIMATION in captured.out and "PAST --max-cost" in captured.out
        estimate = dry_run(scenario)
        # the real run: what the fake server counts (prompt characters // 4 in, the reply's
        # 24 characters // 4 = 6 out), priced by the same table
        out = tmp_path / "run"
        assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 0
        assert server.stats.total == _cited()
        capsys.readouterr()
        # a second dry run finds every reply in the cache: nothing to spend
        again = dry_run(scenario)
    [row] = estimate.rows
    assert row.calls == _cited() and row.cache_hits == 0
    engines = json.loads((out / "run.json").read_text(encoding="utf-8"))["engines"]
    spent = sum(e["cost_usd"] for e in engines)
    prompt = sum(e["input_tokens"] for e in engines)
    # the prompt's tokens by the approximation against the server's count: within 5%
    assert abs(row.prompt_tokens - prompt) / prompt < 0.05
    # the answers: the twin's replies (a reason besides the figures) against the server's
    # 6 tokens, so the estimate lies above what was spent and the bound at max_tokens too
    assert row.cost is not None and row.cost_limit is not None
    assert spent <= row.cost <= row.cost_limit
    [cached] = again.rows
    assert cached.calls == 0 and cached.cache_hits == _cited() and cached.cost == 0.0


def test_the_token_count_says_how_it_was_made() -> None:
    count, how = token_counter("a-model-no-tokenizer-knows")
    assert how == APPROXIMATION
    assert count("abcd" * 10) == 10 and count("abcde") == 2
