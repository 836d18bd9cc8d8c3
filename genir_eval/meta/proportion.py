"""An interval for a proportion: Wilson's score interval.

Wilson (1927), "Probable inference, the law of succession, and statistical inference",
JASA 22(158): 209-212; recommended over the Wald interval by Brown, Cai & DasGupta (2001),
"Interval estimation for a binomial proportion", Statistical Science 16(2): 101-133, for its
coverage at small n and near 0 or 1.
"""

from __future__ import annotations

import math

__all__ = ["wilson_interval"]

#: The standard normal's 97.5% quantile: a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, *, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's score interval of the proportion ``successes / n`` (95% by default);
    ``successes`` may be fractional (an agreement counting a tie half). ``None`` when
    ``n`` is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
