"""Holding the error across several tests: adjusted p-values for a family of hypotheses.

A gate over several scores fails when any one of them is significantly worse, so without a
correction the chance of a false alarm grows with the number of scores (five independent
tests at 0.05: 1 - 0.95**5 = 23%). Each adjustment here returns, for each p-value, the
smallest level at which its hypothesis is rejected within the family; comparing the
adjusted values with ``alpha`` applies the procedure.

- ``holm``: Holm's step-down (Holm 1979), which holds the family-wise error rate (the chance
  of any false rejection) at ``alpha`` under any dependence between the tests;
- ``bh``: Benjamini & Hochberg's step-up (1995), which holds the false discovery rate (the
  expected share of false rejections among the rejections) under independence or positive
  dependence; weaker than a family-wise guarantee;
- ``none``: the p-values as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CORRECTIONS", "CORRECTION_WORDS", "holm", "benjamini_hochberg", "adjust"]

#: The corrections ``compare --correction`` takes, the default first.
CORRECTIONS = ("holm", "bh", "none")

#: What each correction holds, in the words the verdict prints.
CORRECTION_WORDS = {
    "holm": "Holm's step-down, family-wise error held at --alpha",
    "bh": "Benjamini-Hochberg, false discovery rate held at --alpha",
    "none": "no correction across scores",
}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values: with the p-values sorted ascending, the ``i``-th (from 0)
    is ``max over j <= i of min(1, (m - j) * p_(j))``, in the original order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values: with the p-values sorted ascending, the
    ``k``-th (from 1) is ``min over j >= k of min(1, m * p_(j) / j)``, in the original
    order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i], reverse=True)
    adjusted = [0.0] * m
    running = 1.0
    for position, i in enumerate(order):
        rank = m - position
        running = min(running, m * p_values[i] / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def adjust(p_values: Sequence[float], correction: str) -> list[float]:
    """``p_values`` adjusted by ``correction`` (:data:`CORRECTIONS`)."""
    if correction == "holm":
        return holm(p_values)
    if correction == "bh":
        return benjamini_hochberg(p_values)
    if correction == "none":
        return [float(p) for p in p_values]
    raise ValueError(f"unknown correction {correction!r}; expected one of {', '.join(CORRECTIONS)}")
