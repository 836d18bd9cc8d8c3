"""Rankings from pairwise verdicts: Bradley-Terry with ties, intervals, style control, cycles.

- **Davidson's Bradley-Terry model with ties** (Davidson, JASA 1970): system ``i`` has a
  log-strength ``theta_i``; with ``d = theta_a - theta_b``,
  ``P(a wins) = e^(d/2) / Z``, ``P(b wins) = e^(-d/2) / Z``, ``P(tie) = nu / Z``,
  ``Z = e^(d/2) + e^(-d/2) + nu``. Fitted by maximum likelihood with scipy's BFGS
  (``theta`` centred to mean 0 after the fit; a tiny ridge, ``RIDGE``, keeps a system that
  never lost finite). Scores are shown on the Elo scale Chatbot Arena uses,
  ``1000 + 400 / ln 10 * theta``.
- **Bootstrap intervals over queries**: queries (session and turn) are resampled with
  replacement, all pairs of a query together, and the model refitted; the 2.5th and 97.5th
  percentiles of each score are its 95% interval.
- **Style control** (Search Arena, Miroyan et al. 2025, after Chatbot Arena's): the same
  model with ``d = theta_a - theta_b + sum_k beta_k * x_k``, ``x_k`` the normalised
  difference ``(f_a - f_b) / (f_a + f_b)`` of a style feature (length, distinct cited
  sources, markup); ``beta_k`` says how much that feature alone sways the verdicts, and the
  ``theta`` are the scores with style held equal.
- **Intransitive cycles**: per query, a directed graph (networkx) with an edge from each
  winner to its loser; each directed 3-cycle (a > b > c > a) is a preference the judge
  cannot hold consistently. Their count over the fully judged triads is a consistency figure
  of the judge, beside the position-consistency rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy.optimize import minimize

__all__ = [
    "ELO_SCALE",
    "RIDGE",
    "Outcomes",
    "Fit",
    "fit_davidson",
    "bootstrap_scores",
    "win_matrix",
    "style_fit",
    "count_cycles",
    "elo",
    "style_differences",
    "STYLE_FEATURES",
]

ELO_SCALE = 400.0 / math.log(10.0)
RIDGE = 1e-4
STYLE_FEATURES = ("length", "sources", "markup")


@dataclass(frozen=True)
class Outcomes:
    """Judged pairs as arrays: system indexes ``a``, ``b``; ``result`` 1 (a won), 0 (b won)
    or 0.5 (tie); ``query`` the query index of each pair; ``style`` (n x k) the normalised
    style differences (a minus b), or an empty (n x 0) array."""

    systems: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    result: np.ndarray
    query: np.ndarray
    style: np.ndarray

    @classmethod
    def from_rows(cls, systems: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> Outcomes:
        """From ``pairs.jsonl`` rows (missing verdicts left out: they are not outcomes)."""
        index = {name: i for i, name in enumerate(systems)}
        queries: dict[tuple[str, int], int] = {}
        a, b, result, query, style = [], [], [], [], []
        for row in rows:
            winner = row.get("winner")
            if winner is None:
                continue
            a.append(index[row["a"]])
            b.append(index[row["b"]])
            result.append(1.0 if winner == "a" else 0.0 if winner == "b" else 0.5)
            query.append(
                queries.setdefault((str(row["session_id"]), int(row["turn"])), len(queries))
            )
            found = row.get("style") or {}
            style.append(style_differences(found.get("a") or {}, found.get("b") or {}))
        return cls(
            tuple(systems),
            np.asarray(a, dtype=np.int64),
            np.asarray(b, dtype=np.int64),
            np.asarray(result, dtype=float),
            np.asarray(query, dtype=np.int64),
            np.asarray(style, dtype=float).reshape(len(a), len(STYLE_FEATURES)),
        )

    def __len__(self) -> int:
        return int(self.a.size)

    def take(self, index: np.ndarray) -> Outcomes:
        return Outcomes(
            self.systems,
            self.a[index],
            self.b[index],
            self.result[index],
            self.query[index],
            self.style[index],
        )


def style_differences(style_a: Mapping[str, float], style_b: Mapping[str, float]) -> list[float]:
    """The normalised differences ``(f_a - f_b) / (f_a + f_b)`` of the style features (0
    when both are 0), in :data:`STYLE_FEATURES` order."""
    return [_normalised(style_a.get(k, 0.0), style_b.get(k, 0.0)) for k in STYLE_FEATURES]


def _normalised(x: float, y: float) -> float:
    total = float(x) + float(y)
    return 0.0 if total == 0 else (float(x) - float(y)) / total


@dataclass(frozen=True)
class Fit:
    """A fitted Davidson model: log-strengths (mean 0), the tie parameter ``nu`` and, for a
    style-controlled fit, the style coefficients by feature name."""

    theta: np.ndarray
    nu: float
    beta: Mapping[str, float]
    log_likelihood: float


def _negative_log_likelihood(
    params: np.ndarray, o: Outcomes, weights: np.ndarray, k: int, n_style: int
) -> tuple[float, np.ndarray]:
    theta, log_nu, beta = params[:k], params[k], params[k + 1 :]
    d = theta[o.a] - theta[o.b]
    if n_style:
        d = d + o.style @ beta
    half = 0.5 * d
    nu = math.exp(log_nu)
    # log Z with the larger of the two exponentials factored out (no overflow)
    top = np.maximum(np.abs(half), 0.0)
    z = np.exp(half - top) + np.exp(-half - top) + nu * np.exp(-top)
    log_z = top + np.log(z)
    win_a, win_b, tie = o.result == 1.0, o.result == 0.0, o.result == 0.5
    log_p = np.where(win_a, half, np.where(win_b, -half, log_nu)) - log_z
    nll = -float(np.sum(weights * log_p)) + RIDGE * float(theta @ theta)
    # gradients: d log p / d half and d log p / d log_nu
    p_a = np.exp(half - top) / z
    p_b = np.exp(-half - top) / z
    p_t = nu * np.exp(-top) / z
    g_half = np.where(win_a, 1.0, np.where(win_b, -1.0, 0.0)) - (p_a - p_b)
    g_d = 0.5 * g_half * weights
    g_theta = np.bincount(o.a, weights=g_d, minlength=k) - np.bincount(
        o.b, weights=g_d, minlength=k
    )
    g_nu = float(np.sum(weights * (tie.astype(float) - p_t)))
    grad = np.concatenate([-g_theta + 2 * RIDGE * theta, [-g_nu]])
    if n_style:
        grad = np.concatenate([grad, -(o.style.T @ g_d)])
    return nll, grad


def fit_davidson(
    outcomes: Outcomes,
    *,
    weights: np.ndarray | None = None,
    style: bool = False,
    start: Fit | None = None,
) -> Fit:
    """The maximum-likelihood Davidson model of ``outcomes`` (``weights``: a count per pair,
    what a bootstrap resample gives); ``style`` adds the style covariates; ``start`` a fit
    to start from (a bootstrap refit starts from the full data's)."""
    k = len(outcomes.systems)
    n_style = outcomes.style.shape[1] if style else 0
    w = np.ones(len(outcomes)) if weights is None else np.asarray(weights, dtype=float)
    if not style:
        outcomes, w = _grouped(outcomes, w)
    x0 = np.zeros(k + 1 + n_style)
    if start is not None:
        x0[:k] = start.theta
        x0[k] = math.log(max(start.nu, 1e-9))
        x0[k + 1 :] = [start.beta.get(name, 0.0) for name in STYLE_FEATURES[:n_style]]
    else:
        ties = float(np.sum(w * (outcomes.result == 0.5)))
        x0[k] = math.log(max(ties, 0.5) / max(float(w.sum()), 1.0))
    # BFGS: unconstrained, and on a handful of parameters scipy's pure-Python BFGS costs
    # less per iteration than L-BFGS-B's compiled driver
    found = minimize(
        _negative_log_likelihood, x0, args=(outcomes, w, k, n_style), jac=True, method="BFGS"
    )
    theta = found.x[:k] - found.x[:k].mean()
    beta = {name: float(v) for name, v in zip(STYLE_FEATURES, found.x[k + 1 :], strict=False)}
    return Fit(theta, float(math.exp(found.x[k])), beta, -float(found.fun))


def _grouped(outcomes: Outcomes, weights: np.ndarray) -> tuple[Outcomes, np.ndarray]:
    """The same likelihood over at most ``3 k^2`` rows: pairs with the same systems and
    result summed into one weighted row (a bootstrap refit then costs microseconds)."""
    k = len(outcomes.systems)
    code = (outcomes.a * k + outcomes.b) * 3 + (2 * outcomes.result).astype(np.int64)
    counts = np.bincount(code, weights=weights, minlength=3 * k * k)
    present = np.flatnonzero(counts)
    pair, result = np.divmod(present, 3)
    a, b = np.divmod(pair, k)
    small = Outcomes(
        outcomes.systems,
        a,
        b,
        result / 2.0,
        np.zeros(present.size, dtype=np.int64),
        np.zeros((present.size, 0)),
    )
    return small, counts[present]


def elo(theta: np.ndarray) -> np.ndarray:
    """Log-strengths on the Elo scale (1000 at the mean strength)."""
    return 1000.0 + ELO_SCALE * np.asarray(theta)


def bootstrap_scores(
    outcomes: Outcomes, *, resamples: int = 200, seed: int = 0, style: bool = False
) -> np.ndarray:
    """(resamples x systems) Elo scores refitted on queries drawn with replacement."""
    rng = np.random.default_rng(seed)
    n_queries = int(outcomes.query.max()) + 1 if len(outcomes) else 0
    out = np.empty((resamples, len(outcomes.systems)))
    full = fit_davidson(outcomes, style=style)
    for r in range(resamples):
        drawn = np.bincount(rng.integers(0, n_queries, n_queries), minlength=n_queries)
        refit = fit_davidson(outcomes, weights=drawn[outcomes.query], style=style, start=full)
        out[r] = elo(refit.theta)
    return out


def win_matrix(outcomes: Outcomes) -> dict[str, dict[str, dict[str, int]]]:
    """``matrix[x][y] = {"wins", "ties", "losses"}`` of system ``x`` against ``y``."""
    names = outcomes.systems
    matrix = {x: {y: {"wins": 0, "ties": 0, "losses": 0} for y in names if y != x} for x in names}
    for i, j, r in zip(
        outcomes.a.tolist(), outcomes.b.tolist(), outcomes.result.tolist(), strict=True
    ):
        x, y = names[i], names[j]
        if r == 0.5:
            matrix[x][y]["ties"] += 1
            matrix[y][x]["ties"] += 1
        else:
            winner, loser = (x, y) if r == 1.0 else (y, x)
            matrix[winner][loser]["wins"] += 1
            matrix[loser][winner]["losses"] += 1
    return matrix


def style_fit(outcomes: Outcomes) -> Fit:
    """The style-controlled Davidson fit (see the module docstring)."""
    return fit_davidson(outcomes, style=True)


def count_cycles(outcomes: Outcomes) -> dict[str, int]:
    """Directed 3-cycles of the per-query preference graphs, and the triads they could be
    in (three systems all judged against each other with decided verdicts). One query's
    graph is built at a time."""
    decided = outcomes.result != 0.5
    query, result = outcomes.query[decided], outcomes.result[decided]
    winner = np.where(result == 1.0, outcomes.a[decided], outcomes.b[decided])
    loser = np.where(result == 1.0, outcomes.b[decided], outcomes.a[decided])
    order = np.argsort(query, kind="stable")
    starts = np.flatnonzero(np.diff(query[order], prepend=-1))
    cycles = triads = 0
    for rows in np.split(order, starts[1:]) if order.size else []:
        graph = nx.DiGraph()
        graph.add_edges_from(zip(winner[rows].tolist(), loser[rows].tolist(), strict=True))
        cycles += sum(1 for _ in nx.simple_cycles(graph, length_bound=3) if len(_) == 3)
        triads += sum(nx.triangles(graph.to_undirected()).values()) // 3
    return {"cycles": cycles, "triads": triads, "queries": int(starts.size)}
