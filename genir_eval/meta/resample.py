"""Intervals that respect sessions: the bootstrap over sessions, not over items.

Links (or turns) of one session are judged and rated together, so they are not independent;
resampling whole sessions (the cluster bootstrap; Field and Welsh 2007) gives intervals
that do not pretend a session's 20 links are 20 separate observations.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

__all__ = ["session_bootstrap"]


def session_bootstrap(
    statistic: Callable[[list[Any], list[Any]], float | None],
    pred: Sequence[Any],
    gold: Sequence[Any],
    groups: Sequence[Hashable],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> list[float] | None:
    """The percentile interval at level ``ci`` of ``statistic(pred, gold)`` over ``n_boot``
    resamples of whole sessions (``groups``) drawn with replacement with
    ``numpy.random.default_rng(seed)``. Resamples where the statistic is undefined
    (``None``) are left out; ``None`` when every one is, or with fewer than 2 sessions."""
    if not (len(pred) == len(gold) == len(groups)):
        raise ValueError("pred, gold and groups differ in length")
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    keys = list(members)
    if len(keys) < 2 or n_boot < 1:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        drawn = rng.integers(0, len(keys), size=len(keys))
        idx = [i for k in drawn for i in members[keys[k]]]
        value = statistic([pred[i] for i in idx], [gold[i] for i in idx])
        if value is not None:
            values.append(value)
    if not values:
        return None
    tail = 100.0 * (1.0 - ci) / 2.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return [float(lo), float(hi)]
