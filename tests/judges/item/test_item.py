from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from genir_eval.errors import ConfigError
from genir_eval.judges.base import Label
from genir_eval.judges.item.candidates import Candidate, candidates_for_turn
from genir_eval.judges.item.judge import ItemJudge
from genir_eval.judges.item.loop import Iteration, StopRule, run_loop, stop_reason
from genir_eval.judges.item.replies import parse_pointwise, ranking_parser, useful_parser
from genir_eval.judges.parsing import ReplyError
from genir_eval.judges.registry import make_judge
from genir_eval.llm import EngineConfig, offline_engine, open_engine
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.records import Link, Session, Statement, Turn
from genir_eval.testing.fake_llm_server import FakeLLMServer, FakeRequest


def _session() -> Session:
    """A tiny English session: link 1 is on the query's topic, 2 half, 3 off-topic."""
    turn = Turn(
        index=1,
        query="how to bake sourdough bread at home",
        response_text="...",
        statements=(
            Statement("Sourdough bread needs a starter of flour and water.", (1,)),
            Statement("Bake the bread at home in a hot Dutch oven.", (1, 2)),
            Statement("Stock prices fell on Monday.", (3,)),
        ),
        links=(
            Link(1, "https://example.org/sourdough", "Sourdough bread baking guide"),
            Link(2, "https://example.org/oven", "Dutch oven tips for home bakers"),
            Link(3, "https://example.org/stocks", "Market report"),
        ),
    )
    return Session("s1", (turn,), language="en", intent="bake sourdough")


# --- candidates, parsers -----------------------------------------------------------------


def test_candidates_follow_first_citation_order_with_citing_statements() -> None:
    turn = Turn(
        1,
        "q",
        "r",
        statements=(Statement("a", (2,)), Statement("b", (1, 2)), Statement("a", (2,))),
        links=(Link(1, "u1", "t1"), Link(2, "u2", "t2"), Link(5, "u5", "t5")),
    )
    cands = candidates_for_turn(turn)
    assert [c.id for c in cands] == [2, 1, 5]  # 5 is listed but never cited: last
    assert cands[0].statements == ("a", "b")  # a repeated statement is shown once
    assert cands[2].statements == ()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"useful": [3, 1]}', [1, 3]),  # sorted back into citation order
        ('```json\n{"useful": ["[2]", 2]}\n```', [2]),  # "[2]" read as 2, duplicates dropped
        ("[]", []),  # an empty set is a valid judgment
    ],
)
def test_useful_parser_accepts(reply: str, expected: list[int]) -> None:
    assert useful_parser([1, 2, 3])(reply) == expected


@pytest.mark.parametrize(
    "reply",
    ['{"useful": [4]}', '{"useful": "1, 2"}', "no json here", '{"other": [1]}', '{"useful": [1'],
)
def test_useful_parser_rejects(reply: str) -> None:
    with pytest.raises(ReplyError):
        useful_parser([1, 2, 3])(reply)


def test_ranking_parser_appends_left_out_ids_and_rejects_unknown() -> None:
    parse = ranking_parser([1, 2, 3])
    assert parse('{"ranking": [3, 1]}') == [3, 1, 2]
    with pytest.raises(ReplyError):
        parse('{"ranking": [9, 1]}')
    with pytest.raises(ReplyError):
        parse('{"ranking": []}')


def test_pointwise_parser() -> None:
    assert parse_pointwise('{"useful": true}') is True
    assert parse_pointwise('{"useful": "no"}') is False
    with pytest.raises(ReplyError):
        parse_pointwise('{"useful": "maybe"}')


# --- stop rules ----------------------------------------------------------------------------


def _it(index: int, selected: Sequence[int], answer: str = "a") -> Iteration:
    return Iteration(index, answer, None, tuple(selected))


@pytest.mark.parametrize(
    ("rule", "iterations", "expected"),
    [
        # Computed by hand from the stop rules.
        (StopRule(3), [_it(1, [1, 2, 3])], "set_unchanged"),  # all selected: same as start
        (StopRule(3), [_it(1, [1])], None),
        (StopRule(3), [_it(1, [1]), _it(2, [1])], "set_unchanged"),
        (StopRule(3), [_it(1, [1]), _it(2, [2])], None),
        (StopRule(2), [_it(1, [1]), _it(2, [2])], "max_iterations"),
        (StopRule(1), [_it(1, [1])], "max_iterations"),
        (StopRule(3, 0.5), [_it(1, [1], "a b c d"), _it(2, [2], "a b c e")], "rouge_l"),
        (StopRule(3, 0.8), [_it(1, [1], "a b c d"), _it(2, [2], "a b c e")], None),
    ],
)
def test_stop_reason(rule: StopRule, iterations: list[Iteration], expected: str | None) -> None:
    assert stop_reason(rule, [1, 2, 3], iterations) == expected


