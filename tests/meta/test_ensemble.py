"""The judge ensemble, fitted on some sessions' gold and scored on the others."""

from __future__ import annotations

import numpy as np
import pytest

from genir_eval.meta.ensemble import cross_validated_ensemble, fit_ridge

TOL = 1e-9


def test_ridge_recovers_an_exact_linear_relation() -> None:
    # gold = 2 + x1 - 0.5 x2 exactly; with no penalty the fit predicts new rows exactly
    # (computed by hand from the formula).
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2))
    y = 2.0 + x @ np.array([1.0, -0.5])
    model = fit_ridge(x, y, alpha=0.0)
    new = rng.normal(size=(5, 2))
    assert np.allclose(model.predict(new), 2.0 + new @ np.array([1.0, -0.5]), atol=1e-9)
    # A penalty shrinks the weights toward 0, never past it.
    shrunk = fit_ridge(x, y, alpha=1000.0)
    assert np.all(np.abs(shrunk.weights) < np.abs(model.weights))
    assert np.all(np.sign(shrunk.weights) == np.sign(model.weights))


def test_a_complementary_pair_helps_and_noise_does_not() -> None:
    # gold = signal a + signal b (+ a coin): either alone ranks it partly, the fitted sum
    # better. Then a pure-noise member beside a good one: the ensemble cannot beat the
    # good one.
    rng = np.random.default_rng(1)
    n = 160
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    gold = (a + b + (rng.random(n) < 0.5)).tolist()
    groups = [f"s{i // 10}" for i in range(n)]
    both = cross_validated_ensemble({"a": a.tolist(), "b": b.tolist()}, gold, groups, splits=50)
    assert both["helps"] is True and both["wins"] > 0.9
    assert both["n_links"] == n and both["n_sessions"] == 16
    good = (np.asarray(gold) + rng.normal(scale=0.3, size=n)).tolist()
    noise = rng.normal(size=n).tolist()
    noisy = cross_validated_ensemble({"good": good, "noise": noise}, gold, groups, splits=50)
    assert noisy["best_member"] == "good"
    assert noisy["ensemble"]["spearman"] <= noisy["single"]["good"]["spearman"] + 0.02


def test_links_a_member_did_not_score_are_left_out_and_counted() -> None:
    gold = [0, 1, 2, 3] * 4
    groups = [g for g in "abcd" for _ in range(4)]
    first = [0.0, 1.0, 2.0, 3.0] * 4
    second: list[float | None] = [0.5, None, 2.5, 3.5] * 4
    out = cross_validated_ensemble({"x": first, "y": second}, gold, groups, splits=10)
    assert out["n_links"] == 12 and out["n_left_out"] == 4
    with pytest.raises(ValueError, match="at least two"):
        cross_validated_ensemble({"x": first}, gold, groups)
    with pytest.raises(ValueError, match="scores 3 links"):
        cross_validated_ensemble({"x": first, "y": [1.0, 2.0, 3.0]}, gold, groups)
    with pytest.raises(ValueError, match="at least 4 sessions"):
        cross_validated_ensemble({"x": first[:12], "y": second[:12]}, gold[:12], groups[:12])
