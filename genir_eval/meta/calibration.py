"""Calibration of judge scores against gold: a monotone map, fitted and scored out of fold.

A judge's scores may rank items well and still sit on the wrong scale (a small model that
answers 2 where the experts say 3). :func:`fit_isotonic` fits the least-squares monotone
non-decreasing map from judge scores to gold labels (isotonic regression by the pool
adjacent violators algorithm, ``scipy.optimize.isotonic_regression``; Zadrozny and Elkan
2002 use it to calibrate classifier scores). :func:`cross_validated_calibration` never
scores the map on the items it was fitted on: items are grouped by session and each
session's items get the map fitted on the other sessions only (leave-sessions-out), so the
"calibrated" figures are what the map does on sessions it has not seen.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from genir_eval.meta.stats import binarize, cohen_kappa, correlations, mae, pairwise_auc

__all__ = [
    "LARGE_RUN_FOLDS",
    "LEAVE_ONE_OUT_MAX",
    "IsotonicMap",
    "fit_isotonic",
    "session_folds",
    "out_of_fold_calibration",
    "cross_validated_calibration",
    "agreement",
]

#: Calibration leaves one session out up to this many sessions; past it, it fits on
#: :data:`LARGE_RUN_FOLDS` folds of sessions (leave-one-out would fit one map per session,
#: time growing with the square of the run).
LEAVE_ONE_OUT_MAX = 1_000
LARGE_RUN_FOLDS = 10

Number = float | int


@dataclass(frozen=True)
class IsotonicMap:
    """A monotone non-decreasing step map: ``knots`` are the distinct judge scores seen in
    fitting, ``values`` the fitted gold level at each. Between knots the map interpolates
    linearly, outside it holds the end values."""

    knots: tuple[float, ...]
    values: tuple[float, ...]

    def __call__(self, score: float) -> float:
        return float(np.interp(score, self.knots, self.values))

    def apply(self, scores: Sequence[float | None]) -> list[float | None]:
        return [None if _missing(s) else self(float(s)) for s in scores]  # type: ignore[arg-type]


def _as_floats(values: Sequence[Number | None]) -> np.ndarray:
    """``values`` as a float array, NaN where missing."""
    return np.array([math.nan if _missing(v) else float(v) for v in values], dtype=np.float64)  # type: ignore[arg-type]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fit_isotonic(
    scores: Sequence[Number], gold: Sequence[Number], weights: Sequence[Number] | None = None
) -> IsotonicMap:
    """The least-squares monotone non-decreasing map from ``scores`` to ``gold``.

    Tied scores are pooled first (their weighted mean gold, their summed weight), so one
    score maps to one value whatever the order of the ties. Raises ``ValueError`` on empty
    or unequal inputs.
    """
    if len(scores) != len(gold) or not len(scores):
        raise ValueError(f"need paired, non-empty inputs; got {len(scores)} and {len(gold)}")
    from scipy.optimize import isotonic_regression

    x = np.asarray(scores, dtype=float)
    y = np.asarray(gold, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    knots, inverse = np.unique(x, return_inverse=True)
    pooled_w = np.bincount(inverse, weights=w)
    pooled_y = np.bincount(inverse, weights=w * y) / pooled_w
    fitted = isotonic_regression(pooled_y, weights=pooled_w, increasing=True).x
    return IsotonicMap(tuple(float(k) for k in knots), tuple(float(v) for v in fitted))


def session_folds(groups: Sequence[Hashable], folds: int | None = None, seed: int = 0) -> list[int]:
    """A fold number per item such that all items of a group (a session) share a fold.

    ``folds=None`` (or at least the number of groups) is leave-one-session-out; otherwise
    the groups are shuffled with ``numpy.random.default_rng(seed)`` and dealt round-robin
    into ``folds`` folds."""
    distinct = list(dict.fromkeys(groups))
    if folds is None or folds >= len(distinct):
        fold_of = {g: i for i, g in enumerate(distinct)}
    else:
        if folds < 2:
            raise ValueError(f"folds must be at least 2, got {folds}")
        order = np.random.default_rng(seed).permutation(len(distinct))
        fold_of = {distinct[j]: rank % folds for rank, j in enumerate(order)}
    return [fold_of[g] for g in groups]


def out_of_fold_calibration(
    scores: Sequence[Number | None],
    gold: Sequence[Number | None],
    groups: Sequence[Hashable],
    *,
    folds: int | None = None,
    seed: int = 0,
) -> list[float | None]:
    """Each item's calibrated score from the map fitted on the other folds' items only.

    Items with a missing score stay missing; items with a missing gold label are
    calibrated but not fitted on. An item whose training folds hold no usable pair is
    ``None``."""
    if not (len(scores) == len(gold) == len(groups)):
        raise ValueError("scores, gold and groups differ in length")
    fold = np.asarray(session_folds(groups, folds, seed), dtype=np.intp)
    x = _as_floats(scores)
    y = _as_floats(gold)
    scored = ~np.isnan(x)
    usable = scored & ~np.isnan(y)
    out: list[float | None] = [None] * len(scores)
    # one pass over the items per fold, in numpy: folds x items, never items squared
    for k in np.unique(fold).tolist():
        train = usable & (fold != k)
        if not train.any():
            continue
        mapping = fit_isotonic(x[train], y[train])
        apply = np.flatnonzero(scored & (fold == k))
        mapped = np.interp(x[apply], mapping.knots, mapping.values)
        for i, value in zip(apply.tolist(), mapped.tolist(), strict=True):
            out[i] = value
    return out


def _rounded(values: Sequence[float | None], low: int, high: int) -> list[int | None]:
    return [None if v is None else int(min(high, max(low, math.floor(v + 0.5)))) for v in values]


def agreement(
    pred: Sequence[float | None],
    gold: Sequence[Number | None],
    *,
    scale: tuple[int, int] | None = None,
    n_boot: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Agreement of ``pred`` with ``gold``: Pearson, Spearman, Kendall, MAE, RMSE and
    pairwise AUC; on an integer ``scale`` ``(low, high)`` also Cohen's kappa, linearly
    weighted on the scale and binary (upper half vs lower half), of the rounded scores."""
    corr = correlations(pred, gold, n_boot=n_boot, seed=seed)
    pairs = [
        (float(p), float(g))  # type: ignore[arg-type]
        for p, g in zip(pred, gold, strict=True)
        if not _missing(p) and not _missing(g)
    ]
    out: dict[str, Any] = {
        "pearson": corr["pearson"],
        "spearman": corr["spearman"],
        "kendall": corr["kendall"],
        "mae": mae(pred, gold),
        "rmse": (math.sqrt(sum((p - g) ** 2 for p, g in pairs) / len(pairs)) if pairs else None),
        "pairwise_auc": pairwise_auc(pred, gold),
        "n": len(pairs),
    }
    if n_boot:
        out["ci95"] = corr["ci95"]
    if scale is not None:
        low, high = scale
        ints = _rounded(pred, low, high)
        gold_ints = [None if _missing(g) else int(g) for g in gold]  # type: ignore[arg-type]
        threshold = (low + high + 1) / 2
        out["cohen_kappa_weighted"] = cohen_kappa(
            ints, gold_ints, weights="linear", labels=list(range(low, high + 1))
        )
        out["cohen_kappa_binary"] = cohen_kappa(
            binarize(ints, threshold), binarize(gold_ints, threshold), labels=[0, 1]
        )
    return out