def test_stop_rule_validates() -> None:
    with pytest.raises(ConfigError):
        StopRule(0)
    with pytest.raises(ConfigError):
        StopRule(3, 1.5)


class _Steps:
    """Scripted loop steps recording the call sequence (no engine: the loop alone)."""

    def __init__(self, sets: list[list[int]], rankings: list[list[int]] | None = None) -> None:
        self.sets = iter(sets)
        self.rankings = iter(rankings or [])
        self.calls: list[str] = []
        self.answered_from: list[list[int]] = []

    async def answer(self, index: int, selected: Sequence[Candidate]) -> str | None:
        self.calls.append(f"answer{index}")
        self.answered_from.append([c.id for c in selected])
        return f"answer {index}"

    async def judge(self, index: int, answer: str, shown: Sequence[Candidate]) -> list[int] | None:
        self.calls.append(f"judge{index}:{[c.id for c in shown]}")
        return next(self.sets)

    async def rank_relevance(self, index: int, answer: str, shown: Sequence[Candidate]) -> Any:
        self.calls.append(f"rank_relevance{index}")
        return next(self.rankings)

    async def rank_utility(self, index: int, answer: str, shown: Sequence[Candidate]) -> Any:
        self.calls.append(f"rank_utility{index}")
        return next(self.rankings)


_CANDS = (Candidate(1, "t1", "u1"), Candidate(2, "t2", "u2"), Candidate(3, "t3", "u3"))


def _loop(variant: str, steps: _Steps, rule: StopRule | None = None, k: int = 5) -> Any:
    return asyncio.run(
        run_loop(
            variant,
            _CANDS,
            rule or StopRule(3),
            answer=steps.answer,
            judge=steps.judge,
            rank_relevance=steps.rank_relevance,
            rank_utility=steps.rank_utility,
            k=k,
        )
    )


def test_item_as_answers_from_the_previous_set_until_it_stops_changing() -> None:
    steps = _Steps([[1, 2], [1], [1]])
    result = _loop("item-as", steps)
    assert steps.calls == [
        "answer1", "judge1:[1, 2, 3]", "answer2", "judge2:[1, 2, 3]", "answer3", "judge3:[1, 2, 3]",
    ]  # fmt: skip
    assert steps.answered_from == [[1, 2, 3], [1, 2], [1]]
    assert result.stop == "set_unchanged"
    assert result.final.selected == (1,)


def test_item_as_stops_at_m() -> None:
    steps = _Steps([[1, 2], [1], [2], [3]])
    result = _loop("item-as", steps, StopRule(3))
    assert result.stop == "max_iterations" and len(result.iterations) == 3
    assert result.final.selected == (2,)


def test_item_ars_judges_in_relevance_order() -> None:
    steps = _Steps([[1, 3], [1, 3]], rankings=[[3, 1, 2], [3, 1, 2]])
    result = _loop("item-ars", steps)
    assert steps.calls == [
        "answer1", "rank_relevance1", "judge1:[3, 1, 2]",
        "answer2", "rank_relevance2", "judge2:[3, 1, 2]",
    ]  # fmt: skip
    assert result.final.selected == (3, 1)  # kept in ranking order
    assert result.final.ranking == (3, 1, 2)


def test_item_ar_takes_the_top_k_of_the_utility_ranking() -> None:
    steps = _Steps([], rankings=[[2, 3, 1], [2, 3, 1]])
    result = _loop("item-ar", steps, k=2)
    assert steps.calls == ["answer1", "rank_utility1", "answer2", "rank_utility2"]
    assert steps.answered_from == [[1, 2, 3], [2, 3]]
    assert result.final.selected == (2, 3) and result.stop == "set_unchanged"


def test_a_missing_step_keeps_the_completed_iterations() -> None:
    steps = _Steps([[1], None])  # type: ignore[list-item]
    result = _loop("item-as", steps)
    assert result.stop == "missing"
    assert [it.selected for it in result.iterations] == [(1,)]


def test_unknown_variant_and_options_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        _loop("item-x", _Steps([[1]]))
    with pytest.raises(ConfigError):
        ItemJudge("item-as", colour="blue")
    with pytest.raises(ConfigError):
        ItemJudge("item-as", judgment="pairwise")


# --- through the engine and the local fake server ------------------------------------------

_MARKERS = (
    ("Your previous reply could not be used", "repair"),
    ("First write a concise answer", "joint"),
    ("Write a concise answer to the query", "answer"),
    ("State concisely what information", "answer"),
    ("Does this page have utility", "pointwise"),
    ("most to least relevant", "rank_relevance"),
    ("most to least useful", "rank_utility"),
    ("A reference answer", "judge"),
    ("List the citation numbers", "vanilla"),
)


