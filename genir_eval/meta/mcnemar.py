"""McNemar's test for paired binary outcomes (a thumbs-up, a rubric's pass or fail).

Of the pairs where the two runs disagree, ``b`` passed in run A only and ``c`` in run B
only; under "no difference" each discordant pair is either way with probability 1/2, so
``min(b, c)`` is Binomial(b + c, 1/2) below its mean. The exact two-sided p-value is
``min(1, 2 P(X <= min(b, c)))``; the mid-p value subtracts the probability of the observed
count itself, ``P(X = min(b, c))``, once (Lancaster 1961), which keeps the test's size
close to its level where the exact one is conservative; Fagerland, Lydersen & Laake (2013,
BMC Medical Research Methodology 13:91) recommend the mid-p test for paired binary data.
The gate uses the mid-p value and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

__all__ = ["McNemar", "mcnemar"]


@dataclass(frozen=True)
class McNemar:
    """The discordant counts and both p-values."""

    only_a: int
    only_b: int
    p_exact: float
    p_mid: float


def mcnemar(only_a: int, only_b: int) -> McNemar:
    """McNemar's exact and mid-p two-sided tests from the discordant counts: ``only_a``
    pairs passed in run A only, ``only_b`` in run B only. No discordant pair: both 1."""
    n = only_a + only_b
    if n == 0:
        return McNemar(only_a, only_b, 1.0, 1.0)
    k = min(only_a, only_b)
    total = 2**n
    below = sum(comb(n, i) for i in range(k + 1))
    exact = min(1.0, 2 * below / total)
    mid = min(1.0, 2 * below / total - comb(n, k) / total)
    return McNemar(only_a, only_b, exact, mid)
