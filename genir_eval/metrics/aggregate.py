"""From per-turn scores to one session score, and combining two score lists.

URGE compares, besides session measures, simple query -> session aggregations of per-turn
scores (its query-level satisfaction, or any per-turn measure): the positional weightings
of :func:`genir_eval.metrics.measures.positional_weights` applied over turn positions, and
max, min and mode.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from genir_eval.errors import ConfigError
from genir_eval.metrics.measures import WEIGHTINGS, positional_weights

__all__ = ["AGGREGATIONS", "aggregate", "zscore_combine"]

AGGREGATIONS: tuple[str, ...] = WEIGHTINGS + ("max", "min", "mode")


def aggregate(values: Sequence[float | None], how: str) -> float | None:
    """One value from per-turn ``values`` (turn order), aggregated as ``how``.

    ``how`` is one of :data:`AGGREGATIONS`. ``None`` entries (turns without a score) are
    skipped and the remaining turns renumbered ``1..m`` before weighting; all ``None`` (or
    no values) gives ``None``. Weightings give ``sum(w_k v_k) / sum(w_k)``; ``mode`` is the
    most frequent value, the mean of the most frequent values when several tie.
    """
    if how not in AGGREGATIONS:
        raise ConfigError(f"unknown aggregation {how!r}; expected one of {AGGREGATIONS}")
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    if how == "max":
        return max(present)
    if how == "min":
        return min(present)
    if how == "mode":
        counts = Counter(present)
        top = max(counts.values())
        modes = [v for v, c in counts.items() if c == top]
        return sum(modes) / len(modes)
    w = positional_weights(how, len(present))
    return sum(wi * vi for wi, vi in zip(w, present, strict=True)) / sum(w)


def _zscores(values: Sequence[float | None]) -> list[float | None]:
    present = [float(v) for v in values if v is not None]
    if not present:
        return [None] * len(values)
    mean = sum(present) / len(present)
    std = math.sqrt(sum((v - mean) ** 2 for v in present) / len(present))
    if std == 0.0:
        return [None if v is None else 0.0 for v in values]
    return [None if v is None else (float(v) - mean) / std for v in values]


def zscore_combine(a: Sequence[float | None], b: Sequence[float | None]) -> list[float | None]:
    """The elementwise mean of the z-scores of ``a`` and ``b`` (same length, paired).

    Each list is standardised on its own present values with the population standard
    deviation; a constant list standardises to zeros. A ``None`` stays ``None`` and is left
    out of its list's mean and deviation; a pair with a ``None`` on either side combines to
    ``None`` (half a pair is not averaged as if it were whole).
    """
    if len(a) != len(b):
        raise ValueError(f"zscore_combine needs lists of one length, got {len(a)} and {len(b)}")
    za, zb = _zscores(a), _zscores(b)
    return [None if x is None or y is None else (x + y) / 2.0 for x, y in zip(za, zb, strict=True)]
