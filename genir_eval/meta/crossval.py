"""Choosing a design without fooling yourself: repeated leave-topics-out cross-validation.

A twin's design (which evidence it reads, how it compares it) chosen as the best of several
on some topics looks better on them than it is: the held-out CrowdRAG-25 topics showed the
pairwise twin chosen on the 20 development topics (0.691) fall to 0.627, below its simplest
ingredient. :func:`cross_validate` measures the *choosing*, not the chosen design: the
topics are cut into ``k`` folds, ``repeats`` times over with seeded shuffles; in each fold
the design best on the other folds' topics (the selection rule, :func:`best_design`) judges
the fold's topics it never saw. Every topic is thus judged out of sample once per repeat.
The same folds measure the simplest ingredient alone; the design is adopted only when
choosing beats the ingredient out of sample (a higher mean over the repeats), else the
ingredient is (Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*,
section 7.10: the selection step belongs inside the cross-validation).

A design is scored per *item* (a pair of answers) with a hit in ``[0, 1]`` (an agreement
with people; a tie may count half) or ``None`` (not counted), so the figure of a set of
topics is the mean hit over their counted items. The interval is a bootstrap over topics of
the out-of-sample hits (each topic's hits averaged over the repeats): topics, not pairs, are
the unit that varies between development and held-out data.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Hits",
    "CrossValidation",
    "topic_folds",
    "best_design",
    "cross_validate",
]

#: ``hits[design][topic]``: a design's per-item hits on a topic (``None``: not counted).
Hits = Mapping[str, Mapping[Hashable, Sequence[float | None]]]


def topic_folds(
    topics: Sequence[Hashable], k: int, repeats: int, seed: int = 0
) -> list[list[tuple[list[Hashable], list[Hashable]]]]:
    """``repeats`` partitions of ``topics`` into ``k`` folds (seeded shuffles; fold sizes
    differ by one at most), each fold as ``(training topics, test topics)``."""
    if k < 2 or k > len(topics):
        raise ValueError(f"k must be between 2 and the number of topics ({len(topics)}), got {k}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(repeats):
        order = [topics[i] for i in rng.permutation(len(topics))]
        folds = [order[i::k] for i in range(k)]
        out.append([([t for t in order if t not in set(fold)], list(fold)) for fold in folds])
    return out


def _figure(hits: Mapping[Hashable, Sequence[float | None]], topics: Sequence[Hashable]) -> float:
    counted = [h for t in topics for h in hits.get(t, ()) if h is not None]
    return float(np.mean(counted)) if counted else float("nan")


def best_design(hits: Hits, topics: Sequence[Hashable], order: Sequence[str] | None = None) -> str:
    """The design with the highest figure on ``topics``; a tie goes to the one first in
    ``order`` (the simplest first), so a design must do strictly better to be chosen."""
    names = list(order or hits)
    figures = {name: _figure(hits[name], topics) for name in names}
    return max(names, key=lambda name: (figures[name], -names.index(name)))


@dataclass(frozen=True)
class CrossValidation:
    """What choosing by :func:`best_design` gives on topics it did not see."""

    figure: float
    """Mean over the repeats of the pooled out-of-sample figure."""
    ci95: tuple[float, float]
    """Bootstrap over topics of the out-of-sample hits (each topic's averaged over repeats)."""
    per_repeat: tuple[float, ...]
    ingredient: str
    ingredient_figure: float
    ingredient_ci95: tuple[float, float]
    chosen: dict[str, int] = field(default_factory=dict)
    """How often each design was chosen on the training folds."""
    adopted: str = ""
    """The design to ship: the one chosen on all topics when choosing beats the ingredient
    out of sample, else the ingredient."""
    folds: list[list[tuple[list[Hashable], list[Hashable]]]] = field(default_factory=list)

    @property
    def beats_ingredient(self) -> bool:
        return self.figure > self.ingredient_figure


def _topic_means(
    per_topic: Mapping[Hashable, list[float]], topics: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    sums = np.array([sum(per_topic.get(t, [])) for t in topics], float)
    counts = np.array([len(per_topic.get(t, [])) for t in topics], float)
    return sums, counts


def _interval(
    sums: np.ndarray, counts: np.ndarray, n_boot: int, rng: np.random.Generator
) -> tuple[float, float]:
    draws = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    totals = counts[draws].sum(axis=1)
    values = sums[draws].sum(axis=1) / np.where(totals > 0, totals, np.nan)
    lo, hi = np.nanpercentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def cross_validate(
    hits: Hits,
    topics: Sequence[Hashable],
    ingredient: str,
    *,
    k: int = 4,
    repeats: int = 5,
    seed: int = 0,
    n_boot: int = 2000,
    choose: Callable[[Hits, Sequence[Hashable]], str] | None = None,
) -> CrossValidation:
    """Repeated ``k``-fold cross-validation over ``topics`` of choosing a design from
    ``hits`` (by ``choose``, default :func:`best_design` with ``ingredient`` first on
    ties), against ``ingredient`` alone on the same folds (see the module docstring)."""
    if ingredient not in hits:
        raise ValueError(f"the ingredient {ingredient!r} is not among the designs")
    order = [ingredient, *(name for name in hits if name != ingredient)]
    pick = choose or (lambda h, t: best_design(h, t, order))
    folds = topic_folds(topics, k, repeats, seed)
    chosen: dict[str, int] = {}
    chosen_hits: dict[Hashable, list[float]] = {t: [] for t in topics}
    per_repeat = []
    for partition in folds:
        pooled: list[float] = []
        for training, test in partition:
            name = pick(hits, training)
            chosen[name] = chosen.get(name, 0) + 1
            for topic in test:
                counted = [h for h in hits[name].get(topic, ()) if h is not None]
                chosen_hits[topic].extend(counted)
                pooled.extend(counted)
        per_repeat.append(float(np.mean(pooled)) if pooled else float("nan"))
    ingredient_hits = {
        t: [h for h in hits[ingredient].get(t, ()) if h is not None] * repeats for t in topics
    }
    rng = np.random.default_rng(seed)
    sums, counts = _topic_means(chosen_hits, topics)
    ingredient_sums, ingredient_counts = _topic_means(ingredient_hits, topics)
    figure = float(np.mean(per_repeat))
    ingredient_figure = _figure(hits[ingredient], topics)
    adopted = pick(hits, topics) if figure > ingredient_figure else ingredient
    return CrossValidation(
        figure=figure,
        ci95=_interval(sums, counts, n_boot, rng),
        per_repeat=tuple(per_repeat),
        ingredient=ingredient,
        ingredient_figure=ingredient_figure,
        ingredient_ci95=_interval(ingredient_sums, ingredient_counts, n_boot, rng),
        chosen=dict(sorted(chosen.items(), key=lambda item: -item[1])),
        adopted=adopted,
        folds=folds,
    )
