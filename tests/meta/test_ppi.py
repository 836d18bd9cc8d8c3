"""Prediction-powered inference: hand-worked values and coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from genir_eval.meta.ppi import classical_mean, ppi_block, ppi_mean

TOL = 1e-9
Z95 = 1.959963984540054


def test_ppi_by_hand() -> None:
    # Computed by hand from the formula: labelled f = (1, 2, 3), Y = (2, 2, 4) -> rectifier
    # f - Y = (-1, 0, -1), mean -2/3, sample variance 1/3; unlabelled f = (1, 3), mean 2,
    # variance 2. Estimate 2 + 2/3; variance 2/2 + (1/3)/3 = 10/9.
    out = ppi_mean([1, 2, 3], [2, 2, 4], [1, 3])
    assert out.estimate == pytest.approx(8 / 3, abs=TOL)
    assert out.std_error == pytest.approx(math.sqrt(10 / 9), abs=TOL)
    assert out.ci[0] == pytest.approx(8 / 3 - Z95 * math.sqrt(10 / 9), abs=1e-7)
    assert (out.n_labelled, out.n_unlabelled, out.weight) == (3, 2, None)


def test_classical_mean_by_hand() -> None:
    # Computed by hand: (1, 2, 2, 3) has mean 2 and sample variance 2/3, so se = sqrt(2/3 / 4).
    out = classical_mean([1, 2, 2, 3])
    assert out.estimate == pytest.approx(2.0, abs=TOL)
    assert out.std_error == pytest.approx(math.sqrt((2 / 3) / 4), abs=TOL)


def test_power_tuned_weight_is_zero_for_a_useless_judge() -> None:
    # A constant judge carries no information: PPI++ falls back to the gold mean.
    out = ppi_mean([5, 5, 5, 5], [1, 2, 3, 4], [5, 5, 5], power_tuned=True)
    assert out.weight == 0.0
    assert out.estimate == pytest.approx(2.5, abs=TOL)
    assert out.std_error == pytest.approx(classical_mean([1, 2, 3, 4]).std_error, abs=TOL)


def test_ppi_rejects_too_little_data() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([1], [1], [1, 2])
    with pytest.raises(ValueError, match="differ in length"):
        ppi_mean([1, 2], [1], [1, 2])


def _coverage(power_tuned: bool, bias: float, n: int, big_n: int, reps: int, seed: int) -> float:
    """Share of simulated experiments whose 95% interval covers the true mean.

    Population: gold Y ~ N(2, 1) (true mean 2); the judge's score f = 0.8 Y + bias + N(0,
    0.6), so the judge is biased and noisy but informative."""
    rng = np.random.default_rng(seed)
    covered = 0
    for _ in range(reps):
        y = rng.normal(2.0, 1.0, size=n)
        f_lab = 0.8 * y + bias + rng.normal(0.0, 0.6, size=n)
        y_unl = rng.normal(2.0, 1.0, size=big_n)
        f_unl = 0.8 * y_unl + bias + rng.normal(0.0, 0.6, size=big_n)
        est = ppi_mean(f_lab, y, f_unl, power_tuned=power_tuned)
        covered += est.ci[0] <= 2.0 <= est.ci[1]
    return covered / reps


@pytest.mark.parametrize("power_tuned", [False, True])
def test_ppi_interval_covers_the_true_mean_at_its_nominal_rate(power_tuned: bool) -> None:
    # 2,000 seeded experiments: the coverage of a 95% interval has a standard error of
    # sqrt(.95 * .05 / 2000) = 0.005, so 0.93-0.97 is a +-4 standard error band.
    coverage = _coverage(power_tuned, bias=0.7, n=100, big_n=1000, reps=2000, seed=11)
    assert 0.93 <= coverage <= 0.97


def test_naive_judge_mean_misses_where_ppi_covers() -> None:
    # The same biased judge's naive mean is off by about 0.3 (0.8 * 2 + 0.7 = 2.3) and its
    # interval (the judge's own se over 1,000 sessions, ~0.03) never covers 2.
    rng = np.random.default_rng(5)
    f_unl = 0.8 * rng.normal(2.0, 1.0, size=1000) + 0.7 + rng.normal(0.0, 0.6, size=1000)
    naive = classical_mean(f_unl)
    assert not naive.ci[0] <= 2.0 <= naive.ci[1]


def test_ppi_is_narrower_than_the_gold_mean_alone_with_a_good_judge() -> None:
    rng = np.random.default_rng(2)
    y = rng.normal(2.0, 1.0, size=50)
    f_lab = y + rng.normal(0.0, 0.2, size=50)
    f_unl = rng.normal(2.0, 1.0, size=2000)
    ppi = ppi_mean(f_lab, y, f_unl)
    gold_only = classical_mean(y)
    assert ppi.std_error < 0.5 * gold_only.std_error


def test_ppi_block_splits_sessions_by_gold() -> None:
    judged = [1.0, 2.0, 3.0, 1.0, 3.0, None]
    gold = [2.0, 2.0, 4.0, None, None, 5.0]
    block = ppi_block(judged, gold, metric="sdcg_urge")
    assert (block["n_labelled"], block["n_unlabelled"], block["dropped"]) == (3, 2, 1)
    assert block["judge_mean"] == pytest.approx(2.0, abs=TOL)
    assert block["ppi"]["estimate"] == pytest.approx(8 / 3, abs=TOL)
    assert block["ppi_tuned"]["weight"] is not None
    assert block["reason"] is None


def test_ppi_block_without_unlabelled_sessions_says_why() -> None:
    block = ppi_block([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], metric="m")
    assert block["ppi"] is None
    assert "every judged session carries gold" in block["reason"]
    assert block["gold_mean"]["estimate"] == pytest.approx(5 / 3, abs=TOL)


def test_intervals_never_run_past_the_scale() -> None:
    # four 5s and a 1 on a 1-5 scale: the normal interval's upper end passes 5, the mean
    # cannot; clipped to the scale's ends (computed by hand: mean 4.2, se 0.8)
    gold = [5, 5, 5, 5, 1]
    free = classical_mean(gold)
    assert free.ci[1] > 5
    clipped = classical_mean(gold, bounds=(1, 5))
    assert clipped.ci == (pytest.approx(free.ci[0]), 5)
    block = ppi_block([5, 5, 5, 4, 1, 5, 5], [5, 5, 5, 5, 1, None, None], metric="m", bounds=(1, 5))
    for name in ("gold_mean", "ppi", "ppi_tuned"):
        lo, hi = block[name]["ci"]
        assert 1 <= lo <= hi <= 5, name
