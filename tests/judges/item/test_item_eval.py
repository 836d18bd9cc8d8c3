"""Meta-evaluation of ITEM / RUBRIC labels (genir_eval.meta.item_eval), and the offline
twins on the real URGE sample."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

import genir_eval.judges  # noqa: F401 - registers the ITEM and RUBRIC judges
from genir_eval.ingest import load_sessions
from genir_eval.judges.base import Label, judge_sessions
from genir_eval.judges.registry import make_judge
from genir_eval.llm import EngineConfig, OfflineProvider, open_engine
from genir_eval.llm.engine import Engine
from genir_eval.llm.providers.base import JudgmentKey
from genir_eval.llm.store.journal import Journal
from genir_eval.meta.item_eval import (
    evaluate_item,
    evaluate_rubric,
    format_item_table,
    ndcg_at,
)
from genir_eval.records import Gold, Link, Session, Statement, Turn
from genir_eval.runner.judge_eval import compare_item


@pytest.mark.parametrize(
    ("ranking", "gains", "k", "expected"),
    [
        # Computed by hand: DCG = 3/log2(2) + 0 + 2/log2(4) = 4; IDCG = 3 + 2/log2(3).
        ([1, 2, 3], {1: 3, 2: 0, 3: 2}, 3, 4 / (3 + 2 / math.log2(3))),
        ([3, 1, 2], {1: 3, 2: 0, 3: 2}, 1, 2 / 3),
        ([9, 1], {1: 1}, 2, 1 / math.log2(3)),  # an unjudged item keeps its place
        ([1, 2], {1: 0, 2: 0}, 2, None),
    ],
)
def test_ndcg_at(
    ranking: list[int], gains: dict[int, float], k: int, expected: float | None
) -> None:
    got = ndcg_at(ranking, gains, k)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_ndcg_at_agrees_with_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    gains = {"a": 3, "b": 0, "c": 2, "d": 1}
    ranking = ["d", "b", "a", "c"]
    qrels = [ir_measures.Qrel("q", doc, rel) for doc, rel in gains.items()]
    run = [ir_measures.ScoredDoc("q", doc, float(10 - i)) for i, doc in enumerate(ranking)]
    theirs = ir_measures.calc_aggregate([ir_measures.nDCG @ 3], qrels, run)[ir_measures.nDCG @ 3]
    assert ndcg_at(ranking, gains, 3) == pytest.approx(theirs, abs=1e-9)


def _gold_session() -> Session:
    turn = Turn(
        1,
        "q",
        "r",
        statements=(Statement("s", (1, 2, 3, 4)),),
        links=tuple(Link(i, f"u{i}", f"t{i}") for i in (1, 2, 3, 4)),
    )
    empty = Turn(2, "q2", "r2")
    gold = Gold(link_usefulness=({1: 3, 2: 3, 3: 1}, {}), query_satisfaction=(4.0, 2.0))
    return Session("s", (turn, empty), gold=gold)


def _item_labels(final: list[int], first: list[int], ranking: list[int] | None) -> list[Label]:
    key = JudgmentKey("s", 1, "item", "item-as", "v")
    trace = {
        "stop": "set_unchanged",
        "candidates": [1, 2, 3, 4],
        "iterations": [
            {"iteration": 1, "answer": "a", "ranking": None, "selected": first},
            {"iteration": 2, "answer": "b", "ranking": ranking, "selected": final},
        ],
        "calls": 4,
        "fresh_calls": 4,
        "input_tokens": 100,
        "output_tokens": 10,
    }
    return [Label(key, final, extra=trace)]


def test_evaluate_item_counts_labelled_links_only() -> None:
    # Link 4 has no gold label: selecting it is neither a hit nor a false positive.
    report = evaluate_item([_gold_session()], _item_labels([1, 4], [1, 3], [1, 4, 3, 2]))
    # Computed by hand: final {1} vs useful {1, 2}: P 1, R 0.5, F1 2/3.
    assert report["final"]["precision"] == pytest.approx(1.0, abs=1e-12)
    assert report["final"]["recall"] == pytest.approx(0.5, abs=1e-12)
    assert report["final"]["f1"] == pytest.approx(2 / 3, abs=1e-12)
    # First iteration {1, 3}: P 0.5, R 0.5.
    assert report["first_iteration"]["f1"] == pytest.approx(0.5, abs=1e-12)
    assert report["turns"] == 1 and report["turns_changed_by_iterating"] == 1
    assert report["mean_iterations"] == 2 and report["calls"] == 4
    assert report["gold_useful_share"] == pytest.approx(2 / 3, abs=1e-12)
    # nDCG@5 of [1, 4, 3, 2]: (3 + 0 + 1/2 + 2/log2(5)) / (3 + 3/log2(3) + 1/2).
    expected = (3 + 0.5 + 3 / math.log2(5)) / (3 + 3 / math.log2(3) + 0.5)
    assert report["ndcg@5"] == pytest.approx(expected, abs=1e-12)
    # With gold >= 2 nothing changes here (no label 2), with >= 1 link 3 becomes useful.
    loose = evaluate_item([_gold_session()], _item_labels([1, 4], [1, 3], None), gold_min=1)
    assert loose["final"]["recall"] == pytest.approx(1 / 3, abs=1e-12)


def test_evaluate_item_reports_missing_turns_apart() -> None:
    key = JudgmentKey("s", 1, "item", "item-as", "v")
    missing = Label(key, None, missing_reason="x", extra={"calls": 2})
    report = evaluate_item([_gold_session()], [missing])
    assert report["turns_missing"] == 1 and report["final"]["f1"] is None
    assert report["calls"] == 2


def test_evaluate_rubric_binary_and_ndcg() -> None:
    def link(cid: int, grade: int, relevant: bool) -> Label:
        return Label(
            JudgmentKey("s", 1, f"link:{cid}", "rubric", "v"), grade, extra={"relevant": relevant}
        )

    labels = [link(1, 5, True), link(2, 2, False), link(3, 4, True)]
    labels.append(Label(JudgmentKey("s", 1, "coverage", "rubric", "v"), 0.5))
    report = evaluate_rubric([_gold_session()], labels)
    # Computed by hand: relevant {1, 3} vs useful {1, 2}: P 0.5, R 0.5.
    assert report["binary"]["precision"] == pytest.approx(0.5, abs=1e-12)
    assert report["binary"]["recall"] == pytest.approx(0.5, abs=1e-12)
    # By grade: 1 (3), 3 (1), 2 (3), 4 (unjudged, 0).
    expected = (3 + 1 / math.log2(3) + 3 / 2) / (3 + 3 / math.log2(3) + 1 / 2)
    assert report["ndcg@5"] == pytest.approx(expected, abs=1e-12)
    assert report["grade_vs_gold"]["n"] == 3


# --- the offline twins on the real URGE sample ----------------------------------------------


def _offline_engine(**storage: Any) -> Engine:
    return open_engine(EngineConfig(), OfflineProvider(), quiet=True, **storage)


def test_offline_item_on_the_urge_sample(urge_sample_path: Path) -> None:
    sessions = list(load_sessions(urge_sample_path).sessions)

    async def go() -> dict[str, dict[str, Any]]:
        engine = _offline_engine()
        try:
            return await compare_item(sessions, engine, ("item-vanilla", "item-as", "item-ar"))
        finally:
            await engine.aclose()

    reports = asyncio.run(go())
    for name, report in reports.items():
        assert report["turns"] > 0 and report["turns_missing"] == 0, name
        final = report["final"]
        assert 0.0 <= final["precision"] <= 1.0 and 0.0 <= final["recall"] <= 1.0
        assert 0.0 < report["ndcg@5"] <= 1.0
    assert reports["item-vanilla"]["mean_iterations"] == 1.0
    assert 1.0 <= reports["item-as"]["mean_iterations"] <= 3.0
    # item-ar keeps the top 5 of turns with few links: recall at least the threshold loop's.
    assert reports["item-ar"]["final"]["recall"] >= reports["item-as"]["final"]["recall"]
    table = format_item_table(reports)
    assert table.splitlines()[0].split()[:4] == ["judge", "P", "R", "F1"]
    assert len(table.splitlines()) == 4


def test_item_resumes_from_the_journal(tmp_path: Path) -> None:
    session = _gold_session()

    async def run_once() -> list[Label]:
        engine = _offline_engine(journal=Journal(tmp_path / "journal.sqlite"))
        try:
            return await judge_sessions(make_judge("item-as"), [session], engine)
        finally:
            await engine.aclose()

    first = asyncio.run(run_once())
    second = asyncio.run(run_once())
    assert [lb.value for lb in first] == [lb.value for lb in second]
    turn = next(lb for lb in second if lb.key.item == "item")
    assert turn.extra["calls"] > 0 and turn.extra["fresh_calls"] == 0


def test_offline_rubric_on_the_urge_sample(urge_sample_path: Path) -> None:
    sessions = list(load_sessions(urge_sample_path).sessions)[:4]

    async def go() -> list[Label]:
        engine = _offline_engine()
        try:
            return await judge_sessions(make_judge("rubric", n=5), sessions, engine)
        finally:
            await engine.aclose()

    labels = asyncio.run(go())
    assert labels and all(lb.value is not None for lb in labels)
    report = evaluate_rubric(sessions, labels)
    assert report["turns"] > 0 and report["links_missing"] == 0
    assert report["grade_vs_gold"]["n"] > 0
    assert all(0 <= lb.value <= 5 for lb in labels if lb.key.item.startswith("link:"))


def test_figures_gathered_window_by_window_equal_those_of_the_whole_run(
    urge_sample_path: Path,
) -> None:
    # a run gathers ITEM and RUBRIC figures window by window (sums and columns, not the
    # sessions): windows of 1 and 3 sessions give exactly what evaluate_* gives at once
    from genir_eval.meta.item_eval import ItemFigures, RubricFigures

    sessions = list(load_sessions(urge_sample_path).sessions)[:6]

    async def go(name: str, **options: Any) -> list[Label]:
        engine = _offline_engine()
        try:
            return await judge_sessions(make_judge(name, **options), sessions, engine)
        finally:
            await engine.aclose()

    cases = [
        (go("item-as"), ItemFigures, evaluate_item),
        (go("rubric", n=5), RubricFigures, evaluate_rubric),
    ]
    for labels_of, figures_class, evaluate in cases:
        labels = asyncio.run(labels_of)
        whole = evaluate(sessions, labels)
        assert whole["turns"] > 0
        for size in (1, 3):
            figures = figures_class()
            for at in range(0, len(sessions), size):
                window = sessions[at : at + size]
                ids = {s.session_id for s in window}
                figures.add(window, [lb for lb in labels if lb.key.session_id in ids])
            assert figures.result() == whole, (figures_class.__name__, size)


def _two_turn_session() -> Session:
    """Turn 1: links 1-4, gold useful {1, 2, 3} (3 = very useful), link 4 useless (0).
    Turn 2: links 5-6, gold useful {5}, link 6 useless (1)."""
    first = Turn(
        1,
        "q1",
        "r1",
        statements=(Statement("s", (1, 2, 3, 4)),),
        links=tuple(Link(i, f"u{i}", f"t{i}") for i in (1, 2, 3, 4)),
    )
    second = Turn(
        2,
        "q2",
        "r2",
        statements=(Statement("s", (5, 6)),),
        links=tuple(Link(i, f"u{i}", f"t{i}") for i in (5, 6)),
    )
    gold = Gold(
        link_usefulness=({1: 3, 2: 3, 3: 3, 4: 0}, {5: 3, 6: 1}), query_satisfaction=(4.0, 2.0)
    )
    return Session("m", (first, second), gold=gold)


def test_evaluate_item_pools_counts_over_turns_by_hand() -> None:
    """Micro figures pool the counts of every turn; macro ones average the turns' figures.
    Turn 1 selects {1, 4}: tp 1 of 2 selected, 1 of 3 useful (P 1/2, R 1/3, F1 2/5).
    Turn 2 selects {5}: tp 1 of 1 selected, 1 of 1 useful (P 1, R 1, F1 1).
    Pooled: tp 2, selected 3, useful 4: P 2/3, R 1/2, F1 2 (2/3)(1/2) / (7/6) = 4/7.
    Macro: P (1/2 + 1)/2 = 3/4, R (1/3 + 1)/2 = 2/3, F1 (2/5 + 1)/2 = 7/10."""
    labels = [
        Label(JudgmentKey("m", 1, "item", "item-ar", "v"), [1, 4], extra={}),
        Label(JudgmentKey("m", 2, "item", "item-ar", "v"), [5], extra={}),
    ]
    final = evaluate_item([_two_turn_session()], labels)["final"]
    assert final["precision"] == pytest.approx(2 / 3, abs=1e-12)
    assert final["recall"] == pytest.approx(1 / 2, abs=1e-12)
    assert final["f1"] == pytest.approx(4 / 7, abs=1e-12)
    assert final["macro_precision"] == pytest.approx(3 / 4, abs=1e-12)
    assert final["macro_recall"] == pytest.approx(2 / 3, abs=1e-12)
    assert final["macro_f1"] == pytest.approx(7 / 10, abs=1e-12)
