"""Scores against people's preferences: pair agreement, ties, kappa and the bootstrap over
queries, on values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

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


def test_lower_is_better_reads_the_measure_behind_gold_and_judge_names():
    # a gold: prefix (the expert labels' score) and an @judge suffix name the same measure
    assert lower_is_better("unsupported_claims")
    assert lower_is_better("gold:unsupported_claims")
    assert lower_is_better("unsupported_claims@cite2")
    assert lower_is_better("gold:unsupported_claims@cite2")
    assert not lower_is_better("gold:citation_recall")
    assert not lower_is_better("gold:sdcg_urge")
    assert not lower_is_better("gold:no_such_measure")


def _two_rows():
    # people prefer a in both; a has fewer unsupported claims (0.1 against 0.6)
    return [
        Preference(winner="a", query="t1", session_a="s1", session_b="s2", turn=1),
        Preference(winner="a", query="t2", session_a="s3", session_b="s4", turn=1),
    ]


def test_turn_and_gold_scores_are_compared_in_their_measures_direction():
    values = {"s1": 0.1, "s2": 0.6, "s3": 0.0, "s4": 0.5}
    names = ("unsupported_claims", "gold:unsupported_claims", "citation_recall")
    sessions = {sid: {name: v for name in names} for sid, v in values.items()}
    turns = {(sid, 1): {name: v for name in names} for sid, v in values.items()}
    table = agreement_table(_two_rows(), sessions, turns, n_boot=0)["overall"]
    for level in ("session", "turn"):
        for name in ("unsupported_claims", "gold:unsupported_claims"):
            # lower is better: the score picks a, as people did
            got = table[level][name]
            assert got["lower_is_better"] is True, (level, name)
            assert (got["decided"], got["agree"]) == (2, 2), (level, name)
        # higher is better: the same values pick b, against people
        recall = table[level]["citation_recall"]
        assert recall["lower_is_better"] is False
        assert (recall["decided"], recall["agree"]) == (2, 0)


def _mass_inside(n: int, p: float, lo: float, hi: float) -> float:
    return float(
        binom.cdf(np.floor(hi * n + 1e-9), n, p) - binom.cdf(np.ceil(lo * n - 1e-9) - 1, n, p)
    )


def test_the_agreement_interval_holds_95_percent_of_the_sampling_distribution():
    # 400 queries, one decided pair each, 240 agreeing: a resample's agreement is
    # Binomial(400, 0.6) / 400 exactly (scipy); the 95% percentile interval holds 95% of it
    # (plus at most its two end points' mass, about 0.006 each; a 90% interval holds 90%)
    rows = [_row(f"q{i}", "a") for i in range(400)]
    a = [1.0 if i < 240 else 0.0 for i in range(400)]
    b = [0.5] * 400
    result = pair_agreement(rows, a, b, n_boot=4000, seed=2)
    assert result["agreement"] == pytest.approx(0.6, abs=1e-12)
    lo, hi = result["ci95"]
    assert 0.94 <= _mass_inside(400, 0.6, lo, hi) <= 0.968
    # n_boot and seed are the caller's: other draws, other bounds (the same distribution)
    other = pair_agreement(rows, a, b, n_boot=4000, seed=3)["ci95"]
    assert 0.94 <= _mass_inside(400, 0.6, *other) <= 0.968
    table = agreement_table(
        [
            Preference(winner="a", query=f"q{i}", session_a=f"a{i}", session_b=f"b{i}")
            for i in range(400)
        ],
        {**{f"a{i}": {"m": a[i]} for i in range(400)}, **{f"b{i}": {"m": 0.5} for i in range(400)}},
        {},
        n_boot=4000,
        seed=2,
    )
    assert table["overall"]["session"]["m"]["ci95"] == [lo, hi]


def _spread_rows():
    """30 queries of one to three pairs, people's winners and the score's values varied:
    bootstrap bounds off any lattice, so the seed and the number of draws show."""
    import random

    rng = random.Random(4)
    rows, a, b = [], [], []
    for q in range(30):
        for _ in range(1 + q % 3):
            rows.append(_row(f"q{q}", rng.choice(["a", "b", "a", "tie"])))
            a.append(rng.random())
            b.append(rng.random())
    return rows, a, b


def test_defaults_seed_and_draws_are_passed_through():
    rows, a, b = _spread_rows()
    default = pair_agreement(rows, a, b)
    # the defaults: 1000 draws, seed 0; the same call twice, the same interval
    assert default == pair_agreement(rows, a, b, n_boot=1000, seed=0) == pair_agreement(rows, a, b)
    assert pair_agreement(rows, a, b, seed=1)["ci95"] != default["ci95"]
    assert pair_agreement(rows, a, b, n_boot=999)["ci95"] != default["ci95"]
    # one draw: an interval of one resample (a point); none: no interval
    lo, hi = pair_agreement(rows, a, b, n_boot=1)["ci95"]
    assert lo == hi
    assert pair_agreement(rows, a, b, n_boot=0)["ci95"] is None
    # the table passes seed and n_boot to both levels
    preferences = [
        Preference(winner=r.winner, query=r.query, session_a=f"a{i}", session_b=f"b{i}", turn=1)
        for i, r in enumerate(rows)
    ]
    sessions = {
        **{f"a{i}": {"m": v} for i, v in enumerate(a)},
        **{f"b{i}": {"m": v} for i, v in enumerate(b)},
    }
    turns = {(sid, 1): scores for sid, scores in sessions.items()}
    for seed, n_boot in ((0, 1000), (5, 300)):
        table = agreement_table(preferences, sessions, turns, n_boot=n_boot, seed=seed)["overall"]
        expected = pair_agreement(rows, a, b, n_boot=n_boot, seed=seed)["ci95"]
        assert table["session"]["m"]["ci95"] == expected
        assert table["turn"]["m"]["ci95"] == expected
    table = agreement_table(preferences, sessions, turns)["overall"]  # defaults 1000, 0
    assert table["turn"]["m"]["ci95"] == default["ci95"] == table["session"]["m"]["ci95"]
    none = agreement_table(preferences, sessions, turns, n_boot=0)["overall"]
    assert none["session"]["m"]["ci95"] is None and none["turn"]["m"]["ci95"] is None


def test_missing_values_edge_cases():
    # a NaN on either side is missing, as None is; lengths that differ are an error
    rows = [_row("q1", "a"), _row("q2", "a"), _row("q3", "b")]
    nan = float("nan")
    result = pair_agreement(rows, [nan, 0.9, 0.1], [0.5, nan, 0.7], n_boot=0)
    assert (result["missing"], result["pairs"], result["decided"], result["agree"]) == (2, 1, 1, 1)
    with pytest.raises(ValueError):
        pair_agreement(rows, [0.1, 0.2], [0.3, 0.4, 0.5])
    # every value missing: no kappa, no tie rate
    empty = pair_agreement(rows, [None] * 3, [None] * 3)
    assert empty["kappa"] is None and empty["tie_rate"] is None and empty["agreement"] is None
    # people saw no difference anywhere: no tie rate (nothing decided to divide by)
    ties = pair_agreement([_row("q", "tie")] * 2, [0.1, 0.2], [0.3, 0.2], n_boot=0)
    assert ties["tie_rate"] is None and ties["gold_ties"] == 2
    # the measure is the name before the first @
    assert lower_is_better("unsupported_claims@judge@2")


def test_rows_naming_a_session_the_run_lacks_are_missing_on_either_side():
    rows = [
        Preference(winner="a", query="t1", session_a="s1", session_b="gone", turn=1),
        Preference(winner="a", query="t2", session_a="gone", session_b="s2", turn=1),
        Preference(winner="a", query="t3", session_a="s1", session_b="s2", turn=1),
    ]
    sessions = {"s1": {"m": 0.9}, "s2": {"m": 0.1}}
    turns = {("s1", 1): {"t": 0.9}, ("s2", 1): {"t": 0.1}}
    table = agreement_table(rows, sessions, turns, n_boot=0)["overall"]
    assert table["unknown"] == 2
    for level, name in (("session", "m"), ("turn", "t")):
        got = table[level][name]
        assert (got["missing"], got["decided"], got["agree"]) == (2, 1, 1), level


def test_label_scores_skip_what_is_not_a_number_wherever_it_is():
    def label(item, value, session="s1", turn=1):
        return Label(JudgmentKey(session, turn, item, "j", "v1"), value)

    labels = [
        label("link:1", None),  # missing, first: the labels after it still count
        label("link:2", True),  # a yes/no is not a number to average
        label("link:3", 2),
        label("claim:4:1", 1),  # the kind is the part before the first ':'
        label("claim:4:2", 3),
    ]
    _, turns = label_scores(labels, "j")
    assert turns == {("s1", 1): {"labels:j:link": 2.0, "labels:j:claim": 2.0}}


def _exact_tails(n: int, p: float, lo: float, hi: float) -> tuple[float, float]:
    below = float(binom.cdf(np.ceil(lo * n - 1e-9) - 1, n, p))
    above = float(binom.sf(np.floor(hi * n + 1e-9), n, p))
    return below, above


def test_each_tail_of_the_agreement_interval_holds_2_5_percent():
    # 400 queries, 240 agreeing: each tail outside the interval holds 2.5% of the exact
    # Binomial(400, 0.6) / 400 sampling distribution, less at most its end point's mass
    # (about 0.006); 20,000 draws keep the percentiles' own error near 0.001
    rows = [_row(f"q{i}", "a") for i in range(400)]
    a = [1.0 if i < 240 else 0.0 for i in range(400)]
    lo, hi = pair_agreement(rows, a, [0.5] * 400, n_boot=20_000, seed=0)["ci95"]
    below, above = _exact_tails(400, 0.6, lo, hi)
    assert 0.017 <= below <= 0.027 and 0.017 <= above <= 0.027


def test_score_outcome_is_higher_is_better_by_default():
    assert score_outcome(2.0, 1.0) == "a" and score_outcome(1.0, 2.0) == "b"
    assert score_outcome(2.0, 1.0, lower_better=True) == "b"


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
