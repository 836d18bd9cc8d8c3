"""A run's spending cap (``--max-cost``, ``--max-tokens``; llm/limits/budget.py): each
attempt reserves its estimated cost before it is sent and is settled with what it used; the
engine stops before the call that would pass a cap, and a run so stopped is failed with the
reason "budget" and resumes when run again.

Counts below are worked out by hand from the fake server's usage (prompt characters // 4
input tokens, reply characters // 4 output tokens) and the engine's estimate (each message's
``(chars + 3) // 4`` tokens, the answer at the request's ``max_tokens``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.cli import main
from genir_eval.llm import Completion, Failure
from genir_eval.llm.limits import Budget
from genir_eval.llm.prices import Price, PriceTable
from genir_eval.testing import FakeLLMServer

# make_request(i) for i < 10: "You judge." (10 chars: 3 tokens estimated) and "judge item i"
# (12 chars: 3): 6 prompt tokens estimated; the server counts 22 // 4 = 5 input tokens and
# "reply to judge item i" (21 chars) 5 output tokens: 10 tokens used.
ESTIMATED_PROMPT, USED = 6, 10

#: $1 a token in, $2 a token out: a call's estimate at max_tokens 20 is 6 + 40 = $46, what
#: it uses 5 + 10 = $15
PRICES = PriceTable({("openai", "fake-model"): Price(1_000_000.0, 2_000_000.0, "-", "test")})


def test_reserve_and_settle_by_hand() -> None:
    budget = Budget(max_cost=10.0, max_tokens=100)
    first = budget.reserve(4.0, 40)
    second = budget.reserve(4.0, 40)
    assert first is not None and second is not None
    assert budget.reserve(4.0, 10) is None  # 8 + 4 = 12 > 10
    assert "past --max-cost $10" in (budget.refused or "")
    budget.settle(first, 1.0, 15)  # spent 1, reserved 4: 1 + 4 + 4 = 9
    third = budget.reserve(4.0, 40)
    assert third is not None  # tokens: 15 + 80 = 95 <= 100
    budget.settle(first, 100.0, 100)  # settled once only
    assert budget.spent_cost == 1.0 and budget.spent_tokens == 15
    assert budget.reserve(0.5, 10) is None and "past --max-tokens 100" in (budget.refused or "")
    assert budget.in_flight == 2


async def _sequential(
    server: FakeLLMServer, n: int, prices: PriceTable | None = None, **kwargs: object
) -> list[object]:
    async with openai_engine(server, **kwargs) as engine:  # type: ignore[arg-type]
        if prices is not None:
            engine.prices = prices  # (openai_engine's keyword `prices` is the config's file)
        return [await engine.complete(make_request(i, max_tokens=20)) for i in range(n)]


def test_max_tokens_stops_before_the_call_that_would_pass_it(server: FakeLLMServer) -> None:
    # each call reserves 6 + 20 = 26 and uses 10: the (k+1)-th goes while 10k + 26 <= 100,
    # k <= 7: 8 calls answered, the 9th not sent
    results = asyncio.run(_sequential(server, 10, max_tokens=100))
    assert [isinstance(r, Completion) for r in results] == [True] * 8 + [False] * 2
    assert server.stats.total == 8
    ninth, tenth = results[8], results[9]
    assert isinstance(ninth, Failure) and ninth.error_class == "budget"
    assert "would take the tokens to 106, past --max-tokens 100 (80 spent" in ninth.message
    assert isinstance(tenth, Failure) and tenth.error_class == "stopped"
    assert tenth.message.startswith("not sent: budget: ")


def test_max_cost_with_prices(server: FakeLLMServer) -> None:
    # $46 reserved, $15 used: the (k+1)-th goes while 15k + 46 <= 100, k <= 3: 4 calls
    results = asyncio.run(_sequential(server, 6, max_cost=100.0, prices=PRICES))
    assert sum(isinstance(r, Completion) for r in results) == 4 == server.stats.total
    assert "past --max-cost $100 ($60.000000 spent" in results[4].message  # type: ignore[union-attr]


def test_an_unknown_price_sends_nothing_under_max_cost(server: FakeLLMServer) -> None:
    results = asyncio.run(_sequential(server, 2, max_cost=100.0, prices=PriceTable()))
    assert server.stats.total == 0
    first = results[0]
    assert isinstance(first, Failure) and "price of openai/fake-model is unknown" in first.message


def test_a_retried_attempt_counts(server: FakeLLMServer) -> None:
    # the failed attempt is counted at its prompt's estimate (6), the answered one at 10
    server.push_script(["server_error"])

    async def one() -> tuple[object, Budget | None]:
        async with openai_engine(server, max_tokens=1000) as engine:
            return await engine.complete(make_request(1, max_tokens=20)), engine.budget

    result, budget = asyncio.run(one())
    assert isinstance(result, Completion) and budget is not None
    assert budget.spent_tokens == ESTIMATED_PROMPT + USED


def test_concurrent_calls_never_pass_the_cap(server: FakeLLMServer) -> None:
    # 60 judgments, 8 in flight: every send reserved first, so the spent tokens stay under
    # the cap (the reservations are larger than what each call uses)
    async def many() -> tuple[list[object], Budget | None]:
        async with openai_engine(server, max_tokens=500, concurrency=8) as engine:
            done = await asyncio.gather(
                *(engine.complete(make_request(i, max_tokens=20)) for i in range(60))
            )
            return list(done), engine.budget

    results, budget = asyncio.run(many())
    assert budget is not None and budget.spent_tokens <= 500
    answered = sum(isinstance(r, Completion) for r in results)
    assert answered == server.stats.total and 0 < answered < 60
    # what is left after the stop is less than one more call's reservation
    assert budget.spent_tokens + 26 > 500 - 26 * 8


REPLY = '{"M": 2, "T": 3, "O": 2}'
DEMO_CSV = Path(__file__).resolve().parents[2] / "fixtures" / "demo_sessions.csv"


def _scenario(path: Path, base_url: str) -> Path:
    path.write_text(
        f"""