class Script:
    """Scripted replies by step; each step's list is consumed in order, the last repeats."""

    def __init__(self, replies: Mapping[str, Sequence[str | Callable[[str], str]]]) -> None:
        self.replies = {k: list(v) for k, v in replies.items()}
        self.used: dict[str, int] = {}
        self.steps: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, request: FakeRequest) -> str:
        text = request.last_user_text
        step = next(name for marker, name in _MARKERS if marker in text)
        with self.lock:
            self.steps.append(step)
            n = self.used.get(step, 0)
            self.used[step] = n + 1
        options = self.replies[step]
        reply = options[min(n, len(options) - 1)]
        return reply(text) if callable(reply) else reply


def _judge_over_server(server: FakeLLMServer, name: str, **options: Any) -> list[Label]:
    async def go() -> list[Label]:
        provider = OpenAIProvider(
            model="m", base_url=server.openai_base_url, api_key=server.api_key
        )
        engine = open_engine(EngineConfig(max_attempts=1), provider, quiet=True)
        try:
            return await make_judge(name, **options)(_session(), engine)
        finally:
            await engine.aclose()

    return asyncio.run(go())


def _turn(labels: list[Label]) -> Label:
    return next(lb for lb in labels if lb.key.item == "item")


def _links(labels: list[Label]) -> dict[str, Any]:
    return {lb.key.item: lb.value for lb in labels if lb.key.item.startswith("link:")}


