"""A judge's noise (meta/noise.py) against published and hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import f

from genir_eval.meta.decide import noise_words
from genir_eval.meta.noise import flip_share, icc1, judge_noise, within_spread

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; their Table 4 gives
# ICC(1,1) = 0.17 (rounded)
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)


def test_icc_of_shrout_and_fleiss_table_2() -> None:
    icc, ci = icc1(SHROUT_FLEISS)
    assert icc == pytest.approx(0.17, abs=0.005)
    # the interval by hand from the table's mean squares (BMS 11.24, WMS 6.26 in their
    # Table 3): F = 1.795, df 5 and 18
    bms, wms = 11.24, 6.26
    ratio = bms / wms
    lower = ratio / f.ppf(0.975, 5, 18)
    upper = ratio * f.ppf(0.975, 18, 5)
    assert ci is not None
    assert ci[0] == pytest.approx((lower - 1) / (lower + 3), abs=0.003)
    assert ci[1] == pytest.approx((upper - 1) / (upper + 3), abs=0.003)
    # pooled within-target variance: WMS
    assert within_spread(SHROUT_FLEISS) == pytest.approx(np.sqrt(6.2639), abs=0.001)


def test_a_judge_that_always_agrees_with_itself() -> None:
    table = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    icc, ci = icc1(table)
    assert icc == 1.0 and ci is None and within_spread(table) == 0.0


def test_flip_share_by_hand() -> None:
    # mean scores 1, 2, 3, 4: median 2.5; session 2 (mean 2) has a repeat at 3 (other side),
    # session 3 (mean 3) one at 2: 2 of 4 would flip
    sessions = np.array([[1.0, 1.0], [1.0, 3.0], [4.0, 2.0], [4.0, 4.0]])
    assert flip_share(sessions) == 0.5


def test_judge_noise_leaves_out_items_missing_in_a_repeat() -> None:
    values = {
        ("s1", "a"): [1.0, 2.0],
        ("s1", "b"): [3.0, 3.0],
        ("s2", "a"): [2.0, None],
        ("s2", "b"): [0.0, 1.0],
    }
    noise = judge_noise(values)  # type: ignore[arg-type]
    assert noise is not None and (noise.items, noise.repeats, noise.sessions) == (3, 2, 2)
    # within variances 0.5, 0, 0.5: mean 1/3
    assert noise.within_sd == pytest.approx(np.sqrt(1 / 3), abs=1e-12)


def test_the_noise_in_words() -> None:
    block = {
        "deterministic": False,
        "items": 40,
        "repeats": 3,
        "within_item_sd": 0.41,
        "icc": 0.62,
        "icc_ci95": [0.41, 0.8],
        "sessions": 12,
        "verdict_flip_share": 0.25,
    }
    assert noise_words(block) == (
        "judge noise: ICC 0.620 [0.41, 0.80] over 40 items judged 3 times; within-item sd "
        "0.410; 25% of 12 sessions would flip"
    )
    assert noise_words({"deterministic": True, "note": "deterministic: x"}) == (
        "judge noise: deterministic: x"
    )