def cross_validated_calibration(
    scores: Sequence[Number | None],
    gold: Sequence[Number | None],
    groups: Sequence[Hashable],
    *,
    scale: tuple[int, int] | None = None,
    folds: int | None = None,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Raw and calibrated agreement with gold, the calibrated scores out of fold.

    ``raw`` scores the judge's own scores and ``calibrated`` the isotonic map's (each item
    mapped by the map fitted on the other sessions, :func:`out_of_fold_calibration`), both
    over the same items: those with a gold label and a calibrated score. ``None`` with
    fewer than two sessions carrying a usable pair (nothing to fit on). ``folds=None``
    leaves one session out, up to :data:`LEAVE_ONE_OUT_MAX` sessions; a larger run is
    split into :data:`LARGE_RUN_FOLDS` folds of sessions (``folds`` in the result says
    which).

    Read MAE and kappa: they measure what calibration changes, the scale. A monotone map
    keeps the ranking it is applied to, so rank figures of the calibrated scores only show
    the differences between the folds' maps, and with a judge that carries little signal
    leave-one-out's known negative bias (an item's map is fitted on data whose mean moves
    against the item's own gold) can push them below zero."""
    usable = {
        g
        for s, y, g in zip(scores, gold, groups, strict=True)
        if not _missing(s) and not _missing(y)
    }
    if len(usable) < 2:
        return None
    if folds is None and len(set(groups)) > LEAVE_ONE_OUT_MAX:
        folds = LARGE_RUN_FOLDS
    calibrated = out_of_fold_calibration(scores, gold, groups, folds=folds, seed=seed)
    keep = [i for i, c in enumerate(calibrated) if c is not None and not _missing(gold[i])]
    n_folds = len(set(session_folds(groups, folds, seed)))
    return {
        "method": "isotonic regression, fitted leaving sessions out",
        "folds": n_folds,
        "leave_one_session_out": folds is None or n_folds == len(set(groups)),
        "raw": agreement([scores[i] for i in keep], [gold[i] for i in keep], scale=scale),  # type: ignore[misc]
        "calibrated": agreement(
            [calibrated[i] for i in keep], [gold[i] for i in keep], scale=scale
        ),
    }
