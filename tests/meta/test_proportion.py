"""Wilson's score interval against values worked out by hand from its formula."""

from __future__ import annotations

import pytest

from genir_eval.meta.proportion import wilson_interval

# (successes, n, lower, upper): by hand from Wilson's formula with z = 1.96
# 8/10: centre (0.8 + 0.19208) / 1.38416 = 0.71677, half 1.96 * 0.160012 / 1.38416 = 0.22658
CASES = [
    (8, 10, 0.4902, 0.9433),
    # 0/10: centre 0.19208 / 1.38416 = 0.13877, half 1.96 * 0.098 / 1.38416 = 0.13877
    (0, 10, 0.0, 0.2775),
    # 50/100: centre 0.5, half 1.96 * sqrt(0.0025 + 0.00009604) / 1.038416 = 0.09617
    (50, 100, 0.4038, 0.5962),
]


@pytest.mark.parametrize(("successes", "n", "lower", "upper"), CASES)
def test_wilson_by_hand(successes: int, n: int, lower: float, upper: float) -> None:
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval[0] == pytest.approx(lower, abs=1e-4)
    assert interval[1] == pytest.approx(upper, abs=1e-4)


def test_width_shrinks_with_n_and_nothing_without_n() -> None:
    small, large = wilson_interval(5, 10), wilson_interval(500, 1000)
    assert small is not None and large is not None
    assert large[1] - large[0] < (small[1] - small[0]) / 5  # ~ 1/sqrt(100) as wide
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
