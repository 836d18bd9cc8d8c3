"""Bradley-Terry with ties (Davidson), style control and intransitive cycles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import check_grad

from genir_eval.judges.pairwise.ranking import (
    ELO_SCALE,
    Outcomes,
    _negative_log_likelihood,
    bootstrap_scores,
    count_cycles,
    elo,
    fit_davidson,
    style_fit,
    win_matrix,
)


def _outcomes(
    results: list[tuple[int, int, float]], style: list[list[float]] | None = None
) -> Outcomes:
    n = len(results)
    return Outcomes(
        ("x", "y", "z")[: 1 + max(max(a, b) for a, b, _ in results)],
        np.array([a for a, _, _ in results]),
        np.array([b for _, b, _ in results]),
        np.array([r for _, _, r in results]),
        np.arange(n),
        np.asarray(style if style is not None else np.zeros((n, 3)), dtype=float).reshape(n, 3),
    )


def test_two_systems_match_the_closed_form() -> None:
    # Worked by hand: with two systems Davidson's model is saturated, so the MLE reproduces
    # the observed shares: x won 2, lost 1, tied 1 -> e^d = 2/1, nu = T / sqrt(W L) = 1/sqrt 2.
    fit = fit_davidson(_outcomes([(0, 1, 1.0), (0, 1, 1.0), (0, 1, 0.0), (0, 1, 0.5)]))
    assert fit.theta[0] - fit.theta[1] == pytest.approx(math.log(2), abs=2e-3)
    assert fit.nu == pytest.approx(1 / math.sqrt(2), abs=2e-3)
    assert fit.theta.sum() == pytest.approx(0.0, abs=1e-9)
    scores = elo(fit.theta)
    assert scores[0] - scores[1] == pytest.approx(ELO_SCALE * math.log(2), abs=1.0)


def test_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    results = [
        (int(a), int((a + 1 + rng.integers(0, 2)) % 3), float(rng.choice([0, 0.5, 1])))
        for a in rng.integers(0, 3, 60)
    ]
    style = rng.normal(size=(60, 3)).tolist()
    o = _outcomes(results, style)
    w = np.ones(60)
    for point in (np.zeros(7), rng.normal(size=7) * 0.5):
        error = check_grad(
            lambda p: _negative_log_likelihood(p, o, w, 3, 3)[0],
            lambda p: _negative_log_likelihood(p, o, w, 3, 3)[1],
            point,
        )
        assert error < 1e-4


def test_style_coefficient_explains_a_length_preference() -> None:
    # Three equally good systems; the longer answer always wins: the style fit puts the
    # effect on length and leaves the systems level.
    rng = np.random.default_rng(0)
    results, style = [], []
    for _ in range(300):
        a, b = rng.choice(3, 2, replace=False)
        la, lb = rng.integers(50, 400, 2)
        results.append((int(a), int(b), 1.0 if la > lb else 0.0))
        style.append([(la - lb) / (la + lb), 0.0, 0.0])
    o = _outcomes(results, style)
    fit = style_fit(o)
    assert fit.beta["length"] > 5
    assert np.ptp(fit.theta) < 0.5


def test_bootstrap_interval_contains_the_estimate() -> None:
    o = _outcomes([(0, 1, 1.0)] * 8 + [(0, 1, 0.0)] * 4 + [(1, 2, 1.0)] * 6 + [(1, 2, 0.5)] * 2)
    draws = bootstrap_scores(o, resamples=50, seed=3)
    point = elo(fit_davidson(o).theta)
    lo, hi = np.percentile(draws, [2.5, 97.5], axis=0)
    assert np.all(lo <= point + 1e-6) and np.all(point <= hi + 1e-6)
    assert draws.shape == (50, 3)


def test_win_matrix_counts_both_sides() -> None:
    m = win_matrix(_outcomes([(0, 1, 1.0), (0, 1, 0.5), (1, 0, 1.0)]))
    assert m["x"]["y"] == {"wins": 1, "ties": 1, "losses": 1}
    assert m["y"]["x"] == {"wins": 1, "ties": 1, "losses": 1}


def _row(q: str, a: str, b: str, winner: str) -> dict[str, object]:
    return {"session_id": q, "turn": 1, "a": a, "b": b, "winner": winner}


def test_intransitive_cycles_are_counted_per_query() -> None:
    rows = [
        # q1: x > y > z > x, a cycle
        _row("q1", "x", "y", "a"),
        _row("q1", "y", "z", "a"),
        _row("q1", "x", "z", "b"),
        # q2: transitive
        _row("q2", "x", "y", "a"),
        _row("q2", "y", "z", "a"),
        _row("q2", "x", "z", "a"),
        # q3: a tie leaves no decided triad
        _row("q3", "x", "y", "a"),
        _row("q3", "y", "z", "tie"),
        _row("q3", "x", "z", "b"),
    ]
    outcomes = Outcomes.from_rows(["x", "y", "z"], rows)
    assert count_cycles(outcomes) == {"cycles": 1, "triads": 2, "queries": 3}
