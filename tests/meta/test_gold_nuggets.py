"""The nugget kind's gold block (genir_eval/meta/gold/nuggets.py): each system's mean TREC
nugget scores over its answers, systems kept apart by the answers' ``meta.system``, and each
mean's 95% interval resampling whole queries (all the answers to a query drawn together).

Worked by hand: system x answers query q1 twice, supporting its one vital nugget (every
score 1), and query q2 four times, supporting nothing (every score 0): its mean is 2/6. With
two queries a resample is q1 twice (mean 1), q2 twice (0) or one of each (1/3), each of the
first two with probability 1/4, more than the 2.5% in each tail: the interval is exactly
[0, 1]. Resampling the six answers instead, all six drawn from q1's two has probability
(1/3)^6 < 0.2%, and five or more 1.8%: the upper bound would be 4/6."""

from __future__ import annotations

from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldContext
from genir_eval.llm.providers.base import JudgmentKey
from genir_eval.meta.gold.nuggets import system_scores_block
from genir_eval.records import Session, Turn

ALL = "nugget_recall"
STRICT = "nugget_recall(partial=0)"


def _answer(sid: str, system: str) -> Session:
    turn = Turn(1, "q", "an answer", (), ())
    return Session(sid, (turn,), meta={"system": system})


def _label(sid: str, qid: str, assignment: str) -> Label:
    key = JudgmentKey(sid, 1, "nuggets", "nuggets", "v1")
    nugget = {"id": "n1", "text": "a fact", "importance": "vital", "assignment": assignment}
    return Label(key, {"qid": qid, "nuggets": [nugget]})


def _block() -> dict:
    answers = [
        ("x1", "x", "q1", "support"),
        ("x2", "x", "q1", "support"),
        *((f"x{i}", "x", "q2", "not_support") for i in range(3, 7)),
        ("y1", "y", "q1", "support"),
        ("y2", "y", "q2", "partial_support"),
    ]
    block = system_scores_block("nuggets", GoldContext(n_boot=1000, seed=0))
    # two windows, as a run gathers them
    for part in (answers[:3], answers[3:]):
        block.add(
            [_answer(sid, system) for sid, system, _, _ in part],
            [_label(sid, qid, word) for sid, _, qid, word in part],
            None,
        )
    result = block.result()
    assert result is not None
    return result["systems"]


def test_each_system_is_scored_over_its_own_answers() -> None:
    systems = _block()
    assert sorted(systems) == ["x", "y"]
    x, y = systems["x"], systems["y"]
    assert x["answers"] == 6 and y["answers"] == 2
    assert x[ALL] == x[STRICT] == 2 / 6
    # y: support (1) and partial support (0.5, strict 0) over its two answers
    assert y[ALL] == 0.75 and y[STRICT] == 0.5


def test_the_interval_resamples_queries_not_answers() -> None:
    x = _block()["x"]
    assert x["ci95"][ALL] == [0.0, 1.0]
    assert x["ci95"][STRICT] == [0.0, 1.0]
