"""How many labels the labelling page asks for (genir_eval/runner/label/selection.py): the
prediction-powered mean's sample size, with the rectifier's variance assumed no smaller
than a quarter (a half-label spread) before ten labels measure it, and twice that sample
asked for, since every other item shown is drawn at random.

Worked by hand from PPI's variance ``var(f)/N + var(f - Y)/n`` (Angelopoulos et al., Science
2023): the 95% interval is ``width`` wide when ``n = var(f - Y) / ((width / 2z)^2 -
var(f)/N)``, z = 1.959964 (scipy.stats.norm.ppf(0.975))."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from genir_eval.runner.label.selection import SampleSize, ppi_sample_size

Z = float(norm.ppf(0.975))


def test_judges_that_agree_among_themselves_still_need_a_sample() -> None:
    # session satisfaction 1-5, a fifth of the scale: width 0.8. The judges say 3 or 3.2
    # (N 100): var(f) = 0.01 x 100/99; alone it would ask for 2 labels, but before any label
    # the rectifier's variance is taken as at least 0.25 (sd 0.5)
    judged = [3.0, 3.2] * 50
    var_f = 0.01 * 100 / 99
    room = (0.8 / (2 * Z)) ** 2 - var_f / 100  # 0.041651 - 0.000101
    size = ppi_sample_size("session_satisfaction", judged)
    assert not size.observed
    assert size.width == pytest.approx(0.8)
    assert size.rectifier_sd == pytest.approx(0.5, abs=1e-12)
    assert size.needed == math.ceil(0.25 / room) == 7
    # every other item shown is the random stream's: 14 asked give the PPI mean its 7
    assert size.asked == 14


def test_a_spread_above_the_floor_is_taken_as_it_is() -> None:
    # turn satisfaction 1-5, judges spread 1..5 evenly (N 50): var(f) = 2 x 50/49 > 0.25
    judged = [1.0, 2.0, 3.0, 4.0, 5.0] * 10
    var_f = 2.0 * 50 / 49
    room = (0.8 / (2 * Z)) ** 2 - var_f / 50
    size = ppi_sample_size("turn_satisfaction", judged)
    assert size.rectifier_sd == pytest.approx(math.sqrt(var_f))
    assert size.needed == min(50, math.ceil(var_f / room)) == 50
    assert size.asked == 50  # at most the pool


@pytest.mark.parametrize(
    ("needed", "pool", "asked"),
    [(7, 100, 14), (2, 3, 3), (50, 100, 100), (60, 100, 100), (1, 100, 2)],
)
def test_twice_the_sample_is_asked_at_most_the_pool(needed: int, pool: int, asked: int) -> None:
    assert SampleSize(needed, 0.8, 0.5, False, pool).asked == asked
