"""The gate's statistics at the sizes real runs have, worked out independently (issue 25).

The Monte-Carlo randomisation p-value (past 14 pairs) against the exact one enumerated here
over all 2**20 sign patterns; a 20-session regression that must be significant and a
no-change pair that must not; the bootstrap interval's bounds from hand-worked cases; and
Cohen's d_z, which is undefined when every paired difference is equal (issue 23).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from genir_eval.cli import main
from genir_eval.runner.compare import (
    EXACT_MAX_PAIRS,
    cohen_dz,
    compare_scores,
    describe,
    gate,
    markdown_summary,
    paired_bootstrap,
    randomization_test,
    shown,
)


def _exact_p(deltas: np.ndarray) -> float:
    """Two-sided sign-flip p over every one of the 2**n patterns (n = 20 here: the sums of
    the first 16 signs times those of the last 4, 2**20 in all, in one array)."""
    n = len(deltas)
    low, high = deltas[:16], deltas[16:]

    def sums(values: np.ndarray) -> np.ndarray:
        signs = 1 - 2 * ((np.arange(2 ** len(values))[:, None] >> np.arange(len(values))) & 1)
        return signs @ values

    totals = np.abs(sums(high)[:, None] + sums(low)[None, :]).ravel() / n
    observed = abs(deltas.mean())
    return float(np.mean(totals >= observed - 1e-12 * max(1.0, observed)))


@pytest.mark.parametrize("seed", range(6))
def test_monte_carlo_p_agrees_with_the_exact_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # a small drop buried in noise: exact p between about 0.001 and 0.5
    deltas = rng.normal(-0.04, 0.1, size=20)
    exact = _exact_p(deltas)
    p, is_exact = randomization_test(deltas.tolist(), n_resamples=10_000, seed=seed)
    assert not is_exact and 20 > EXACT_MAX_PAIRS
    assert p is not None
    # (k + 1) / (R + 1) has standard error sqrt(p (1 - p) / R): within 4 of them
    assert abs(p - exact) <= 4 * np.sqrt(exact * (1 - exact) / 10_000) + 1 / 10_001, (p, exact)


def test_a_20_session_regression_is_significant_and_fails_the_gate(make_scores_run, capsys):
    a_scores = {f"s{i:02d}": 0.5 + 0.02 * (i % 5) for i in range(20)}
    b_scores = {key: value - 0.1 for key, value in a_scores.items()}  # every session drops
    comparison = compare_scores(a_scores, b_scores, metric="sdcg_urge")
    # only the two all-equal sign patterns of 2**20 reach the observed mean: p is the
    # smallest the Monte-Carlo estimate gives, 1 / (R + 1)
    assert comparison.p_value == pytest.approx(1 / 10_001)
    assert not comparison.p_exact
    result = gate(comparison, alpha=0.05)
    assert not result.passed
    assert any("significantly" in reason for reason in result.reasons)
    a, b = make_scores_run("a", a_scores), make_scores_run("b", b_scores)
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 1
    assert "dropped significantly (randomisation p = 9.999e-05" in capsys.readouterr().err


def test_a_no_change_pair_is_not_significant(make_scores_run, capsys):
    a_scores = {f"s{i:02d}": 0.5 for i in range(20)}
    # ten up, ten down by the same amount: the mean does not move
    b_scores = {key: 0.5 + (0.1 if i % 2 else -0.1) for i, key in enumerate(a_scores)}
    comparison = compare_scores(a_scores, b_scores, metric="sdcg_urge")
    assert comparison.mean_delta == pytest.approx(0.0, abs=1e-12)
    assert comparison.p_value == 1.0
    assert gate(comparison, alpha=0.05).passed
    a, b = make_scores_run("a", a_scores), make_scores_run("b", b_scores)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--min-sessions", str(len(a_scores))]) == 0
    assert capsys.readouterr().out.rstrip().endswith("PASS")


def test_bootstrap_bounds_by_hand_two_pairs() -> None:
    """Deltas 0 and 1: a resample's mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4, so
    the 2.5th percentile is 0 and the 97.5th is 1."""
    assert paired_bootstrap([0.0, 1.0], n_resamples=4000, seed=5) == (0.0, 1.0)


def test_bootstrap_bounds_are_the_95_percent_ones() -> None:
    """200 deltas of +1 and 200 of -1: the mean of a resample of 400 is close to normal with
    mean 0 and standard error 1 / sqrt(400) = 0.05, so the 95% percentile interval is
    +-1.96 * 0.05 = +-0.098 (a 90% one would be +-0.082). Percentile noise with 10,000
    resamples is about 0.0013 and the means move in steps of 0.005."""
    lo, hi = paired_bootstrap([1.0] * 200 + [-1.0] * 200, n_resamples=10_000, seed=0)
    assert lo == pytest.approx(-0.098, abs=0.006)
    assert hi == pytest.approx(0.098, abs=0.006)


def test_the_printed_interval_is_the_computed_one(make_scores_run, capsys) -> None:
    a_scores = {f"s{i:03d}": 0.5 for i in range(400)}
    b_scores = {key: 0.5 + (0.25 if i % 2 else -0.25) for i, key in enumerate(a_scores)}
    a, b = make_scores_run("a", a_scores), make_scores_run("b", b_scores)
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    found = re.search(r"\[95% CI ([-+]\d\.\d{4}), ([-+]\d\.\d{4})\]", out)
    assert found, out
    # +-0.25 deltas: 1.96 * 0.25 / 20 = 0.0245
    assert float(found.group(1)) == pytest.approx(-0.0245, abs=0.002)
    assert float(found.group(2)) == pytest.approx(0.0245, abs=0.002)


# -- Cohen's d_z when every difference is equal ------------------------------------------------


EQUAL_DROPS = [
    ([0.3, 0.5, 0.7, 0.9, 0.1], -0.2),
    ([0.1 * i for i in range(10)], 0.1),
    ([1 / 3, 2 / 3, 0.25, 0.8], -1 / 7),
    ([0.123456789] * 3 + [0.987654321] * 3, 0.3),
    (list(np.linspace(0, 1, 50)), -0.05),
    ([2.0, 3.0, 4.0, 5.0], 1.0),  # gold satisfaction scale
    (list(np.random.default_rng(1).random(200)), 1e-3),
]


@pytest.mark.parametrize(("a", "shift"), EQUAL_DROPS)
def test_d_z_is_undefined_when_every_difference_is_equal(a, shift) -> None:
    a_scores = {f"s{i}": float(v) for i, v in enumerate(a)}
    b_scores = {key: value + shift for key, value in a_scores.items()}
    comparison = compare_scores(a_scores, b_scores, metric="m")
    assert comparison.cohen_dz is None  # it printed -6.7e15 for ten equal drops
    assert "Cohen's d_z undefined (every paired difference is equal)" in describe(comparison)
    text = markdown_summary([comparison], [gate(comparison)])
    assert "undefined (equal differences)" in text


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        ([0.0, 0.0, 0.0], 0.0),
        ([0.1], None),
        ([1.0, 2.0, 3.0], 2.0),  # mean 2, sd 1
        ([-0.2, -0.2, -0.2 + 1e-6], pytest.approx(-0.2 / 5.7735e-7, rel=1e-3)),
    ],
)
def test_d_z_where_it_is_defined(deltas, expected) -> None:
    assert cohen_dz(deltas) == expected


# -- bidirectional controls in session ids -------------------------------------------------

BIDI = ["\u202e", "\u202d", "\u202a", "\u202b", "\u202c", "\u2066", "\u2067", "\u2068"]
BIDI += ["\u2069", "\u200e", "\u200f", "\u061c", "\x1b", "\x85", "\u2028"]


@pytest.mark.parametrize("char", BIDI)
def test_compare_escapes_controls_in_session_ids(make_scores_run, capsys, char) -> None:
    key = f"evil{char}gnp.exe"
    a_scores = {key: 0.9, "plain": 0.5, "other": 0.6}
    b_scores = {key: 0.1, "plain": 0.5, "other": 0.6}
    a, b = make_scores_run("a", a_scores), make_scores_run("b", b_scores)
    for fmt in ("text", "markdown"):
        capsys.readouterr()
        main(["compare", str(a), str(b), "--format", fmt])
        out = capsys.readouterr().out
        assert char not in out, fmt
        assert shown(key) in out and "\\u" in shown(key) or "\\x" in shown(key)
    # runs over different sessions: the ids named in the error are escaped too
    c = make_scores_run("c", {key: 0.2, "plain": 0.5})
    capsys.readouterr()
    assert main(["compare", str(a), str(c)]) == 2
    err = capsys.readouterr().err
    assert char not in err and len(err.splitlines()) == 1


# -- what the mutation run (README, "Mutation testing") found untested -----------------------


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        # the bounds are the declared settings' (genir_eval/settings.py), read as the command
        # line is parsed
        ("--max-drop", "inf", "--max-drop: expected a number >= 0 and <= 1000000000, got inf"),
        ("--max-drop", "-0.1", "--max-drop: expected a number >= 0 and <= 1000000000, got -0.1"),
        ("--fail-below", "nan", "--fail-below: expected a number >= -1000000000 and <= "),
        ("--alpha", "1.5", "--alpha: expected a number >= 0 and < 1, got 1.5"),
        ("--alpha", "-0.01", "--alpha: expected a number >= 0 and < 1, got -0.01"),
        ("--worst", "-1", "--worst: expected an integer >= 0 and <= 1000000, got -1"),
        ("--resamples", "0", "--resamples: expected an integer >= 1"),
        ("--seed", "-1", "--seed: expected an integer >= 0"),
    ],
)
def test_compare_refuses_impossible_options(make_scores_run, capsys, option, value, words):
    a = make_scores_run("a", {"s1": 0.5, "s2": 0.6})
    capsys.readouterr()
    assert main(["compare", str(a), str(a), option, value]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and words in err, err


#: 20 sessions' scores in runs A and B: deltas of several sizes and both signs, so the
#: Monte-Carlo p (past 14 pairs) and the bootstrap bounds move with the resamples and seed
SPREAD_A = {f"s{i:02d}": 0.5 + 0.01 * i for i in range(20)}
SPREAD_B = {k: v + (0.013 * (i % 7) - 0.05) for i, (k, v) in enumerate(SPREAD_A.items())}


def _two_levels(scores: dict[str, float]) -> dict[str, tuple[float, float, float]]:
    """The session's score, and its two turns' (the second at half the session's): the
    turn level's pairs and mean differ from the session level's."""
    return {k: (v, v, v * 0.5) for k, v in scores.items()}


def test_compare_runs_passes_level_resamples_and_seed_on(make_turn_run) -> None:
    from genir_eval.rundir.folder import load_run
    from genir_eval.runner.compare import compare_runs

    a = make_turn_run("a", _two_levels(SPREAD_A))
    b = make_turn_run("b", _two_levels(SPREAD_B))
    # the data decide: other resamples or another seed give another interval and p
    maps = [load_run(r).scores("sdcg_urge", "turn") for r in (a, b)]
    chosen = compare_scores(*maps, metric="sdcg_urge", level="turn", n_resamples=300, seed=7)
    for other in (
        compare_scores(*maps, metric="sdcg_urge", level="turn", n_resamples=300, seed=8),
        compare_scores(*maps, metric="sdcg_urge", level="turn", n_resamples=10_000, seed=7),
        compare_scores(*maps, metric="sdcg_urge", level="turn", seed=0),
    ):
        assert other.ci95 != chosen.ci95 and other.p_value != chosen.p_value
    got = compare_runs(a, b, metric="sdcg_urge", level="turn", n_resamples=300, seed=7)
    assert got.level == "turn" and got.n == 40 and got.deltas[0].key == "s00#1"
    assert got.to_dict() == chosen.to_dict()
    # the session level reads the sessions' own scores: 20 pairs, B - A by hand
    session = compare_runs(a, b, metric="sdcg_urge", n_resamples=300, seed=7)
    assert session.n == 20
    by_hand = sum(SPREAD_B[k] - SPREAD_A[k] for k in SPREAD_A) / 20
    assert session.mean_delta == pytest.approx(by_hand, abs=1e-12)
    assert got.mean_delta != pytest.approx(by_hand, abs=1e-3)
    # the defaults: 10,000 resamples, seed 0
    default = compare_runs(a, b, metric="sdcg_urge")
    sessions = [load_run(r).scores("sdcg_urge") for r in (a, b)]
    assert default.to_dict() == compare_scores(*sessions, metric="sdcg_urge").to_dict()


def test_the_command_passes_level_resamples_and_seed_on(make_turn_run, capsys) -> None:
    from genir_eval.rundir.folder import load_run

    a = make_turn_run("a", _two_levels(SPREAD_A))
    b = make_turn_run("b", _two_levels(SPREAD_B))
    maps = [load_run(r).scores("sdcg_urge", "turn") for r in (a, b)]
    expected = compare_scores(*maps, metric="sdcg_urge", level="turn", n_resamples=300, seed=7)
    capsys.readouterr()
    main(
        ["compare", str(a), str(b), "--level", "turn", "--resamples", "300", "--seed", "7"]
        + ["--alpha", "0", "--json"]
    )
    (found,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert found["level"] == "turn" and found["n"] == 40
    assert found["ci95"] == list(expected.ci95) and found["p_value"] == expected.p_value
    assert found["p_exact"] is False
    main(["compare", str(a), str(b), "--level", "turn", "--alpha", "0", "--json"])
    (default,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert default["ci95"] != found["ci95"] and default["p_value"] != found["p_value"]


def test_compare_runs_names_the_run_without_the_metric(make_scores_run) -> None:
    from genir_eval.errors import InputError
    from genir_eval.runner.compare import compare_runs

    a = make_scores_run("a", {"s1": 0.5}, metric="other")
    b = make_scores_run("b", {"s1": 0.5})
    with pytest.raises(InputError, match=r"run A \(.*\): no score 'sdcg_urge'"):
        compare_runs(a, b, metric="sdcg_urge")
    with pytest.raises(InputError, match=r"run B \(.*\): no score 'other'"):
        compare_runs(a, b, metric="other")


def test_d_z_text_for_two_equal_pairs_and_for_one_pair() -> None:
    two = compare_scores({"a": 0.1, "b": 0.2}, {"a": 0.3, "b": 0.4}, metric="m")
    assert "Cohen's d_z undefined (every paired difference is equal)" in describe(two)
    one = compare_scores({"a": 0.1}, {"a": 0.3}, metric="m")
    assert "Cohen's d_z n/a;" in describe(one)


def test_compare_cli_passes_each_bound_on(make_scores_run, capsys) -> None:
    """Each of --max-drop and --fail-below fails the gate alone (alpha off), and --format
    json carries the verdict, the reasons and the document's version."""
    a = make_scores_run("a", {"s1": 0.5, "s2": 0.6, "s3": 0.7})
    b = make_scores_run("b", {"s1": 0.4, "s2": 0.5, "s3": 0.6})  # every session 0.1 lower
    for extra, words in (
        (["--max-drop", "0.05"], "more than --max-drop 0.05"),
        (["--fail-below", "0.55"], "is below --fail-below 0.55"),
    ):
        capsys.readouterr()
        assert main(["compare", str(a), str(b), "--alpha", "0", *extra]) == 1
        assert words in capsys.readouterr().err
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--alpha", "0", "--max-drop", "0.2"]) == 4  # n = 3
    capsys.readouterr()
    code = main(["compare", str(a), str(b), "--alpha", "0", "--max-drop", "0.05", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["version"] == 1 and document["passed"] is False
    [only] = document["comparisons"]
    assert only["passed"] is False and "more than --max-drop 0.05" in only["reasons"][0]
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--level", "turn", "--alpha", "0"]) == 4  # n = 3
    assert "(turn level, n=3)" in capsys.readouterr().out


def test_gate_edges_by_hand() -> None:
    from dataclasses import replace

    # no pair with a score in both runs: a failure, said so
    none = compare_scores({"a": None}, {"a": 0.5}, metric="m")
    result = gate(none)
    assert result.passed is False
    assert result.reasons == ("m (session level): no pair has a score in both runs",)
    # a lower-is-better measure: a rise is the regression, a fall is not
    up = compare_scores({"a": 0.1, "b": 0.2}, {"a": 0.4, "b": 0.5}, metric="unsupported_claims")
    # --max-drop, deprecated, is a margin read against the interval (here [0.3, 0.3])
    assert gate(up, max_drop=0.1, alpha=None).reasons == (
        "unsupported_claims (session level): mean rose (lower is better) by up to 0.3000 within "
        "the 95% interval of the change, more than --max-drop 0.1 (non-inferiority not shown) "
        "(--max-drop is deprecated: it is --margin 0.1, read against the interval)",
    )
    down = compare_scores({"a": 0.4, "b": 0.5}, {"a": 0.1, "b": 0.2}, metric="unsupported_claims")
    assert gate(down, max_drop=0.1, alpha=0.5).passed
    # the bounds are strict: equal to the bound passes
    flat = compare_scores({"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5}, metric="m")
    assert gate(flat, max_drop=0.0, fail_below=0.5).passed
    drop = compare_scores(
        {f"s{i}": 0.5 for i in range(20)}, {f"s{i}": 0.4 for i in range(20)}, metric="m"
    )
    assert not gate(drop).passed  # the default alpha, 0.05, catches it
    at_alpha = replace(drop, p_value=0.05)
    assert gate(at_alpha, alpha=0.05).passed  # p = alpha is not below alpha
    no_loss = replace(flat, p_value=0.001)
    assert gate(no_loss, alpha=0.05).passed  # significant, but nothing got worse
