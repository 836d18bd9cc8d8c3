"""What people's labels say about the judges: agreement with each judge, agreement between
the people, and prediction-powered means of the people's label over every judged item.

Agreement between labellers is Krippendorff's alpha (Krippendorff, "Content Analysis",
2004; ordinal distance), from the ``krippendorff`` package (Castro, maintained on PyPI):
unlike Cohen's kappa it takes any number of labellers and items that only some of them
labelled, as a queue with several labellers gives. Judge against people is Cohen's
weighted kappa (:func:`genir_eval.meta.stats.cohen_kappa`, linear weights) and the mean
absolute error on the people's scale; the PPI means come from :mod:`genir_eval.meta.ppi`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from genir_eval.meta.ppi import ppi_block
from genir_eval.meta.stats import cohen_kappa, mae
from genir_eval.runner.label.items import CHOICES, Item
from genir_eval.runner.label.store import Event

__all__ = ["people_label", "krippendorff_alpha", "queue_agreement", "random_sample"]


def people_label(queue: str, labels: Mapping[str, Event]) -> float | None:
    """The people's label of one item: their labels' median, on the scale (the lower of
    the two middle labels when they are even in number)."""
    values = sorted(e.value for e in labels.values() if e.value is not None)
    if not values:
        return None
    return values[(len(values) - 1) // 2]


def krippendorff_alpha(
    labels: Mapping[str, Mapping[str, Event]], scale: Sequence[float]
) -> dict[str, Any]:
    """Krippendorff's ordinal alpha over the items two or more people labelled."""
    shared = {item: by for item, by in labels.items() if len(by) >= 2}
    people = sorted({name for by in shared.values() for name in by})
    out: dict[str, Any] = {"alpha": None, "items": len(shared), "labellers": len(people)}
    if len(shared) < 2 or len(people) < 2:
        out["reason"] = "fewer than 2 items carry labels from 2 or more people"
        return out
    import krippendorff

    data = np.full((len(people), len(shared)), np.nan)
    for j, by in enumerate(shared.values()):
        for i, name in enumerate(people):
            if name in by and by[name].value is not None:
                data[i, j] = by[name].value
    if len({v for v in data.flatten() if not math.isnan(v)}) < 2:
        out["reason"] = "every label is the same: no variation to agree on"
        return out
    alpha = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=list(scale)
    )
    out["alpha"] = float(alpha)
    return out


def random_sample(
    permutation: Sequence[str], labels: Mapping[str, Mapping[str, Event]], skipped: set[str]
) -> list[str]:
    """The labelled items of the random stream's prefix: the items of ``permutation`` up to
    the first that nobody has labelled or skipped (a skipped item is taken as missing at
    random: it ends nothing, it only leaves the sample)."""
    sample = []
    for key in permutation:
        if key in labels:
            sample.append(key)
        elif key not in skipped:
            break
    return sample


def queue_agreement(
    queue: str,
    items: Sequence[Item],
    labels: Mapping[str, Mapping[str, Event]],
    *,
    permutation: Sequence[str] = (),
    skipped: set[str] | None = None,
) -> dict[str, Any]:
    """The figures of one queue: how many items people labelled, each judge against the
    people on every labelled item (weighted kappa, MAE, n), the people against each other
    (alpha), and each judge's PPI mean of the people's label over every item, from the
    random stream's sample (:func:`random_sample` of ``permutation``) alone."""
    scale = [c.value for c in CHOICES[queue]]
    bounds = (min(scale), max(scale))
    gold = [people_label(queue, labels.get(item.key, {})) for item in items]
    sample = set(random_sample(permutation, labels, skipped or set()))
    sampled_gold = [g if item.key in sample else None for item, g in zip(items, gold, strict=True)]
    judges = sorted({j for item in items for j in item.judged})
    per_judge = []
    for judge in judges:
        judged = [item.judged.get(judge) for item in items]
        rounded = [None if v is None else _nearest(v, scale) for v in judged]
        both = [
            (a, b) for a, b in zip(judged, gold, strict=True) if a is not None and b is not None
        ]
        ppi = ppi_block(judged, sampled_gold, metric=queue, bounds=bounds)
        per_judge.append(
            {
                "judge": judge,
                "n": len(both),
                "kappa_linear": cohen_kappa(rounded, gold, weights="linear", labels=scale),
                "mae": mae(judged, gold),
                "people_mean": ppi_block(judged, gold, metric=queue, bounds=bounds)["gold_mean"],
                "ppi": {
                    **(ppi["ppi"] or {}),
                    "n_sample": ppi["n_labelled"],
                    "reason": ppi["reason"],
                },
            }
        )
    return {
        "queue": queue,
        "items": len(items),
        "labelled": sum(1 for g in gold if g is not None),
        "random_sample": len(sample),
        "labels": sum(len(by) for by in labels.values()),
        "judges": per_judge,
        "between_people": krippendorff_alpha(labels, scale),
    }


def _nearest(value: float, scale: Sequence[float]) -> float:
    return min(scale, key=lambda s: (abs(s - value), s))