def test_item_as_call_sequence_and_trace(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script(
        {
            "answer": ['{"answer": "Use a starter and a hot oven."}'],
            "judge": ['{"useful": [1, 2]}', '{"useful": [1, 2]}'],
        }
    )
    labels = _judge_over_server(fake_server(script), "item-as")
    assert script.steps == ["answer", "judge", "answer", "judge"]
    turn = _turn(labels)
    assert turn.value == [1, 2]
    assert turn.extra["stop"] == "set_unchanged"
    assert [it["selected"] for it in turn.extra["iterations"]] == [[1, 2], [1, 2]]
    assert turn.extra["iterations"][0]["answer"] == "Use a starter and a hot oven."
    assert turn.extra["calls"] == 4 and turn.extra["input_tokens"] > 0
    assert _links(labels) == {"link:1": 1, "link:2": 1, "link:3": 0}


def test_item_ars_call_sequence(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script(
        {
            "answer": ['{"answer": "x"}'],
            "rank_relevance": ['{"ranking": [2, 1, 3]}'],
            "judge": ['{"useful": [1]}', '{"useful": [1]}'],
        }
    )
    labels = _judge_over_server(fake_server(script), "item-ars")
    assert script.steps == ["answer", "rank_relevance", "judge"] * 2
    link2 = next(lb for lb in labels if lb.key.item == "link:2")
    assert link2.value == 0 and link2.extra["rank"] == 1
    assert link2.extra["graded"] == pytest.approx(1.0, abs=1e-12)  # rank 1 of 3


def test_item_ar_call_sequence_top_k(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script({"answer": ['{"answer": "x"}'], "rank_utility": ['{"ranking": [3, 1, 2]}']})
    labels = _judge_over_server(fake_server(script), "item-ar", k=1, max_iterations=2)
    # Iteration 1 selects {3}; iteration 2 answers from {3} and selects {3}: unchanged.
    assert script.steps == ["answer", "rank_utility", "answer", "rank_utility"]
    assert _links(labels) == {"link:1": 0, "link:2": 0, "link:3": 1}
    assert _turn(labels).extra["iterations"][1]["ranking"] == [3, 1, 2]


def test_rouge_stop_through_the_engine(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script(
        {
            "answer": [
                '{"answer": "bake with a starter"}',
                '{"answer": "bake with a starter now"}',
            ],
            "judge": ['{"useful": [1, 2]}', '{"useful": [1]}', '{"useful": [2]}'],
        }
    )
    labels = _judge_over_server(fake_server(script), "item-as", rouge_threshold=0.8)
    turn = _turn(labels)
    assert turn.extra["stop"] == "rouge_l" and len(turn.extra["iterations"]) == 2
    assert script.steps == ["answer", "judge"] * 2


def test_m_reached_through_the_engine(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script(
        {
            "answer": ['{"answer": "a"}'],
            "judge": ['{"useful": [1]}', '{"useful": [2]}', '{"useful": [1]}', '{"useful": [3]}'],
        }
    )
    labels = _judge_over_server(fake_server(script), "item-as", max_iterations=3)
    turn = _turn(labels)
    assert turn.extra["stop"] == "max_iterations"
    assert [it["selected"] for it in turn.extra["iterations"]] == [[1], [2], [1]]
    assert script.steps.count("judge") == 3


def test_malformed_reply_is_repaired_once(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script(
        {
            "answer": ['{"answer": "a"}'],
            "judge": ['{"useful": [7]}'],  # unknown citation number
            "repair": ['{"useful": [1, 2, 3]}'],
        }
    )
    labels = _judge_over_server(fake_server(script), "item-as")
    assert script.steps == ["answer", "judge", "repair"]
    assert _turn(labels).extra["stop"] == "set_unchanged"
    assert set(_links(labels).values()) == {1}


def test_unrepairable_reply_leaves_labels_missing_with_reason(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    script = Script({"answer": ["I think page one is best."], "repair": ["still prose"]})
    labels = _judge_over_server(fake_server(script), "item-as")
    assert script.steps == ["answer", "repair"]
    assert all(lb.value is None for lb in labels)
    assert all("unparseable after repair" in (lb.missing_reason or "") for lb in labels)
    assert _turn(labels).extra["iterations"] == []


def test_vanilla_joint_and_pointwise_calls(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    script = Script(
        {
            "vanilla": ['{"useful": [1]}'],
            "joint": ['{"answer": "a", "useful": [1, 2]}'],
            "answer": ['{"answer": "a"}'],
            "pointwise": [lambda text: json.dumps({"useful": "Market report" not in text})],
        }
    )
    server = fake_server(script)
    assert _links(_judge_over_server(server, "item-vanilla")) == {
        "link:1": 1, "link:2": 0, "link:3": 0,
    }  # fmt: skip
    assert _links(_judge_over_server(server, "item-joint"))["link:2"] == 1
    labels = _judge_over_server(server, "item-as", judgment="pointwise", max_iterations=1)
    assert _links(labels) == {"link:1": 1, "link:2": 1, "link:3": 0}
    assert script.steps == ["vanilla", "joint", "answer"] + ["pointwise"] * 3


def test_ksample_majority_vote(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    replies = ['{"useful": [1, 2]}', '{"useful": [1]}', '{"useful": [1, 3]}', '{"useful": [2]}']
    labels = _judge_over_server(
        fake_server(Script({"vanilla": replies})), "item-ksample", samples=4
    )
    # Votes: 1 -> 3 of 4, 2 -> 2 of 4 (not a majority), 3 -> 1 of 4.
    assert _links(labels) == {"link:1": 1, "link:2": 0, "link:3": 0}
    turn = _turn(labels)
    assert turn.extra["stop"] == "majority_of_4" and turn.extra["calls"] == 4
    assert turn.extra["iterations"][0]["ranking"] == [1, 2, 3]


def test_ksample_shuffles_are_seeded(fake_server: Callable[[Script], FakeLLMServer]) -> None:
    orders: list[str] = []

    def record(text: str) -> str:
        orders.append("".join(ch for ch in text if ch in "[123]"))
        return '{"useful": [1]}'

    server = fake_server(Script({"vanilla": [record]}))
    _judge_over_server(server, "item-ksample", samples=3, seed=7)
    first = sorted(orders)
    orders.clear()
    _judge_over_server(server, "item-ksample", samples=3, seed=7)
    assert sorted(orders) == first and len(first) == 3


# --- the offline twin ---------------------------------------------------------------------


def _offline(name: str, session: Session, **options: Any) -> list[Label]:
    async def go() -> list[Label]:
        engine = offline_engine(quiet=True)
        try:
            return await make_judge(name, **options)(session, engine)
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("name", ["item-as", "item-ars", "item-ar", "item-vanilla", "item-joint"])
def test_offline_twin_keeps_the_on_topic_link(name: str) -> None:
    labels = _offline(name, _session(), k=2)
    links = _links(labels)
    assert links["link:1"] == 1  # on the query's topic
    assert links["link:3"] == 0  # off-topic
    turn = _turn(labels)
    assert turn.extra["iterations"] and turn.extra["stop"] in {
        "set_unchanged", "max_iterations", "single_shot", "rouge_l",
    }  # fmt: skip


def test_offline_ranking_puts_the_off_topic_link_last() -> None:
    turn = _turn(_offline("item-ar", _session(), k=2))
    assert turn.extra["iterations"][-1]["ranking"][-1] == 3


def test_offline_implicit_answer_states_the_query_terms() -> None:
    turn = _turn(_offline("item-as", _session(), answer="implicit", max_iterations=1))
    assert "sourdough" in turn.extra["iterations"][0]["answer"]
