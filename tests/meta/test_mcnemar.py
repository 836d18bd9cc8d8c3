"""McNemar's exact and mid-p tests (meta/mcnemar.py) against scipy's exact binomial test and
values worked out by hand."""

from __future__ import annotations

import pytest
from scipy.stats import binom, binomtest

from genir_eval.meta.mcnemar import mcnemar


def test_by_hand() -> None:
    # 1 pair passed in A only, 9 in B only: P(X <= 1 | n = 10, 1/2) = 11/1024; exact
    # two-sided 22/1024; mid-p subtracts P(X = 1) = 10/1024 once: 12/1024
    result = mcnemar(1, 9)
    assert result.p_exact == pytest.approx(22 / 1024, abs=1e-15)
    assert result.p_mid == pytest.approx(12 / 1024, abs=1e-15)
    # symmetric in the two counts
    assert mcnemar(9, 1) == type(result)(9, 1, result.p_exact, result.p_mid)
    # equal counts: no evidence either way, both 1 (mid-p: 2 P(X <= k) - P(X = k) = 1)
    assert mcnemar(4, 4).p_exact == 1.0 and mcnemar(4, 4).p_mid == pytest.approx(1.0, abs=1e-15)
    # no discordant pair: nothing to test
    assert (mcnemar(0, 0).p_exact, mcnemar(0, 0).p_mid) == (1.0, 1.0)
    # 0 and 5: exact 2/32, mid-p 1/32
    assert (mcnemar(0, 5).p_exact, mcnemar(0, 5).p_mid) == pytest.approx((2 / 32, 1 / 32))


@pytest.mark.parametrize(("only_a", "only_b"), [(3, 12), (7, 2), (20, 35), (0, 1), (50, 49)])
def test_against_scipy(only_a: int, only_b: int) -> None:
    n, k = only_a + only_b, min(only_a, only_b)
    exact = binomtest(k, n, 0.5, alternative="two-sided").pvalue
    result = mcnemar(only_a, only_b)
    assert result.p_exact == pytest.approx(exact, rel=1e-12)
    mid = min(1.0, 2 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5))
    assert result.p_mid == pytest.approx(mid, rel=1e-9)
    assert result.p_mid <= result.p_exact
