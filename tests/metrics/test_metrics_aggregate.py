"""Query -> session aggregation and z-score combination, on hand-worked inputs."""

from __future__ import annotations

import pytest

from genir_eval.errors import ConfigError
from genir_eval.metrics import AGGREGATIONS, aggregate, zscore_combine

TOL = 1e-9

# values [4, None, 2, 5]: None skipped, the rest renumbered 1..3 -> [4, 2, 5].
# Computed by hand: decreasing (4 + 2/2 + 5/3) / (11/6); increasing (4 + 4 + 15) / 6;
# equal 11/3; middle_high w=(1,2,1) 13/4; middle_low w=(1,1/2,1) 5/2.5; max 5; min 2;
# mode: every value once, so the mean of all three, 11/3.
AGGREGATE_CASES = [
    ("decreasing", 40 / 11),
    ("increasing", 23 / 6),
    ("equal", 11 / 3),
    ("middle_high", 3.25),
    ("middle_low", 4.0),
    ("max", 5.0),
    ("min", 2.0),
    ("mode", 11 / 3),
]


@pytest.mark.parametrize(("how", "expected"), AGGREGATE_CASES)
def test_aggregate_matches_hand_values(how, expected):
    assert aggregate([4, None, 2, 5], how) == pytest.approx(expected, abs=TOL)


def test_aggregations_cover_the_table():
    assert {how for how, _ in AGGREGATE_CASES} == set(AGGREGATIONS)


# Source: by hand; ties among modes are averaged.
MODE_CASES = [([3, 3, 4, 4, 5], 3.5), ([1, 2, 2], 2.0), ([5], 5.0)]


@pytest.mark.parametrize(("values", "expected"), MODE_CASES)
def test_mode_averages_tied_modes(values, expected):
    assert aggregate(values, "mode") == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("how", AGGREGATIONS)
def test_no_values_aggregate_to_none(how):
    assert aggregate([None, None], how) is None
    assert aggregate([], how) is None


def test_unknown_aggregation_is_a_config_error():
    with pytest.raises(ConfigError):
        aggregate([1.0], "median")


# Computed by hand: [1,2,3] has mean 2, population std sqrt(2/3), z = (-1.2247449, 0, 1.2247449);
# a constant list standardises to zeros, so the mean of the two halves them.
# [1,None,3]: z = (-1, None, 1); [0,4,8]: mean 4, std sqrt(32/3), z = (-1.2247449, 0, 1.2247449).
ZSCORE_CASES = [
    ([1, 2, 3], [2, 2, 2], [-0.6123724357, 0.0, 0.6123724357]),
    ([1, None, 3], [0, 4, 8], [-1.1123724357, None, 1.1123724357]),
    ([None, None], [1, 2], [None, None]),
]


@pytest.mark.parametrize(("a", "b", "expected"), ZSCORE_CASES)
def test_zscore_combine_matches_hand_values(a, b, expected):
    combined = zscore_combine(a, b)
    assert len(combined) == len(expected)
    for got, want in zip(combined, expected, strict=True):
        if want is None:
            assert got is None
        else:
            assert got == pytest.approx(want, abs=1e-9)


def test_zscore_combine_needs_paired_lists():
    with pytest.raises(ValueError):
        zscore_combine([1, 2], [1, 2, 3])
