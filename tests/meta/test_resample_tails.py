"""The session bootstrap's interval (genir_eval/meta/resample.py): at level ``ci`` each tail
holds (1 - ci) / 2 of the resampled statistic, 2.5% each at 95%.

The expected bounds come from a second implementation written here: the same generator
(numpy's default_rng(seed)), whole sessions drawn with replacement, the mean over the drawn
sessions' items, then numpy's percentiles at 2.5 and 97.5 (5 and 95 at 90%)."""

from __future__ import annotations

import numpy as np
import pytest

from genir_eval.meta.resample import session_bootstrap

# 12 sessions of 1 to 3 items each (invented values)
SESSIONS = [[float((7 * s + 3 * i) % 11) for i in range(1 + s % 3)] for s in range(12)]
PRED = [v for items in SESSIONS for v in items]
GROUPS = [s for s, items in enumerate(SESSIONS) for _ in items]


def _mean(pred: list[float], _gold: list[float]) -> float:
    return sum(pred) / len(pred)


def _by_hand(n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        drawn = rng.integers(0, len(SESSIONS), size=len(SESSIONS))
        values = [v for k in drawn for v in SESSIONS[k]]
        out.append(sum(values) / len(values))
    return np.array(out)


@pytest.mark.parametrize(("ci", "tails"), [(0.95, (2.5, 97.5)), (0.90, (5.0, 95.0))])
def test_each_tail_holds_half_of_what_the_level_leaves_out(
    ci: float, tails: tuple[float, float]
) -> None:
    found = session_bootstrap(_mean, PRED, PRED, GROUPS, n_boot=2000, seed=4, ci=ci)
    draws = _by_hand(2000, 4)
    assert found == pytest.approx(list(np.percentile(draws, tails)), abs=1e-12)
    lo, hi = found  # type: ignore[misc]
    below, above = np.mean(draws < lo), np.mean(draws > hi)
    share = (1 - ci) / 2
    assert below == pytest.approx(share, abs=0.006) and above == pytest.approx(share, abs=0.006)


def test_the_default_level_is_95_percent() -> None:
    assert session_bootstrap(_mean, PRED, PRED, GROUPS, n_boot=500, seed=1) == pytest.approx(
        list(np.percentile(_by_hand(500, 1), [2.5, 97.5])), abs=1e-12
    )
