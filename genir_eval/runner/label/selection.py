"""Which items a person labels first: chosen for calibrating the judges, and for an honest
mean.

Two streams take turns. One is stratified over the judges' labels (every label the judges
gave is represented, so the agreement covers the whole scale), the least certain first in
each stratum (the judges' expected label near a boundary between two labels, the judges
disagreeing). The other is a seeded random permutation of the items: its labelled prefix is
a simple random sample, the only kind the prediction-powered mean (Angelopoulos et al.,
"Prediction-powered inference", Science 2023; :mod:`genir_eval.meta.ppi`) is valid on, since
the least certain items are no sample of the rest. The page asks for as many labels as
the mean needs for a target interval width.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from genir_eval.runner.label.items import CHOICES, Item

__all__ = [
    "doubt",
    "least_certain_order",
    "random_order",
    "calibration_order",
    "SampleSize",
    "ppi_sample_size",
    "DEFAULT_WIDTH",
]

#: The default target: a 95% interval as wide as a fifth of the scale.
DEFAULT_WIDTH = 0.2
Z95 = 1.959963984540054


def doubt(item: Item) -> float:
    """How unsure the judges are of ``item``: the spread of their labels plus how near
    their mean lies to the boundary between two labels (0.5 on a boundary, 0 on a label).
    ``inf`` when no judge labelled it: what it is, nobody knows yet."""
    values = item.judge_values
    if not values:
        return math.inf
    expected = sum(values) / len(values)
    nearness = 0.5 - abs((expected % 1.0) - 0.5)
    return (max(values) - min(values)) + nearness


def least_certain_order(items: Sequence[Item]) -> list[Item]:
    """``items`` in the order calibration wants them: strata by the judges' rounded
    expected label, taken in turn (lowest label first), each stratum's least certain item
    first (ties by key, so the order is the same on every start); items no judge labelled
    come last."""
    strata: dict[float, list[Item]] = defaultdict(list)
    unjudged = []
    for item in items:
        expected = item.expected
        if expected is None:
            unjudged.append(item)
        else:
            strata[float(round(expected))].append(item)
    for members in strata.values():
        members.sort(key=lambda it: (-doubt(it), it.key))
    order: list[Item] = []
    queues = [strata[k] for k in sorted(strata)]
    depth = max((len(q) for q in queues), default=0)
    for i in range(depth):
        order.extend(q[i] for q in queues if i < len(q))
    return order + sorted(unjudged, key=lambda it: it.key)


def random_order(keys: Sequence[str], seed: int = 0) -> list[str]:
    """The keys in a seeded random order (the same keys give the same order on every start)."""
    shuffled = sorted(keys)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def calibration_order(items: Sequence[Item], seed: int = 0) -> list[Item]:
    """``items`` in the order a person labels them: the least certain stream and the random
    stream (:func:`random_order`) in turn, each taking its next item not yet taken."""
    by_key = {it.key: it for it in items}
    streams = [
        iter(least_certain_order(items)),
        iter(by_key[k] for k in random_order(list(by_key), seed)),
    ]
    order: list[Item] = []
    taken: set[str] = set()
    turn = 0
    while len(order) < len(by_key):
        for item in streams[turn % 2]:
            if item.key not in taken:
                taken.add(item.key)
                order.append(item)
                break
        turn += 1
    return order


@dataclass(frozen=True)
class SampleSize:
    """How many labelled items a prediction-powered mean needs for an interval of
    ``width`` (95%), and from what: ``rectifier_sd`` is the spread of judge minus person,
    ``observed`` whether it was measured on labels (else assumed from the judges'
    spread)."""

    needed: int
    width: float
    rectifier_sd: float
    observed: bool
    pool: int

    @property
    def asked(self) -> int:
        """The labels to ask for: every other item the queue shows is drawn at random, so
        twice the sample (at most the pool) gives the PPI mean its ``needed``."""
        return min(self.pool, 2 * self.needed)


def ppi_sample_size(
    queue: str,
    judged: Sequence[float],
    pairs: Sequence[tuple[float, float]] = (),
    *,
    width_share: float = DEFAULT_WIDTH,
) -> SampleSize:
    """The labels a PPI mean over ``queue``'s items needs so that its 95% interval is
    ``width_share`` of the scale wide.

    PPI's variance is ``var(f)/N + var(f - Y)/n`` (N judged items, n labelled); solving
    ``2 z sqrt(...) <= width`` for ``n`` gives ``var(f - Y) / ((width / 2z)^2 - var(f)/N)``.
    ``var(f - Y)`` is measured on ``pairs`` (judge, person) once there are 10, and assumed
    equal to the judges' own variance before (a judge as good as it is spread). Capped at
    the pool; the whole pool when the interval cannot be that narrow."""
    values = [c.value for c in CHOICES[queue]]
    width = width_share * (max(values) - min(values))
    f = np.asarray(judged, dtype=float)
    big_n = int(f.size)
    var_f = float(f.var(ddof=1)) if big_n >= 2 else 1.0
    observed = len(pairs) >= 10
    if observed:
        var_r = float(np.var([a - b for a, b in pairs], ddof=1))
    else:
        var_r = max(var_f, 0.25)
    room = (width / (2.0 * Z95)) ** 2 - var_f / max(big_n, 1)
    needed = big_n if room <= 0 else min(big_n, max(2, math.ceil(var_r / room)))
    return SampleSize(needed, width, math.sqrt(var_r), observed, big_n)