name = "budget"
[input]
path = {json.dumps(str(DEMO_CSV))}
format = "urge"
[llm]
provider = "openai"
model = "gpt-4o-mini"
base_url = {json.dumps(base_url)}
[engine]
concurrency = 1
cache = false
[[judges]]
name = "link_usefulness.dna"
[meta]
n_boot = 20
""",
        encoding="utf-8",
    )
    return path


def test_a_run_stopped_by_its_budget_is_failed_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake-key")
    with FakeLLMServer(reply=lambda request: REPLY) as server:
        scenario = _scenario(tmp_path / "s.toml", server.openai_base_url)
        out = tmp_path / "run"
        code = main(["run", str(scenario), "--out", str(out), "--max-tokens", "5000", "--quiet"])
        first = server.stats.total
        captured = capsys.readouterr()
        assert code == 3 and "Traceback" not in captured.err
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
        assert run["status"]["ok"] is False
        assert any("budget: " in r for r in run["status"]["reasons"])
        assert any(f["cause"] == "budget" for f in run["status"]["top_failures"])
        assert 0 < first
        # again with no cap: the journaled judgments are not asked again
        code = main(["run", str(scenario), "--out", str(out), "--quiet"])
        second = server.stats.total - first
    assert code == 0
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["status"]["ok"] is True
    links = [json.loads(line) for line in (out / "links.jsonl").read_text().splitlines()]
    cited = sum(1 for row in links if row["cited"])
    assert first + second == cited


def _system(path: Path, lines: int) -> str:
    rows = [
        {
            "version": 1,
            "session_id": f"s{q}",
            "language": "en",
            "turns": [
                {
                    "index": 1,
                    "query": f"question {q}",
                    "response_text": "\n".join(f"point {k} [{k + 1}]" for k in range(lines)),
                    "links": [
                        {"id": i, "url": f"https://e.org/{q}/{i}", "title": f"t{i}"}
                        for i in range(1, lines + 1)
                    ],
                }
            ],
        }
        for q in range(6)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"{path.stem}={path}"


def test_the_arena_takes_the_same_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake-key")
    a, b = _system(tmp_path / "a.jsonl", 2), _system(tmp_path / "b.jsonl", 3)
    with FakeLLMServer(reply=lambda request: '{"winner": "A"}') as server:
        command = ["arena", a, b, "--out", str(tmp_path / "arena"), "--cache", "none"]
        code = main([*command, "--base-url", server.openai_base_url, "--max-tokens", "3000"])
        sent = server.stats.total
    captured = capsys.readouterr()
    assert code == 3 and "Traceback" not in captured.err
    assert "past --max-tokens 3,000" in captured.err and "12 x budget" not in captured.out
    assert 0 < sent < 12  # 12 pairs (6 queries, both orders); stopped before the cap
