"""Each LLM judge end to end against the local fake OpenAI/Anthropic server, with scripted
replies: well-formed, wrapped, malformed (repaired once, else missing with the reason)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from judge_helpers import run_judge, tiny_session

from genir_eval.llm import EngineConfig, open_engine
from genir_eval.testing.fake_llm_server import FakeLLMServer, FakeRequest, ScriptedReply

Script = Callable[[FakeRequest], str]


def _is_repair(request: FakeRequest) -> bool:
    return "could not be used" in request.last_user_text


def _link_id(request: FakeRequest) -> int:
    """Which link a per-link prompt is about (from its fenced title)."""
    text = request.last_user_text
    if "Data Structures" in text or "NumPy" in text:
        return 1
    return 2


# (reply for link 1, reply for link 2, expected labels, expected missing count); the source
# of each expectation is the scripted reply itself.
DNA_CASES = [
    ('{"M": 3, "T": 2, "O": 3}', '{"M": 1, "T": 1, "O": 1}', [3, 1, 3], 0),
    (
        'Sure! Here it is: {"M": 3, "T": 2, "O": 2} hope it helps',
        "{'M': 0, 'T': 1, 'O': 0}",
        [2, 0, 2],
        0,
    ),
    ('```json\n{"M": 2, "T": 2, "O": 2}\n```', '{"M": 1, "T": 1, "O": 1}', [2, 1, 2], 0),
]


@pytest.mark.parametrize("reply1, reply2, expected, n_missing", DNA_CASES)
def test_dna_wrapped_and_python_replies(
    fake_server: Callable[[Script], FakeLLMServer],
    reply1: str,
    reply2: str,
    expected: list[int],
    n_missing: int,
) -> None:
    server = fake_server(lambda r: reply1 if _link_id(r) == 1 else reply2)
    judge, labels = run_judge(server, "link_usefulness.dna", [tiny_session()])
    assert [lb.key.item for lb in labels] == ["link:1", "link:2", "link:1"]
    assert [lb.value for lb in labels] == expected
    assert sum(lb.value is None for lb in labels) == n_missing
    assert all(lb.raw for lb in labels) and all(lb.prompt_hash for lb in labels)
    assert "M" in labels[0].extra and "T" in labels[0].extra
    assert judge.stats.parse_failures == 0


def test_dna_truncated_reply_is_repaired(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    def script(request: FakeRequest) -> str:
        if _is_repair(request):
            return '{"M": 2, "T": 2, "O": 2}'
        return '{"M": 2, "T": 2, "O"' if _link_id(request) == 2 else '{"M": 3, "T": 3, "O": 3}'

    judge, labels = run_judge(fake_server(script), "link_usefulness.dna", [tiny_session()])
    assert [lb.value for lb in labels] == [3, 2, 3]
    assert labels[1].extra["repaired"] is True
    assert judge.stats.repairs == 1 and judge.stats.truncations == 1
    assert judge.stats.rates()["repair_rate"] == pytest.approx(1 / 3, abs=1e-9)


@pytest.mark.parametrize(
    "bad, reason",
    [
        ('{"M": 2, "T": 2, "O": 7}', "out of range"),
        ('{"M": 2, "T": 2}', "missing field"),
        ("I think it is quite useful.", "no JSON object"),
    ],
)
def test_dna_unrepairable_reply_is_missing_with_reason(
    fake_server: Callable[[Script], FakeLLMServer], bad: str, reason: str
) -> None:
    server = fake_server(lambda r: bad if _link_id(r) == 2 else '{"M": 3, "T": 3, "O": 3}')
    judge, labels = run_judge(server, "link_usefulness.dna", [tiny_session()])
    missing = labels[1]
    assert missing.value is None
    assert missing.missing_reason is not None and reason in missing.missing_reason
    assert "after repair" in missing.missing_reason
    assert labels[0].value == 3 and labels[2].value == 3
    assert judge.stats.missing == 1 and judge.stats.parse_failures == 2


def test_dna_multiple_judges_mean(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    reply = json.dumps({"judges": [{"O": 3}, {"O": 2}, {"O": 2}]})
    _, labels = run_judge(
        fake_server(lambda r: reply),
        "link_usefulness.dna",
        [tiny_session()],
        judges=3,
        aspects=False,
    )
    # (3 + 2 + 2) / 3, computed by hand.
    assert labels[0].value == pytest.approx(7 / 3, abs=1e-12)


def test_true_judge_and_signals(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    seen: list[str] = []

    def script(request: FakeRequest) -> str:
        seen.append(request.last_user_text)
        return json.dumps({"reasoning": "fits", "label": 2})

    _, labels = run_judge(fake_server(script), "link_usefulness.true", [tiny_session()])
    assert [lb.value for lb in labels] == [2, 2, 2]
    # The three links are judged concurrently, so prompts arrive in any order.
    assert len(seen) == 3
    assert any("user's satisfaction with this answer: 4/5" in prompt for prompt in seen)
    assert all("cited by" in prompt for prompt in seen)
    seen.clear()
    _, labels = run_judge(
        fake_server(script), "link_usefulness.true", [tiny_session()], signals="relevance"
    )
    assert len(seen) == 3
    for prompt in seen:
        signals = prompt.split("Signals")[1].split("Rubric")[0]
        assert "cited by" not in prompt and "satisfaction" not in signals


def test_listwise_missing_id_is_repaired_then_missing(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    def script(request: FakeRequest) -> str:
        if "[2]" in request.last_user_text and not _is_repair(request):
            return '{"labels": {"1": 3}}'  # link 2 left out
        if _is_repair(request):
            return '{"labels": {"1": 3, "2": 1}}'
        return '{"labels": {"1": 2}}'

    judge, labels = run_judge(fake_server(script), "link_usefulness.listwise", [tiny_session()])
    assert [(lb.key.turn, lb.key.item, lb.value) for lb in labels] == [
        (1, "link:1", 3),
        (1, "link:2", 1),
        (2, "link:1", 2),
    ]
    assert judge.stats.repairs == 1

    def never(request: FakeRequest) -> str:
        return '{"labels": {"1": 3, "9": 1}}'

    _, labels = run_judge(fake_server(never), "link_usefulness.listwise", [tiny_session()])
    assert labels[0].value is None and labels[1].value is None
    assert "unknown ids [9]" in (labels[0].missing_reason or "") or "missing ids" in (
        labels[0].missing_reason or ""
    )


def test_spans_judge(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    def script(request: FakeRequest) -> str:
        return '{"useful_segments": [0, 2]}' if "[2]" in request.last_user_text else "[0]"

    _, labels = run_judge(fake_server(script), "spans", [tiny_session()])
    assert [lb.value for lb in labels] == [[0, 2], [0]]
    assert labels[0].extra["texts"] == [
        "Python lists are ordered,",
        "Arrays hold items of one type.",
    ]

    _, labels = run_judge(
        fake_server(lambda r: '{"useful_segments": [5]}'), "spans", [tiny_session()]
    )
    assert all(lb.value is None and "out of range" in (lb.missing_reason or "") for lb in labels)


def test_geval_judge(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    _, labels = run_judge(
        fake_server(lambda r: '{"scores": [8, 6, 7]}'), "satisfaction.geval", [tiny_session()]
    )
    assert [(lb.key.turn, lb.key.item, lb.value) for lb in labels] == [
        (1, "turn", 8),
        (2, "turn", 6),
        (None, "session", 7),
    ]
    _, labels = run_judge(
        fake_server(lambda r: '{"scores": [8, 6]}'), "satisfaction.geval", [tiny_session()]
    )
    assert all(lb.value is None for lb in labels)
    assert "expected 3 scores" in (labels[0].missing_reason or "")


def test_geval_names_every_score_slot_and_constrains_the_count(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    # tiny_session has 2 turns: the prompt lists exactly three slots (no "..." for a small
    # model to count), and with response_format=json_schema the schema fixes the length.
    seen: list[FakeRequest] = []

    def reply(request: FakeRequest) -> str:
        seen.append(request)
        return '{"scores": [8, 6, 7]}'

    run_judge(fake_server(reply), "satisfaction.geval", [tiny_session()])
    run_judge(
        fake_server(reply),
        "satisfaction.geval",
        [tiny_session()],
        response_format="json_schema",
    )
    assert '{"scores": [<turn 1>, <turn 2>, <session>]}' in seen[0].last_user_text
    assert "..." not in seen[0].last_user_text.split("Answer with only")[-1]
    schema = seen[1].body["response_format"]["json_schema"]["schema"]
    scores = schema["properties"]["scores"]
    assert (scores["minItems"], scores["maxItems"]) == (3, 3)


def test_geval_probability_weighted_rating_over_openai_logprobs(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    # The reply '{"scores": [8, 6, 7]}' as tokens, with scripted alternatives at the ratings.
    # Expected weighted ratings, computed by hand from sum p(r) r / sum p(r):
    #   8 (p .6), 7 (p .3), 9 (p .1)      -> 4.8 + 2.1 + 0.9 = 7.8
    #   6 alone                           -> 6.0
    #   7 (p .5), 8 (p .5), "x" (ignored) -> 7.5
    ln = math.log
    tokens = (
        ('{"', 0.0, ()),
        ("scores", 0.0, ()),
        ('":', 0.0, ()),
        (" [", 0.0, ()),
        ("8", ln(0.6), (("7", ln(0.3)), ("9", ln(0.1)))),
        (",", 0.0, ()),
        (" ", 0.0, ()),
        ("6", 0.0, ()),
        (",", 0.0, ()),
        (" ", 0.0, ()),
        ("7", ln(0.5), (("8", ln(0.5)), ("x", ln(0.1)))),
        ("]}", 0.0, ()),
    )
    text = "".join(t[0] for t in tokens)
    requests: list[FakeRequest] = []

    def script(request: FakeRequest) -> ScriptedReply:
        requests.append(request)
        return ScriptedReply(text, tokens)

    _, labels = run_judge(fake_server(script), "satisfaction.geval", [tiny_session()])
    assert requests[0].body.get("logprobs") is True and requests[0].body.get("top_logprobs") == 10
    assert [lb.value for lb in labels] == [8, 6, 7]
    weighted = [lb.extra.get("weighted") for lb in labels]
    assert weighted == pytest.approx([7.8, 6.0, 7.5], abs=1e-9)


def _dimensional_reply(dims: list[str], overall: tuple[int, int, int]) -> str:
    def block(score: int) -> dict:
        return {"critique": "ok", "dimensions": {d: score for d in dims}, "overall": score}

    return json.dumps(
        {
            "turns": [{"turn": 1, **block(overall[0])}, {"turn": 2, **block(overall[1])}],
            "session": block(overall[2]),
        }
    )


@pytest.mark.parametrize(
    "name, dims",
    [
        (
            "satisfaction.urs",
            ["factuality", "user_satisfaction", "clarity", "completeness", "logical_coherence"],
        ),
        ("satisfaction.gah", ["coherence", "coverage", "consistency", "correctness", "clarity"]),
    ],
)
def test_dimensional_judges(
    fake_server: Callable[[Script], FakeLLMServer], name: str, dims: list[str]
) -> None:
    prompts: list[str] = []

    def script(request: FakeRequest) -> str:
        prompts.append(request.last_user_text)
        return _dimensional_reply(dims, (7, 5, 6))

    _, labels = run_judge(fake_server(script), name, [tiny_session()])
    assert [lb.value for lb in labels] == [7, 5, 6]
    assert labels[0].extra["dimension_mean"] == pytest.approx(7.0, abs=1e-12)
    assert set(labels[2].extra["dimensions"]) == set(dims)
    for dim in dims:
        assert dim in prompts[0]


def test_urs_missing_dimension_repaired(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    dims = ["factuality", "user_satisfaction", "clarity", "completeness", "logical_coherence"]

    def script(request: FakeRequest) -> str:
        if _is_repair(request):
            return _dimensional_reply(dims, (6, 6, 6))
        return re.sub(r'"clarity": \d+, ', "", _dimensional_reply(dims, (9, 9, 9)))

    judge, labels = run_judge(fake_server(script), "satisfaction.urs", [tiny_session()])
    assert [lb.value for lb in labels] == [6, 6, 6]
    assert judge.stats.repairs == 1


def test_anthropic_protocol(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    server = fake_server(lambda r: 'Here you go:\n{"reasoning": "ok", "label": 1}')
    _, labels = run_judge(server, "link_usefulness.true", [tiny_session()], protocol="anthropic")
    assert [lb.value for lb in labels] == [1, 1, 1]
    assert server.stats.total == 3


def test_resume_from_journal(
    fake_server: Callable[[Script], FakeLLMServer], tmp_path: Path
) -> None:
    import asyncio

    from genir_eval.judges import make_judge
    from genir_eval.llm.providers.openai_provider import OpenAIProvider
    from genir_eval.llm.store.journal import Journal

    server = fake_server(lambda r: '{"M": 2, "T": 2, "O": 2}' if _link_id(r) == 1 else "nonsense")

    async def go() -> tuple[list, object]:
        provider = OpenAIProvider(
            model="fake-model", base_url=server.openai_base_url, api_key=server.api_key
        )
        engine = open_engine(
            EngineConfig(max_attempts=1),
            provider,
            quiet=True,
            journal=Journal(tmp_path / "j.sqlite"),
        )
        judge = make_judge("link_usefulness.dna")
        try:
            return await judge(tiny_session(), engine), judge
        finally:
            await engine.aclose()

    first, _ = asyncio.run(go())
    calls_first = server.stats.total
    assert [lb.value for lb in first] == [2, None, 2]
    assert calls_first == 4  # two ok, one failed + its repair
    second, judge = asyncio.run(go())
    # The two ok judgments come from the journal; only the missing one is asked again.
    assert [lb.value for lb in second] == [2, None, 2]
    assert second[0].extra.get("resumed") is True
    assert server.stats.total - calls_first == 2
    assert judge.stats.reused == 2  # type: ignore[attr-defined]
