"""Holm's and Benjamini-Hochberg's adjusted p-values (meta/multiplicity.py), pinned against
values worked out by hand and against independent computations: Holm's adjustment as the
closed test of Bonferroni tests (every subset of hypotheses, brute force), and
Benjamini-Hochberg's against scipy.stats.false_discovery_control."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from genir_eval.meta.multiplicity import adjust, benjamini_hochberg, holm

# (p-values, Holm-adjusted, BH-adjusted), each worked out by hand from the definitions:
# Holm: sort ascending, the k-th (from 1) times m - k + 1, running maximum;
# BH: sort ascending, the k-th times m / k, running minimum from the largest.
BY_HAND = [
    # sorted 0.005, 0.01, 0.03, 0.04 -> Holm 0.02, 0.03, 0.06, max(0.04, 0.06) = 0.06;
    # BH 0.02, 0.02, 0.04, 0.04
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02], [0.02, 0.04, 0.04, 0.02]),
    # sorted 0.012, 0.02, 0.3 -> Holm 0.036, 0.04, 0.3; BH min(0.036, 0.03) = 0.03, 0.03, 0.3
    ([0.012, 0.02, 0.3], [0.036, 0.04, 0.3], [0.03, 0.03, 0.3]),
    # a product past 1 is capped at 1
    ([0.6, 0.5], [1.0, 1.0], [0.6, 0.6]),
    ([0.2], [0.2], [0.2]),
]


@pytest.mark.parametrize(("p", "expected_holm", "expected_bh"), BY_HAND)
def test_adjusted_values_by_hand(
    p: list[float], expected_holm: list[float], expected_bh: list[float]
) -> None:
    assert holm(p) == pytest.approx(expected_holm, abs=1e-12)
    assert benjamini_hochberg(p) == pytest.approx(expected_bh, abs=1e-12)
    assert adjust(p, "holm") == holm(p) and adjust(p, "bh") == benjamini_hochberg(p)
    assert adjust(p, "none") == p


def _holm_by_closure(p: list[float]) -> list[float]:
    """Holm's procedure is the closed test of Bonferroni tests (Marcus, Peritz & Gabriel
    1976): H_i is rejected at level a when every intersection of hypotheses containing it
    is, so its adjusted p-value is the largest, over the subsets S holding i, of
    min(1, |S| min_{j in S} p_j)."""
    m = len(p)
    adjusted = []
    for i in range(m):
        worst = 0.0
        for size in range(1, m + 1):
            for subset in itertools.combinations(range(m), size):
                if i in subset:
                    worst = max(worst, min(1.0, size * min(p[j] for j in subset)))
        adjusted.append(worst)
    return adjusted


@pytest.mark.parametrize("seed", range(20))
def test_holm_is_the_closed_bonferroni_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = list(rng.uniform(0, 0.2, size=int(rng.integers(1, 7))))
    assert holm(p) == pytest.approx(_holm_by_closure(p), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_benjamini_hochberg_agrees_with_scipy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    p = list(rng.uniform(0, 0.3, size=int(rng.integers(1, 12))))
    expected = false_discovery_control(np.array(p), method="bh")
    assert benjamini_hochberg(p) == pytest.approx(list(expected), abs=1e-12)


def test_holm_is_not_bonferroni() -> None:
    # the second-smallest p is multiplied by m - 1, not m: Bonferroni's 0.06 would keep
    # H_2 at 0.05, Holm's 0.04 rejects it
    assert holm([0.012, 0.02, 0.3])[1] == pytest.approx(0.04, abs=1e-12)


def test_an_unknown_correction_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown correction 'sidak'"):
        adjust([0.1], "sidak")
