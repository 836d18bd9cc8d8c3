"""The style-controlled scores' intervals (genir_eval/runner/arena_figures.py): a 95%
percentile bootstrap over queries of the *style-controlled* fit, not of the plain one.

200 queries, one pair each, x against y. In 150, x's answer is the longer (normalised
length difference +0.5) and x wins 120 of them; in 50, y's is the longer and y wins 40. The
longer answer wins 80% in both groups, so with length held equal neither system is better:
the style-controlled scores are 1000 each (by symmetry). Without style control x wins 130 of
200: Bradley-Terry's closed form for two systems gives a log-strength difference of
ln(130/70) = 0.619, x at 1000 + 0.619/2 x 400/ln 10 = 1053.8. The interval of the
style-controlled scores holds 1000 and lies below 1053.8; it is the 2.5th and 97.5th
percentiles of refits on queries drawn with replacement, recomputed here by a loop of its
own."""

from __future__ import annotations

import math

import numpy as np
import pytest

from genir_eval.judges.pairwise.ranking import Outcomes, elo, fit_davidson
from genir_eval.runner.arena_figures import style_intervals

ELO_PER_UNIT = 400 / math.log(10)
PLAIN_X = 1000 + ELO_PER_UNIT * math.log(130 / 70) / 2  # 1053.8
RESAMPLES, SEED = 200, 3


def _outcomes() -> Outcomes:
    rows = (
        [(1.0, 0.5)] * 120 + [(0.0, 0.5)] * 30 + [(0.0, -0.5)] * 40 + [(1.0, -0.5)] * 10
    )  # (x won, x's length difference)
    n = len(rows)
    style = np.zeros((n, 3))
    style[:, 0] = [d for _, d in rows]
    return Outcomes(
        ("x", "y"),
        np.zeros(n, dtype=np.int64),
        np.ones(n, dtype=np.int64),
        np.array([r for r, _ in rows]),
        np.arange(n),
        style,
    )


def _draws(outcomes: Outcomes) -> np.ndarray:
    """Refits of the style-controlled model on queries drawn with replacement (the same
    generator and draws the arena documents: numpy's default_rng(seed), n queries a draw)."""
    rng = np.random.default_rng(SEED)
    n = len(outcomes)
    full = fit_davidson(outcomes, style=True)
    out = []
    for _ in range(RESAMPLES):
        counts = np.bincount(rng.integers(0, n, n), minlength=n)
        out.append(elo(fit_davidson(outcomes, weights=counts, style=True, start=full).theta))
    return np.array(out)


def test_the_fits_by_hand() -> None:
    outcomes = _outcomes()
    assert elo(fit_davidson(outcomes).theta)[0] == pytest.approx(PLAIN_X, abs=0.5)
    assert elo(fit_davidson(outcomes, style=True).theta) == pytest.approx([1000, 1000], abs=0.5)


def test_the_interval_is_the_style_controlled_fits_95_percent_one() -> None:
    outcomes = _outcomes()
    intervals = style_intervals(outcomes, resamples=RESAMPLES, seed=SEED)
    assert intervals is not None
    draws = _draws(outcomes)
    for i, name in enumerate(("x", "y")):
        lo, hi = intervals[name]
        assert lo < 1000 < hi
        assert [lo, hi] == pytest.approx(np.percentile(draws[:, i], [2.5, 97.5]), abs=1e-3)
        inside = np.mean((draws[:, i] >= lo - 1e-9) & (draws[:, i] <= hi + 1e-9))
        assert 0.94 <= inside <= 0.96  # 95% of the draws, not 90%
    # the plain fit's score lies above the style-controlled interval
    assert intervals["x"][1] < PLAIN_X and intervals["y"][0] > 2000 - PLAIN_X
