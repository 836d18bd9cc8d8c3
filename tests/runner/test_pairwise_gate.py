"""The pairwise gate's statistics (runner/pairwise_gate.py), on values worked out by hand
or from the exact binomial distribution (scipy), not from the module.

A candidate's win rate against the baseline is the mean of 1 (win), 0.5 (tie) and 0
(loss) over their judged pairs; its interval is the percentile bootstrap over queries at
level 1 - alpha; the gate fails when any candidate's whole interval lies below the
threshold, and a candidate with no judged pair fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from genir_eval.judges.pairwise.ranking import Outcomes
from genir_eval.runner.pairwise_gate import gate_against, gate_markdown, gate_text


def _outcomes(systems: tuple[str, ...], pairs: list[tuple[str, str, float, int]]) -> Outcomes:
    """``(a, b, result, query)`` rows: result 1 a won, 0 b won, 0.5 a tie."""
    index = {name: i for i, name in enumerate(systems)}
    return Outcomes(
        systems,
        np.array([index[a] for a, _, _, _ in pairs], dtype=np.int64),
        np.array([index[b] for _, b, _, _ in pairs], dtype=np.int64),
        np.array([r for _, _, r, _ in pairs], dtype=float),
        np.array([q for _, _, _, q in pairs], dtype=np.int64),
        np.zeros((len(pairs), 3)),
    )


def _one_pair_per_query(wins: int, losses: int) -> Outcomes:
    """``cand`` against ``base``, one pair a query: ``wins`` won, then ``losses`` lost."""
    results = [1.0] * wins + [0.0] * losses
    return _outcomes(("base", "cand"), [("cand", "base", r, q) for q, r in enumerate(results)])


def _binomial_mass_inside(n: int, p: float, lo: float, hi: float) -> float:
    """The exact probability that a resample's win rate lies in ``[lo, hi]``: with one
    decided pair a query, a resample of the n queries holds Binomial(n, p) wins."""
    return float(
        binom.cdf(np.floor(hi * n + 1e-9), n, p) - binom.cdf(np.ceil(lo * n - 1e-9) - 1, n, p)
    )


@pytest.mark.parametrize(("alpha", "low", "high"), [(0.05, 0.94, 0.968), (0.2, 0.79, 0.83)])
def test_the_interval_holds_1_minus_alpha_of_the_sampling_distribution(
    alpha: float, low: float, high: float
) -> None:
    # 160 wins of 400 queries: a resample's rate is Binomial(400, 0.4) / 400, exactly; the
    # percentile interval at level 1 - alpha holds 1 - alpha of it (plus at most the mass of
    # its two end points, 0.006 each); at 1 - 2 alpha it would hold 0.90 (0.60)
    gate = gate_against(
        _one_pair_per_query(160, 240), baseline="base", threshold=0.5, alpha=alpha, resamples=4000
    )
    (cand,) = gate["candidates"]
    assert cand["win_rate"] == pytest.approx(0.4, abs=1e-12)
    assert (cand["pairs"], cand["queries"]) == (400, 400)
    lo, hi = cand["ci"]
    assert low <= _binomial_mass_inside(400, 0.4, lo, hi) <= high
    # the interval is not below 0.5 at alpha 0.05 (its top is about 0.448): fails
    assert cand["failed"] is (hi < 0.5)
    assert gate["alpha"] == alpha and gate["threshold"] == 0.5 and gate["baseline"] == "base"
    # each tail holds alpha / 2 of it, less at most its end point's mass (0.006 at 2.5%,
    # 0.017 at 10%)
    below = float(binom.cdf(np.ceil(lo * 400 - 1e-9) - 1, 400, 0.4))
    above = float(binom.sf(np.floor(hi * 400 + 1e-9), 400, 0.4))
    assert alpha / 2 - 0.018 <= below <= alpha / 2 + 0.003
    assert alpha / 2 - 0.018 <= above <= alpha / 2 + 0.003


def test_win_rate_counts_ties_half_on_either_side_by_hand() -> None:
    # cand as b wins (1), as a wins (1), a tie (0.5), as a loses (0), as b loses (0):
    # 2.5 / 5 = 0.5; a pair of two other systems is not the candidate's
    gate = gate_against(
        _outcomes(
            ("base", "cand", "other"),
            [
                ("base", "cand", 0.0, 0),
                ("cand", "base", 1.0, 0),
                ("cand", "base", 0.5, 1),
                ("cand", "base", 0.0, 2),
                ("base", "cand", 1.0, 3),
                ("other", "cand", 1.0, 3),
                ("base", "other", 0.0, 3),
            ],
        ),
        baseline="base",
        threshold=0.5,
    )
    cand, other = gate["candidates"]
    assert cand["name"] == "cand" and cand["win_rate"] == pytest.approx(0.5, abs=1e-12)
    assert (cand["pairs"], cand["queries"]) == (5, 4)
    assert other["name"] == "other" and other["win_rate"] == 1.0 and other["pairs"] == 1


def test_the_threshold_bound_is_strict() -> None:
    # every pair a tie: the rate is 0.5 in every resample, the interval [0.5, 0.5]; 0.5 is
    # not below 0.5 (pass), just above it is (fail)
    ties = _outcomes(("base", "cand"), [("base", "cand", 0.5, q) for q in range(10)])
    at = gate_against(ties, baseline="base", threshold=0.5)
    assert at["candidates"][0]["ci"] == [0.5, 0.5] and at["passed"] is True
    above = gate_against(ties, baseline="base", threshold=0.5 + 1e-9)
    assert above["passed"] is False and above["candidates"][0]["failed"] is True


def _three(baseline_first: bool = True) -> Outcomes:
    # good beats base on 20 queries, bad loses to base on 20
    pairs = [("good", "base", 1.0, q) for q in range(20)]
    pairs += [("base", "bad", 1.0, 20 + q) for q in range(20)]
    names = ("base", "good", "bad") if baseline_first else ("good", "bad", "base")
    return _outcomes(names, pairs)


def test_the_gate_fails_when_any_candidate_fails() -> None:
    gate = gate_against(_three(), baseline="base", threshold=0.4)
    verdicts = {c["name"]: c["failed"] for c in gate["candidates"]}
    assert verdicts == {"good": False, "bad": True}
    assert gate["passed"] is False
    text = gate_text(gate)
    assert "good: 1.000 [1.000, 1.000] over 20 pairs  pass" in text
    assert "bad: 0.000 [0.000, 0.000] over 20 pairs  FAIL" in text
    assert "### Pairwise gate: FAIL" in gate_markdown(gate)
    # every candidate passes: the gate passes
    assert gate_against(_three(), baseline="base", threshold=0.0)["passed"] is True


def test_the_baseline_is_the_one_named() -> None:
    # the baseline last in the systems' order: still the one the others meet
    gate = gate_against(_three(baseline_first=False), baseline="base", threshold=0.4)
    assert gate["baseline"] == "base"
    assert [c["name"] for c in gate["candidates"]] == ["good", "bad"]
    assert gate["passed"] is False
    # bad as the baseline: base beat it on all 20 (rate 1), good never met it
    against_bad = gate_against(_three(), baseline="bad", threshold=0.4)
    by_name = {c["name"]: c for c in against_bad["candidates"]}
    assert by_name["base"]["win_rate"] == 1.0 and by_name["base"]["failed"] is False
    assert by_name["good"]["pairs"] == 0


def test_a_candidate_with_no_judged_pair_fails() -> None:
    # lone never met the baseline: no win rate, no interval, a failure, said so; the
    # candidates after it are still gated
    pairs = [("cand", "base", 1.0, q) for q in range(10)]
    pairs += [("cand", "lone", 1.0, 10 + q) for q in range(10)]
    later = gate_against(_outcomes(("base", "lone", "cand"), pairs), baseline="base", threshold=0.5)
    assert [c["name"] for c in later["candidates"]] == ["lone", "cand"]
    assert later["candidates"][1]["win_rate"] == 1.0
    gate = gate_against(_outcomes(("base", "cand", "lone"), pairs), baseline="base", threshold=0.5)
    cand, lone = gate["candidates"]
    assert cand["failed"] is False
    assert lone == {"name": "lone", "pairs": 0, "win_rate": None, "ci": None, "failed": True}
    assert gate["passed"] is False
    assert "lone: no judged pair  FAIL" in gate_text(gate)
    assert "| `lone` | no judged pair | FAIL |" in gate_markdown(gate)


def test_seed_resamples_and_alpha_are_the_callers() -> None:
    # 30 queries of one to three pairs, wins, ties and losses: rates off any lattice
    rng = np.random.default_rng(0)
    pairs = [
        ("cand", "base", float(rng.choice([0.0, 0.0, 0.5, 1.0])), q)
        for q in range(30)
        for _ in range(1 + q % 3)
    ]
    o = _outcomes(("base", "cand"), pairs)
    rate = gate_against(o, baseline="base", threshold=0.5)["candidates"][0]["win_rate"]
    assert rate == pytest.approx(sum(r for _, _, r, _ in pairs) / len(pairs), abs=1e-12)
    base = gate_against(o, baseline="base", threshold=0.5, resamples=2000, seed=0)
    lo, hi = base["candidates"][0]["ci"]
    # another seed, or another number of resamples: other draws, other bounds
    assert gate_against(o, baseline="base", threshold=0.5, resamples=2000, seed=1)["candidates"][0][
        "ci"
    ] != [lo, hi]
    assert gate_against(o, baseline="base", threshold=0.5, resamples=50, seed=0)["candidates"][0][
        "ci"
    ] != [lo, hi]
    # a wider alpha, a narrower interval inside the first: 0.9 keeps the middle 10%
    narrow = gate_against(o, baseline="base", threshold=0.5, alpha=0.9, seed=0)
    n_lo, n_hi = narrow["candidates"][0]["ci"]
    assert lo < n_lo <= rate <= n_hi < hi
    assert n_hi < 0.5 < hi  # the verdict turns on alpha
    assert narrow["passed"] is False and base["passed"] is True
    assert "(ties half, 10% interval" in gate_text(narrow)
    assert "(ties half, 95% interval" in gate_text(base)
    assert "(ties count half; 10% bootstrap" in gate_markdown(narrow)
    # the defaults: alpha 0.05, 2000 resamples, seed 0 (on 200 queries of 1-7 pairs the
    # resampled rates are nearly all distinct, so one resample more or less moves a bound)
    many = _outcomes(
        ("base", "cand"),
        [
            ("cand", "base", float(rng.choice([0.0, 0.5, 1.0])), q)
            for q in range(200)
            for _ in range(1 + q % 7)
        ],
    )
    default = gate_against(many, baseline="base", threshold=0.5)
    explicit = gate_against(
        many, baseline="base", threshold=0.5, alpha=0.05, resamples=2000, seed=0
    )
    assert default == explicit
    one_more = gate_against(many, baseline="base", threshold=0.5, resamples=2001)
    assert one_more["candidates"][0]["ci"] != default["candidates"][0]["ci"]


def test_the_gate_reads_as_written_in_text_and_markdown() -> None:
    # the whole output, by hand, for a gate dict: a pass, a fail and a candidate never judged
    gate = {
        "baseline": "base",
        "threshold": 0.45,
        "alpha": 0.1,
        "passed": False,
        "candidates": [
            {"name": "good", "pairs": 12, "win_rate": 0.625, "ci": [0.5, 0.75], "failed": False},
            {"name": "bad", "pairs": 3, "win_rate": 0.0, "ci": [0.0, 0.0], "failed": True},
            {"name": "lone", "pairs": 0, "win_rate": None, "ci": None, "failed": True},
        ],
    }
    assert gate_text(gate) == (
        "win rate against base (ties half, 90% interval over queries), fail below 0.45:\n"
        "  good: 0.625 [0.500, 0.750] over 12 pairs  pass\n"
        "  bad: 0.000 [0.000, 0.000] over 3 pairs  FAIL\n"
        "  lone: no judged pair  FAIL\n"
    )
    assert gate_markdown(gate) == (
        "### Pairwise gate: FAIL\n"
        "\n"
        "Win rate against `base` (ties count half; 90% bootstrap interval over queries); "
        "fails when the interval lies below 0.45.\n"
        "\n"
        "| system | win rate [interval] | verdict |\n"
        "| --- | --- | --- |\n"
        "| `good` | 0.625 [0.500, 0.750] over 12 pairs | pass |\n"
        "| `bad` | 0.000 [0.000, 0.000] over 3 pairs | FAIL |\n"
        "| `lone` | no judged pair | FAIL |\n"
    )
    passed = {**gate, "passed": True, "candidates": gate["candidates"][:1]}
    assert gate_markdown(passed).startswith("### Pairwise gate: PASS\n\n")
