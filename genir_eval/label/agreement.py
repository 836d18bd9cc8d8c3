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

from genir_eval.figures import number_text
from genir_eval.label.items import CHOICES, Item
from genir_eval.label.store import Event
from genir_eval.meta.ppi import ppi_block
from genir_eval.meta.stats import cohen_kappa, mae

__all__ = ["people_label", "krippendorff_alpha", "queue_agreement", "stratified_ppi"]


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


def stratified_ppi(
    strata: Sequence[float | None],
    judged: Sequence[float | None],
    gold: Sequence[float | None],
    *,
    level: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The prediction-powered mean of the people's label over every judged item, estimated
    stratum by stratum and weighted by each stratum's share of the items.

    The queue does not draw its items at random: it takes the judges' strata in turn, so a
    rare label is labelled far more often than its share. Within stratum h (N_h judged
    items, n_h of them labelled) the estimate is PPI's (Angelopoulos et al., Science 2023),
    the judge's mean over the unlabelled items minus the mean of judge minus person over
    the labelled ones, or the people's mean when every item is labelled; the strata are
    combined with the weights N_h / N and the variance sum(w_h^2 (var f_h / N_h' + var
    r_h / n_h)). Valid when the labelled items of a stratum are as good as a random draw
    from it: the queue shows the least certain first, so a partly labelled stratum leans
    to its hard items (``note`` says so). ``None`` with the reason when a stratum with
    unlabelled items has fewer than 2 labelled."""
    rows = [
        (h, float(f), None if y is None else float(y))
        for h, f, y in zip(strata, judged, gold, strict=True)
        if h is not None and f is not None
    ]
    out: dict[str, Any] = {"estimate": None, "ci": None, "level": level, "strata": {}}
    if not rows:
        out["reason"] = "no item carries the judge's label"
        return out
    total = len(rows)
    estimate = variance = 0.0
    partly = False
    for h in sorted({r[0] for r in rows}):
        members = [r for r in rows if r[0] == h]
        labelled = [(f, y) for _, f, y in members if y is not None]
        unlabelled = np.asarray([f for _, f, y in members if y is None])
        weight = len(members) / total
        out["strata"][str(h)] = {"items": len(members), "labelled": len(labelled)}
        if len(unlabelled) and len(labelled) < 2:
            out["reason"] = (
                f"the judges' stratum {number_text(h)} has {len(labelled)} labelled of "
                f"{len(members)} items: label 2 or more of each stratum"
            )
            return out
        y = np.asarray([y for _, y in labelled])
        if not len(unlabelled):
            term, var = float(y.mean()), float(y.var(ddof=1)) / len(y) if len(y) > 1 else 0.0
        else:
            partly = True
            rectifier = np.asarray([f - y for f, y in labelled])
            term = float(unlabelled.mean() - rectifier.mean())
            var_f = float(unlabelled.var(ddof=1)) / len(unlabelled) if len(unlabelled) > 1 else 0.0
            var = var_f + float(rectifier.var(ddof=1)) / len(rectifier)
        estimate += weight * term
        variance += weight**2 * var
    from scipy.stats import norm

    half = float(norm.ppf(0.5 + level / 2.0)) * math.sqrt(variance)
    lo, hi = estimate - half, estimate + half
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    out.update(estimate=estimate, ci=[lo, hi], std_error=math.sqrt(variance))
    if partly:
        out["note"] = (
            "the queue shows each stratum's least certain items first: a partly labelled "
            "stratum's correction leans to its hard items"
        )
    return out


def queue_agreement(
    queue: str, items: Sequence[Item], labels: Mapping[str, Mapping[str, Event]]
) -> dict[str, Any]:
    """The figures of one queue: how many items people labelled, each judge against the
    people (weighted kappa, MAE, n), the people against each other (alpha), and each
    judge's PPI mean of the people's label over every item the judge labelled."""
    scale = [c.value for c in CHOICES[queue]]
    bounds = (min(scale), max(scale))
    gold = [people_label(queue, labels.get(item.key, {})) for item in items]
    judges = sorted({j for item in items for j in item.judged})
    # the strata the queue took its items in turn from (selection.calibration_order)
    strata = [None if i.expected is None else float(round(i.expected)) for i in items]
    per_judge = []
    for judge in judges:
        judged = [item.judged.get(judge) for item in items]
        rounded = [None if v is None else _nearest(v, scale) for v in judged]
        per_judge.append(
            {
                "judge": judge,
                "n": sum(
                    1 for a, b in zip(judged, gold, strict=True) if a is not None and b is not None
                ),
                "kappa_linear": cohen_kappa(rounded, gold, weights="linear", labels=scale),
                "mae": mae(judged, gold),
                "people_mean": ppi_block(judged, gold, metric=queue, bounds=bounds)["gold_mean"],
                "ppi": stratified_ppi(strata, judged, gold, bounds=bounds),
            }
        )
    return {
        "queue": queue,
        "items": len(items),
        "labelled": sum(1 for g in gold if g is not None),
        "labels": sum(len(by) for by in labels.values()),
        "judges": per_judge,
        "between_people": krippendorff_alpha(labels, scale),
    }


def _nearest(value: float, scale: Sequence[float]) -> float:
    return min(scale, key=lambda s: (abs(s - value), s))
