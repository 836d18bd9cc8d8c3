"""Isotonic calibration and its leave-sessions-out cross-validation."""

from __future__ import annotations

import numpy as np
import pytest

from genir_eval.meta.calibration import (
    agreement,
    cross_validated_calibration,
    fit_isotonic,
    out_of_fold_calibration,
    session_folds,
)

TOL = 1e-9

# Computed by hand with the pool-adjacent-violators algorithm:
# gold in score order 1, 3, 2, 4 -> the violating pair (3, 2) pools to 2.5.
# ties: scores (0, 0, 1) with gold (0, 2, 0) -> knot 0 has mean 1 (weight 2), knot 1 has 0;
#   they violate and pool to (2*1 + 0) / 3 = 2/3 at both knots.
FIT_CASES = [
    ([1, 2, 3, 4], [1, 3, 2, 4], (1, 2, 3, 4), (1.0, 2.5, 2.5, 4.0)),
    ([0, 0, 1], [0, 2, 0], (0, 1), (2 / 3, 2 / 3)),
    ([3, 1, 2], [3, 1, 2], (1, 2, 3), (1.0, 2.0, 3.0)),
]


@pytest.mark.parametrize(("scores", "gold", "knots", "values"), FIT_CASES)
def test_fit_isotonic_by_hand(scores, gold, knots, values) -> None:
    mapping = fit_isotonic(scores, gold)
    assert mapping.knots == pytest.approx(knots, abs=TOL)
    assert mapping.values == pytest.approx(values, abs=TOL)


def test_map_interpolates_between_knots_and_holds_at_the_ends() -> None:
    mapping = fit_isotonic([0, 2], [1, 3])
    # halfway between knots 0 -> 1 and 2 -> 3; outside, the end values
    assert mapping(1.0) == pytest.approx(2.0, abs=TOL)
    assert mapping(-5.0) == pytest.approx(1.0, abs=TOL)
    assert mapping(9.0) == pytest.approx(3.0, abs=TOL)
    assert mapping.apply([None, 0.0]) == [None, pytest.approx(1.0, abs=TOL)]


def test_fit_is_monotone_on_random_data() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    y = x + rng.normal(size=200)
    mapping = fit_isotonic(x, y)
    assert all(a <= b + TOL for a, b in zip(mapping.values, mapping.values[1:], strict=False))
    # least squares: no worse than the best constant
    fitted = np.array(mapping.apply(list(x)), dtype=float)
    assert ((fitted - y) ** 2).sum() <= ((y.mean() - y) ** 2).sum()


def test_fit_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        fit_isotonic([], [])
    with pytest.raises(ValueError, match="paired"):
        fit_isotonic([1, 2], [1])


def test_session_folds_keep_sessions_together() -> None:
    groups = ["a", "a", "b", "c", "c", "d"]
    assert session_folds(groups) == [0, 0, 1, 2, 2, 3]
    two = session_folds(groups, folds=2, seed=1)
    assert two[0] == two[1] and two[3] == two[4]
    assert sorted(set(two)) == [0, 1]
    with pytest.raises(ValueError):
        session_folds(groups, folds=1)


def test_out_of_fold_never_uses_the_items_own_session() -> None:
    # Session "a" alone says score 1 -> gold 3; the other sessions say score 1 -> gold 0.
    # Out of fold, a's item must get the others' value (0), not its own.
    scores = [1, 1, 1, 2]
    gold = [3, 0, 0, 3]
    groups = ["a", "b", "c", "d"]
    calibrated = out_of_fold_calibration(scores, gold, groups)
    assert calibrated[0] == pytest.approx(0.0, abs=TOL)
    # b is fitted on a (1 -> 3), c (1 -> 0), d (2 -> 3): knot 1 = 1.5
    assert calibrated[1] == pytest.approx(1.5, abs=TOL)
    # d is fitted on a, b, c only: every knot is score 1, mean gold 1
    assert calibrated[3] == pytest.approx(1.0, abs=TOL)


def test_missing_scores_stay_missing_and_missing_gold_is_not_fitted() -> None:
    calibrated = out_of_fold_calibration([None, 1, 2, 2], [3, 1, None, 3], ["a", "b", "c", "d"])
    assert calibrated[0] is None
    # c is fitted on b (1 -> 1) and d (2 -> 3): its score 2 maps to 3
    assert calibrated[2] == pytest.approx(3.0, abs=TOL)


def test_cross_validated_calibration_fixes_a_shifted_scale() -> None:
    # A judge that ranks perfectly but answers one below gold: calibration moves it back,
    # which MAE shows (rank correlation is unchanged).
    rng = np.random.default_rng(0)
    gold = rng.integers(1, 4, size=120).tolist()
    scores = [g - 1 for g in gold]
    groups = [i // 4 for i in range(120)]
    block = cross_validated_calibration(scores, gold, groups, scale=(0, 3))
    assert block is not None
    assert block["leave_one_session_out"] and block["folds"] == 30
    assert block["raw"]["mae"] == pytest.approx(1.0, abs=TOL)
    assert block["calibrated"]["mae"] == pytest.approx(0.0, abs=TOL)
    assert block["calibrated"]["cohen_kappa_weighted"] == pytest.approx(1.0, abs=TOL)
    assert block["raw"]["spearman"] == pytest.approx(1.0, abs=TOL)


def test_cross_validated_calibration_needs_two_sessions() -> None:
    assert cross_validated_calibration([1, 2], [1, 2], ["a", "a"]) is None


def test_agreement_kappa_on_the_scale() -> None:
    # By hand: rounded (0, 1, 3, 3) vs gold (0, 1, 2, 3); binary at 2: (0, 0, 1, 1) both.
    out = agreement([0.2, 1.4, 2.6, 3.0], [0, 1, 2, 3], scale=(0, 3))
    assert out["cohen_kappa_binary"] == pytest.approx(1.0, abs=TOL)
    assert out["mae"] == pytest.approx((0.2 + 0.4 + 0.6 + 0.0) / 4, abs=TOL)
    assert out["n"] == 4


def test_large_runs_calibrate_on_ten_folds_of_sessions() -> None:
    # 1,001 sessions of two items: past LEAVE_ONE_OUT_MAX the fit leaves a tenth out
    from genir_eval.meta.calibration import LARGE_RUN_FOLDS, LEAVE_ONE_OUT_MAX

    rng = np.random.default_rng(0)
    sessions = LEAVE_ONE_OUT_MAX + 1
    groups = [f"s{i // 2}" for i in range(2 * sessions)]
    gold = rng.integers(0, 4, size=2 * sessions).astype(float)
    scores = (gold + rng.normal(scale=0.8, size=gold.size)).tolist()
    block = cross_validated_calibration(scores, gold.tolist(), groups, scale=(0, 3))
    assert block is not None
    assert block["folds"] == LARGE_RUN_FOLDS and not block["leave_one_session_out"]
    small = cross_validated_calibration(scores[:20], gold[:20].tolist(), groups[:20])
    assert small is not None and small["folds"] == 10 and small["leave_one_session_out"]
