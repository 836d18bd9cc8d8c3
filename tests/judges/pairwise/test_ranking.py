"""Bradley-Terry with ties (Davidson), style control and intransitive cycles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize

from genir_eval.judges.pairwise.ranking import (
    Outcomes,
    _negative_log_likelihood,
    bootstrap_scores,
    count_cycles,
    elo,
    fit_davidson,
    style_differences,
    style_fit,
    win_matrix,
)

#: The Elo scale from its definition, not from the module: 400 points per factor of 10 in
#: the odds, so 400 / ln 10 per unit of log-strength (ln 10 = 2.302585092994046).
ELO_POINTS_PER_UNIT = 400 / 2.302585092994046


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
    # 173.72 Elo points per unit: x is ln 2 * 173.72 = 120.41 points above y, each 60.2 from
    # the mean strength at 1000
    assert scores[0] - scores[1] == pytest.approx(ELO_POINTS_PER_UNIT * math.log(2), abs=0.5)
    assert scores[0] - scores[1] == pytest.approx(120.41, abs=0.5)
    assert scores == pytest.approx([1060.2, 939.8], abs=0.5)


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


def test_style_differences_are_a_minus_b_over_their_sum() -> None:
    # by hand: length (300 - 100) / 400 = 0.5, sources (1 - 3) / 4 = -0.5, markup both 0
    assert style_differences(
        {"length": 300, "sources": 1, "markup": 0}, {"length": 100, "sources": 3, "markup": 0}
    ) == [0.5, -0.5, 0.0]
    assert style_differences({}, {"length": 5}) == [-1.0, 0.0, 0.0]


def test_a_longer_winner_gives_a_positive_length_coefficient_from_rows() -> None:
    # the rows as pairs.jsonl holds them: the longer answer wins whichever side it is on,
    # so the coefficient of (length_a - length_b) is positive, and the sources coefficient
    # (the longer answer cites fewer) is not what explains it
    rng = np.random.default_rng(2)
    rows = []
    for q in range(120):
        la, lb = (int(x) for x in rng.integers(50, 400, 2))
        if la == lb:
            continue
        rows.append(
            {
                "session_id": f"q{q}",
                "turn": 1,
                "a": "x" if q % 2 else "y",
                "b": "y" if q % 2 else "x",
                "winner": "a" if la > lb else "b",
                "style": {
                    "a": {"length": la, "sources": 2, "markup": 0},
                    "b": {"length": lb, "sources": 2, "markup": 0},
                },
            }
        )
    fit = style_fit(Outcomes.from_rows(["x", "y"], rows))
    assert fit.beta["length"] > 5
    assert fit.beta["sources"] == pytest.approx(0.0, abs=1e-6)


def _davidson_by_scipy(o: Outcomes) -> tuple[np.ndarray, float]:
    """Davidson's model fitted independently: the likelihood written out pair by pair
    (P(a) = e^(d/2) / Z, P(b) = e^(-d/2) / Z, P(tie) = nu / Z) and minimised by Nelder-Mead
    with no gradient; theta centred to mean 0."""
    k = len(o.systems)

    def nll(params: np.ndarray) -> float:
        theta, nu = params[:k], math.exp(params[k])
        total = 0.0
        for a, b, r in zip(o.a, o.b, o.result, strict=True):
            d = theta[a] - theta[b]
            z = math.exp(d / 2) + math.exp(-d / 2) + nu
            p = math.exp(d / 2) if r == 1.0 else math.exp(-d / 2) if r == 0.0 else nu
            total -= math.log(p / z)
        return total

    found = minimize(
        nll, np.zeros(k + 1), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10}
    )
    theta = found.x[:k] - found.x[:k].mean()
    return theta, math.exp(found.x[k])


def test_three_systems_match_an_independent_scipy_fit() -> None:
    # x beats y 5-2 (1 tie), y beats z 4-1 (2 ties), x beats z 3-0 (1 tie): not saturated
    results = (
        [(0, 1, 1.0)] * 5
        + [(0, 1, 0.0)] * 2
        + [(0, 1, 0.5)]
        + [(1, 2, 1.0)] * 4
        + [(1, 2, 0.0)]
        + [(1, 2, 0.5)] * 2
        + [(2, 0, 0.0)] * 3
        + [(2, 0, 0.5)]
    )
    o = _outcomes(results)
    theta, nu = _davidson_by_scipy(o)
    fit = fit_davidson(o)
    assert fit.theta == pytest.approx(theta, abs=2e-3)
    assert fit.nu == pytest.approx(nu, abs=2e-3)
    assert theta[0] > theta[1] > theta[2]
    assert elo(fit.theta) == pytest.approx(1000 + ELO_POINTS_PER_UNIT * theta, abs=0.5)


def _closed_form_bootstrap(wins: int, losses: int, resamples: int, seed: int) -> np.ndarray:
    """Two systems, one pair per query, no ties: a resample of the queries holds
    Binomial(n, W/n) wins, and the saturated fit gives theta_x - theta_y = ln(W* / L*), so
    x's Elo score is 1000 + 173.72 * ln(W* / L*) / 2. Independent of the module: no fit, its
    own draws."""
    rng = np.random.default_rng(seed)
    n = wins + losses
    drawn = rng.binomial(n, wins / n, size=resamples)
    drawn = drawn[(drawn > 0) & (drawn < n)]
    return 1000 + ELO_POINTS_PER_UNIT * np.log(drawn / (n - drawn)) / 2


def _share_inside(values: np.ndarray, lo: float, hi: float) -> float:
    return float(np.mean((values >= lo - 1e-6) & (values <= hi + 1e-6)))


#: x beats y on 140 of 200 queries (one pair each): x's score is 1000 + 86.86 ln(7/3) = 1073.6
WINS, LOSSES = 140, 60


def test_bootstrap_draws_have_the_spread_of_the_sampling_distribution() -> None:
    # a refit on the full data in every resample would give draws without spread (every
    # interval a point); the spread of x's score must be the closed-form bootstrap's
    o = _outcomes([(0, 1, 1.0)] * WINS + [(0, 1, 0.0)] * LOSSES)
    draws = bootstrap_scores(o, resamples=1000, seed=3)
    assert draws.shape == (1000, 2)
    reference = _closed_form_bootstrap(WINS, LOSSES, 200_000, 1)
    point = elo(fit_davidson(o).theta)[0]
    assert point == pytest.approx(1000 + ELO_POINTS_PER_UNIT * math.log(7 / 3) / 2, abs=0.5)
    assert point == pytest.approx(1073.6, abs=0.5)
    # the sampling distribution's standard deviation, about 14.2 Elo points
    assert draws[:, 0].std() == pytest.approx(reference.std(), rel=0.08)
    assert draws[:, 0].std() == pytest.approx(14.2, abs=1.0)
    assert draws[:, 0] + draws[:, 1] == pytest.approx(2000.0, abs=1e-6)  # centred
    # the 2.5th and 97.5th percentiles of the draws hold 95% of the sampling distribution
    lo, hi = np.percentile(draws[:, 0], [2.5, 97.5])
    assert lo < point < hi
    assert 0.935 <= _share_inside(reference, lo, hi) <= 0.975
    # the seed is the resampling's: another seed, other draws, about the same spread
    other = bootstrap_scores(o, resamples=1000, seed=4)
    assert not np.array_equal(other, draws)
    assert other[:, 0].std() == pytest.approx(reference.std(), rel=0.08)
    assert np.array_equal(bootstrap_scores(o, resamples=20, seed=3), draws[:20])


def test_the_arena_table_interval_is_the_95_percent_one() -> None:
    # the arena's table: each system's score with the 2.5th-97.5th percentile interval of
    # its bootstrap draws; against the closed-form sampling distribution it holds 95% (a
    # 90% interval holds 90%)
    from genir_eval.runner.arena import _systems_table

    o = _outcomes([(0, 1, 1.0)] * WINS + [(0, 1, 0.0)] * LOSSES)
    table = _systems_table(["x", "y"], o, 1500, 5)
    assert [row["name"] for row in table] == ["x", "y"]
    x = table[0]
    assert x["score"] == pytest.approx(1073.6, abs=0.5)
    assert (x["wins"], x["ties"], x["losses"]) == (WINS, 0, LOSSES)
    lo, hi = x["ci95"]
    reference = _closed_form_bootstrap(WINS, LOSSES, 200_000, 1)
    assert 0.935 <= _share_inside(reference, lo, hi) <= 0.975
    # y mirrors x about 1000
    assert table[1]["ci95"] == pytest.approx([2000 - hi, 2000 - lo], abs=1e-6)
    assert _systems_table(["x", "y"], o, 0, 5)[0]["ci95"] is None


def test_bootstrap_resamples_queries_not_pairs() -> None:
    # every query holds one win of x and one loss: each query is a 1-1 draw, so every
    # resample of queries gives equal strengths; resampling pairs one at a time would not
    results = [(0, 1, 1.0), (0, 1, 0.0)] * 20
    o = Outcomes(
        ("x", "y"),
        np.array([a for a, _, _ in results]),
        np.array([b for _, b, _ in results]),
        np.array([r for _, _, r in results]),
        np.repeat(np.arange(20), 2),
        np.zeros((40, 3)),
    )
    draws = bootstrap_scores(o, resamples=200, seed=0)
    assert draws == pytest.approx(1000.0, abs=1e-3)


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
