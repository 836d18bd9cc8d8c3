"""Prediction-powered inference for a system-level mean.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference" (Science
2023): with a judge's score ``f`` on many sessions and gold ``Y`` on a small labelled
subset, the mean of ``Y`` over the population is estimated by the judge's mean over the
unlabelled sessions corrected by the judge's mean error on the labelled ones (the
"rectifier"):

    theta_PP = mean_N f(X~) - mean_n (f(X) - Y)

with the normal interval ``theta_PP +- z sqrt(var(f(X~)) / N + var(f(X) - Y) / n)``. It is
valid however biased the judge is (a bad judge only widens the interval) because the
rectifier is estimated on gold; a good judge narrows it below the classical interval of
the gold mean alone. ARES (Saad-Falcon et al., NAACL 2024) applies it to RAG evaluation,
as genir-eval does to session metrics.

``power_tuned`` adds the weight ``lambda`` of PPI++ (Angelopoulos, Duchi and Zrnic 2023,
"PPI++: efficient prediction-powered inference"): ``mean_n Y + lambda (mean_N f(X~) -
mean_n f(X))`` with the variance-minimising ``lambda`` estimated from the data and clipped
to [0, 1], so a judge on another scale (1-10 against 1-5) or an uninformative one costs
little against the classical interval (lambda = 1 is classic PPI, 0 the gold mean alone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["MeanEstimate", "ppi_mean", "classical_mean", "ppi_block"]

Number = float | int


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its normal confidence interval at level ``level``."""

    estimate: float
    ci: tuple[float, float]
    std_error: float
    level: float
    n_labelled: int
    n_unlabelled: int
    weight: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci)
        return out


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2.0))


Bounds = tuple[float, float]


def _within(lo: float, hi: float, bounds: Bounds | None) -> tuple[float, float]:
    """The interval clipped to the scale: a mean of values on 1-5 is never above 5."""
    if bounds is None:
        return lo, hi
    return max(lo, bounds[0]), min(hi, bounds[1])


def classical_mean(
    gold: Sequence[Number], *, level: float = 0.95, bounds: Bounds | None = None
) -> MeanEstimate:
    """The gold mean with its normal (CLT) interval (clipped to ``bounds``, the scale's
    ends, when given): the reference PPI should beat."""
    y = np.asarray(gold, dtype=float)
    if y.size < 2:
        raise ValueError(f"need at least 2 gold values, got {y.size}")
    se = float(y.std(ddof=1) / math.sqrt(y.size))
    mean = float(y.mean())
    half = _z(level) * se
    return MeanEstimate(mean, _within(mean - half, mean + half, bounds), se, level, int(y.size), 0)


def ppi_mean(
    judged_labelled: Sequence[Number],
    gold: Sequence[Number],
    judged_unlabelled: Sequence[Number],
    *,
    level: float = 0.95,
    power_tuned: bool = False,
    bounds: Bounds | None = None,
) -> MeanEstimate:
    """Prediction-powered estimate of the mean of gold over the population.

    ``judged_labelled[i]`` and ``gold[i]`` are the judge's score and the gold value of the
    i-th labelled session; ``judged_unlabelled`` the judge's scores on sessions without
    gold, drawn from the same population. Classic PPI unless ``power_tuned`` (PPI++, the
    weight is reported as ``weight``). The interval is clipped to ``bounds`` (the gold
    scale's ends) when given: the normal interval can run past them, the mean cannot. Raises ``ValueError`` with fewer than 2 labelled or
    2 unlabelled values.
    """
    f_lab = np.asarray(judged_labelled, dtype=float)
    y = np.asarray(gold, dtype=float)
    f_unl = np.asarray(judged_unlabelled, dtype=float)
    if f_lab.shape != y.shape:
        raise ValueError(f"labelled scores and gold differ in length: {f_lab.size} and {y.size}")
    n, big_n = int(y.size), int(f_unl.size)
    if n < 2 or big_n < 2:
        raise ValueError(f"need at least 2 labelled and 2 unlabelled values, got {n} and {big_n}")
    weight = 1.0
    if power_tuned:
        # Var(estimate) = lam^2 Var(f)/N + Var(Y - lam f)/n is minimised at
        # lam = Cov(Y, f) / ((1 + n/N) Var(f)); Var(f) pools both samples (PPI++, eq. 7 for
        # the mean).
        var_f = float(np.concatenate([f_lab, f_unl]).var(ddof=1))
        if var_f > 0.0:
            cov = float(np.cov(y, f_lab, ddof=1)[0, 1])
            weight = min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_f)))
        else:
            weight = 0.0
    estimate = float(y.mean() + weight * (f_unl.mean() - f_lab.mean()))
    variance = (
        weight**2 * float(f_unl.var(ddof=1)) / big_n + float((y - weight * f_lab).var(ddof=1)) / n
    )
    se = math.sqrt(max(variance, 0.0))
    half = _z(level) * se
    return MeanEstimate(
        estimate,
        _within(estimate - half, estimate + half, bounds),
        se,
        level,
        n,
        big_n,
        weight if power_tuned else None,
    )


def ppi_block(
    judged: Sequence[Number | None],
    gold: Sequence[Number | None],
    *,
    metric: str,
    level: float = 0.95,
    bounds: Bounds | None = None,
) -> dict[str, Any]:
    """The PPI report for one metric over sessions: ``judged[i]`` and ``gold[i]`` belong to
    session i (``None`` where missing).

    Sessions with both values are the labelled set, sessions with only the judge's value
    the unlabelled set; a session with gold but no judged value cannot enter either (it is
    counted as ``dropped``). Reports the judge's naive mean over every judged session, the
    gold mean with its classical interval, and PPI (classic and power-tuned) when there are
    at least 2 sessions of each kind; otherwise ``ppi`` is ``None`` with the reason. Every
    interval is clipped to ``bounds``, the scale's ends, when given.
    """
    labelled = [
        (float(f), float(y))
        for f, y in zip(judged, gold, strict=True)
        if f is not None and y is not None
    ]
    unlabelled = [
        float(f) for f, y in zip(judged, gold, strict=True) if f is not None and y is None
    ]
    every_judged = [float(f) for f in judged if f is not None]
    out: dict[str, Any] = {
        "metric": metric,
        "level": level,
        "n_labelled": len(labelled),
        "n_unlabelled": len(unlabelled),
        "dropped": sum(1 for f, y in zip(judged, gold, strict=True) if f is None and y is not None),
        "judge_mean": float(np.mean(every_judged)) if every_judged else None,
        "gold_mean": None,
        "ppi": None,
        "ppi_tuned": None,
        "reason": None,
    }
    if len(labelled) >= 2:
        out["gold_mean"] = classical_mean(
            [y for _, y in labelled], level=level, bounds=bounds
        ).as_dict()
    if len(labelled) < 2:
        out["reason"] = "fewer than 2 sessions carry both gold and the judge's score"
    elif len(unlabelled) < 2:
        out["reason"] = (
            "every judged session carries gold: the gold mean is the estimate "
            "(PPI needs sessions without gold)"
        )
    else:
        f_lab = [f for f, _ in labelled]
        y = [g for _, g in labelled]
        out["ppi"] = ppi_mean(f_lab, y, unlabelled, level=level, bounds=bounds).as_dict()
        out["ppi_tuned"] = ppi_mean(
            f_lab, y, unlabelled, level=level, power_tuned=True, bounds=bounds
        ).as_dict()
    return out
