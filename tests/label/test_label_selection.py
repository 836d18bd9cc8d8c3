"""Which items come first, and how many a prediction-powered mean needs."""

from __future__ import annotations

import math

import pytest

from genir_eval.runner.label.items import Item
from genir_eval.runner.label.selection import (
    calibration_order,
    doubt,
    least_certain_order,
    ppi_sample_size,
    random_order,
)


def _item(key: str, *labels: float | None) -> Item:
    return Item(key, "link_usefulness", "s", 1, (), {f"j{i}": v for i, v in enumerate(labels)})


# (judges' labels, doubt), worked out by hand: spread + (0.5 - |mean mod 1 - 0.5|)
DOUBTS = [
    ((2.0, 2.0), 0.0),  # agree, on a label
    ((1.0, 2.0), 1.5),  # spread 1, mean 1.5 on the boundary
    ((3.0, 3.0, 2.0), 1.0 + (0.5 - abs(8 / 3 % 1 - 0.5))),  # spread 1, mean 2.667
    ((0.25,), 0.25),
]


@pytest.mark.parametrize(("labels", "expected"), DOUBTS)
def test_doubt(labels: tuple[float, ...], expected: float) -> None:
    assert doubt(_item("x", *labels)) == pytest.approx(expected, abs=1e-12)


def test_no_judge_label_is_the_most_doubtful() -> None:
    assert doubt(_item("x", None)) == math.inf


def test_order_takes_strata_in_turn_least_certain_first() -> None:
    items = [
        _item("a", 0.0, 0.0),  # stratum 0, doubt 0
        _item("b", 0.0, 1.0),  # mean 0.5 rounds to 0 (half to even), doubt 1.5
        _item("c", 3.0, 3.0),  # stratum 3, doubt 0
        _item("d", 2.0, 3.0),  # mean 2.5 rounds to 2, doubt 1.5
        _item("e", 2.0, 2.0),  # stratum 2, doubt 0
        _item("f", None),  # no judge: last
    ]
    order = [it.key for it in least_certain_order(items)]
    # round 1: each stratum's most doubtful (0: b, 2: d, 3: c); round 2: a, e; then f
    assert order == ["b", "d", "c", "a", "e", "f"]


def test_the_shown_order_takes_the_two_streams_in_turn() -> None:
    items = [_item(k, float(i % 4), float((i + 1) % 4)) for i, k in enumerate("abcdefgh")]
    certain = [it.key for it in least_certain_order(items)]
    drawn = random_order([it.key for it in items])
    assert sorted(drawn) == sorted(certain) and drawn == random_order(list(reversed(drawn)))
    shown = [it.key for it in calibration_order(items)]
    assert sorted(shown) == sorted(certain)
    taken: list[str] = []
    for position, key in enumerate(shown):
        stream = certain if position % 2 == 0 else drawn
        # each item is its stream's first not taken yet
        assert key == next(k for k in stream if k not in taken)
        taken.append(key)


def test_ppi_sample_size_by_hand() -> None:
    # link usefulness 0-3, width share 0.2: a 0.6-wide interval, half-width 0.3.
    # judged 0,1,2,3 repeated 25 times (N 100): var(f) = 1.6667 (ddof 1: 125/75 = 1.2626).
    judged = [0.0, 1.0, 2.0, 3.0] * 25
    var_f = sum((x - 1.5) ** 2 for x in judged) / 99  # 1.26263
    room = (0.6 / (2 * 1.959963984540054)) ** 2 - var_f / 100  # 0.023428 - 0.012626
    expected = math.ceil(var_f / room)  # assumed rectifier variance = var(f): 117 -> capped
    size = ppi_sample_size("link_usefulness", judged)
    assert not size.observed and size.width == pytest.approx(0.6)
    assert size.needed == min(100, expected) == 100
    # ten pairs whose judge-minus-person differences are +-0.5 (variance 0.2778): measured
    pairs = [(1.0, 0.5), (1.0, 1.5)] * 5
    size = ppi_sample_size("link_usefulness", judged, pairs)
    var_r = 0.25 * 10 / 9
    assert size.observed and size.rectifier_sd == pytest.approx(math.sqrt(var_r))
    assert size.needed == math.ceil(var_r / room) == 26
