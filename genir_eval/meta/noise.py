"""How noisy a judge is: the same items judged several times.

An LLM judge asked the same question twice may answer differently. With ``k`` judgments of
each of ``n`` items (a ``n x k`` table, rows the items):

- the **within-item spread**: the square root of the mean within-item variance (the
  judgments' standard deviation around their own item's mean, pooled over items);
- the **intraclass correlation** ICC(1,1) (Shrout & Fleiss 1979, one-way random effects,
  single rater): ``(MSB - MSW) / (MSB + (k - 1) MSW)``, the share of the labels' variance
  that lies between items rather than between repeats of one item; 1 when a judge always
  gives an item the same label, 0 when its labels say nothing the noise does not. Its 95%
  interval from the F distribution (Shrout & Fleiss 1979, Table 4): with ``F = MSB / MSW``,
  ``F_L = F / F(0.975; n - 1, n(k - 1))`` and ``F_U = F * F(0.975; n(k - 1), n - 1)``, the
  bounds ``(F_L - 1) / (F_L + k - 1)`` and ``(F_U - 1) / (F_U + k - 1)``;
- the **share of sessions whose verdict would flip**: a session's verdict here is which side
  of the sample's median session score its score lies on (the judge's own scale knows no
  pass mark); it would flip when one of its repeats puts it on the other side from its mean
  over the repeats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Noise", "icc1", "within_spread", "flip_share", "judge_noise"]


@dataclass(frozen=True)
class Noise:
    """A judge's noise over ``items`` items judged ``repeats`` times each."""

    items: int
    repeats: int
    within_sd: float
    icc: float | None
    icc_ci: tuple[float, float] | None
    sessions: int
    flip_share: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "items": self.items,
            "repeats": self.repeats,
            "within_item_sd": self.within_sd,
            "icc": self.icc,
            "icc_ci95": list(self.icc_ci) if self.icc_ci else None,
            "sessions": self.sessions,
            "verdict_flip_share": self.flip_share,
        }


def _mean_squares(table: np.ndarray) -> tuple[float, float]:
    n, k = table.shape
    grand = table.mean()
    means = table.mean(axis=1)
    msb = k * float(np.sum((means - grand) ** 2)) / (n - 1)
    msw = float(np.sum((table - means[:, None]) ** 2)) / (n * (k - 1))
    return msb, msw


def within_spread(table: np.ndarray) -> float:
    """The pooled within-item standard deviation of an ``n x k`` table (``k >= 2``)."""
    return float(np.sqrt(_mean_squares(table)[1]))


def icc1(table: np.ndarray) -> tuple[float | None, tuple[float, float] | None]:
    """ICC(1,1) of an ``n x k`` table and its 95% interval (module docstring); ``None``
    when it is undefined (fewer than two items, or no variance at all)."""
    from scipy.stats import f  # loaded when used: the CLI starts without scipy

    n, k = table.shape
    if n < 2 or k < 2:
        return None, None
    msb, msw = _mean_squares(table)
    if msb + (k - 1) * msw == 0:
        return None, None
    icc = (msb - msw) / (msb + (k - 1) * msw)
    if msw == 0:
        return float(icc), None
    ratio = msb / msw
    lower_f = ratio / f.ppf(0.975, n - 1, n * (k - 1))
    upper_f = ratio * f.ppf(0.975, n * (k - 1), n - 1)
    return float(icc), (
        float((lower_f - 1) / (lower_f + k - 1)),
        float((upper_f - 1) / (upper_f + k - 1)),
    )


def flip_share(sessions: np.ndarray) -> float | None:
    """The share of sessions (rows of a ``sessions x k`` table of session scores) one of
    whose repeats lies on the other side of the median of the sessions' mean scores than
    their mean does; ``None`` without two sessions."""
    if sessions.shape[0] < 2:
        return None
    means = sessions.mean(axis=1)
    median = float(np.median(means))
    side = means >= median
    flips = np.any((sessions >= median) != side[:, None], axis=1)
    return float(np.mean(flips))


def judge_noise(values: Mapping[tuple[str, str], Sequence[float]]) -> Noise | None:
    """The noise of one judge from ``{(session id, item): [label of each repeat]}``: the
    items with a number in every repeat (the others are left out); ``None`` without two."""
    complete = {key: list(v) for key, v in values.items() if v and None not in v}
    if not complete:
        return None
    k = min(len(v) for v in complete.values())
    rows = {key: v[:k] for key, v in complete.items()}
    if len(rows) < 2 or k < 2:
        return None
    table = np.array(list(rows.values()), dtype=float)
    by_session: dict[str, list[list[float]]] = {}
    for (session, _), v in rows.items():
        by_session.setdefault(session, []).append(v)
    session_table = np.array([np.mean(v, axis=0) for v in by_session.values()])
    icc, ci = icc1(table)
    return Noise(
        items=len(rows),
        repeats=k,
        within_sd=within_spread(table),
        icc=icc,
        icc_ci=ci,
        sessions=len(by_session),
        flip_share=flip_share(session_table),
    )
