"""Scores against people's preferences: pair agreement, ties, kappa and the bootstrap over
queries, on values worked out by hand."""

from __future__ import annotations

import pytest

from genir_eval.ingest.preferences import Preference
from genir_eval.judges.base import Label
from genir_eval.llm.providers.base import JudgmentKey
from genir_eval.meta.preferences import (
    agreement_table,
    label_scores,
    lower_is_better,
    pair_agreement,
    score_outcome,
)


def _row(query: str, winner: str, a: str = "x", b: str = "y") -> Preference:
    return Preference(winner=winner, query=query, session_a=a, session_b=b)


# (query, people's winner, score of a, score of b)
ROWS = [
    ("q1", "a", 0.9, 0.1),  # score says a: agrees
    ("q1", "b", 0.8, 0.2),  # score says a: disagrees
    ("q2", "a", 0.5, 0.5),  # score tie: counted apart
    ("q2", "tie", 0.3, 0.6),  # people's tie: not decided
    ("q3", "b", None, 0.4),  # missing
    ("q3", "b", 0.1, 0.7),  # score says b: agrees
]


def _agreement(**options):
    rows = [_row(q, w) for q, w, _, _ in ROWS]
    return pair_agreement(rows, [r[2] for r in ROWS], [r[3] for r in ROWS], **options)


def test_hand_worked_agreement_ties_and_kappa():
    result = _agreement(n_boot=0)
    # by hand: decided (people a/b, score a/b) = rows 1, 2, 6; rows 1 and 6 agree
    assert result["pairs"] == 5 and result["missing"] == 1
    assert result["decided"] == 3 and result["agree"] == 2
    assert result["agreement"] == pytest.approx(2 / 3, abs=1e-12)
    assert result["score_ties"] == 1 and result["gold_ties"] == 1
    assert result["tie_rate"] == pytest.approx(1 / 4, abs=1e-12)  # of 4 pairs people decided
    # kappa on (a,a) (b,a) (a,tie) (tie,b) (b,b): p_o = 2/5; both marginals (.4, .2, .4),
    # p_e = .16 + .04 + .16 = .36; kappa = (.4 - .36) / (1 - .36) = .0625
    assert result["kappa"] == pytest.approx(0.0625, abs=1e-12)
    assert result["ci95"] is None and result["queries"] == 3


def test_lower_is_better_is_compared_the_other_way_round():
    result = _agreement(n_boot=0, lower_better=True)
    # rows 1 and 6 now disagree, row 2 agrees
    assert (result["decided"], result["agree"]) == (3, 1)
    assert result["lower_is_better"] is True
    assert lower_is_better("unsupported_claims")
    assert not lower_is_better("citation_precision(partial=0.5)")
    assert not lower_is_better("satisfaction.geval")
    assert score_outcome(1.0, 2.0, lower_better=True) == "a"
    assert score_outcome(2.0, 2.0) == "tie"


def test_the_bootstrap_resamples_queries():
    # q1 gives 1 of 2, q3 1 of 1, q2 no decided pair: a resample's agreement is 1/2 (q1
    # only), 1 (q3 only) or between; with three queries drawn, each extreme has chance
    # (2/3)^3 - (1/3)^3 = 7/27 > 2.5%, so the percentile interval is exactly [0.5, 1.0]
    result = _agreement(n_boot=2000, seed=1)
    assert result["ci95"] == pytest.approx([0.5, 1.0], abs=1e-12)


def test_no_decided_pair_gives_no_agreement():
    rows = [_row("q", "tie"), _row("q", "a")]
    result = pair_agreement(rows, [1.0, 2.0], [2.0, 2.0])
    assert result["decided"] == 0 and result["agreement"] is None and result["ci95"] is None
    assert result["score_ties"] == 1


def test_agreement_table_by_criterion_and_level():
    preferences = [
        Preference(
            winner="a",
            query="t1",
            session_a="s1",
            session_b="s2",
            turn=1,
            criterion="quality_overall",
        ),
        Preference(
            winner="b",
            query="t2",
            session_a="s3",
            session_b="s4",
            turn=1,
            criterion="quality_overall",
        ),
        Preference(
            winner="a", query="t2", session_a="s3", session_b="s9", criterion="quality_overall"
        ),
        Preference(winner="b", query="t1", session_a="s1", session_b="s2"),
        # an arena row names no sessions of one run: not compared here
        Preference(winner="a", query="t1", session="t1", turn=1, system_a="x", system_b="y"),
    ]
    sessions = {"s1": {"m": 0.9}, "s2": {"m": 0.1}, "s3": {"m": 0.2}, "s4": {"m": 0.8}}
    turns = {
        ("s1", 1): {"t": 1.0},
        ("s2", 1): {"t": 0.0},
        ("s3", 1): {"t": 1.0},
        ("s4", 1): {"t": 1.0},
    }
    table = agreement_table(preferences, sessions, turns, n_boot=0)
    assert sorted(table) == ["overall", "quality_overall"]
    overall = table["quality_overall"]
    assert (overall["rows"], overall["unknown"]) == (3, 1)
    assert overall["session"]["m"]["agree"] == 2 and overall["session"]["m"]["missing"] == 1
    # turn scores: the rows naming a turn only; s3/s4 tie
    assert overall["turn"]["t"]["decided"] == 1 and overall["turn"]["t"]["score_ties"] == 1
    assert table["overall"]["session"]["m"]["agree"] == 0
    assert table["overall"]["turn"] == {}


def test_label_scores_average_each_item_kind():
    def label(session, turn, item, value):
        return Label(JudgmentKey(session, turn, item, "j", "v1"), value)

    labels = [
        label("s1", 1, "link:1", 3),
        label("s1", 1, "link:2", 1),
        label("s1", None, "session", 7),
        label("s1", 2, "link:1", None),  # missing: left out
        label("s2", 1, "spans", ["a"]),  # not a number: left out
    ]
    sessions, turns = label_scores(labels, "dna")
    assert turns == {("s1", 1): {"labels:dna:link": 2.0}}
    assert sessions == {"s1": {"labels:dna:session": 7.0}}
    single, by_turn = label_scores(labels[:2], "dna")
    assert single == {} and by_turn == {("s1", 1): {"labels:dna": 2.0}}


def test_label_scores_read_a_kind_s_turn_score() -> None:
    """A label whose value is not a number (a nugget judge's nuggets with their assignment)
    becomes a score through the reader given; without one it is left out."""
    from genir_eval.judges.base import Label
    from genir_eval.judges.nuggets.kind import KIND
    from genir_eval.llm.providers.base import JudgmentKey

    value = {
        "nuggets": [
            {"importance": "vital", "assignment": "support"},
            {"importance": "okay", "assignment": "partial_support"},
        ]
    }
    label = Label(JudgmentKey("s1", 1, "nuggets", "nuggets", "v"), value)
    assert label_scores([label], "nuggets") == ({}, {})
    _, turns = label_scores([label], "nuggets", value=lambda v: KIND.turn_value(v, 0))
    assert turns == {("s1", 1): {"labels:nuggets": 0.75}}  # (1 + 0.5) / 2, by hand
