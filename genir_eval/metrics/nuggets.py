"""Nugget measures: how much of what a query needed does an answer say?

After the TREC 2024 RAG track's nugget evaluation (Pradeep et al., "Initial Nugget
Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer Framework", arXiv
2411.09607; "The Great Nugget Recall", arXiv 2504.15068): a query has a list of nuggets,
atomic facts a good answer should hold, each ``vital`` or ``okay``; an answer is assigned
``support``, ``partial_support`` or ``not_support`` for each. Inputs here are, per turn, its
nuggets as :class:`AssignedNugget` (importance and assignment).

- ``nugget-recall(partial=w)``: the share of the turn's nuggets the answer supports, a
  partial support counting ``w`` (TREC's "all" score with ``w = 0.5``, its "strict all"
  score with ``w = 0``);
- ``vital-nugget-recall(partial=w)``: the same over the vital nuggets only (TREC's "vital"
  and "strict vital" scores);
- ``weighted-nugget-recall(partial=w)``: each nugget weighing its importance: its grade as
  the nugget file gives it (graded files, e.g. 1-4), else vital 1 and okay 0.5 (the
  AutoNuggetizer's weighted score, Pradeep et al. 2411.09607): the sum of weight times gain
  over the sum of the weights.

They are the coverage of the query's nuggets, whatever the answer cites: not grounding.

A turn's value is the share over its nuggets; a turn without nuggets (of the kind counted)
has no value. A session's value is the mean of its turns' values (each query weighs the same,
as TREC averages over topics). A nugget whose assignment is missing makes the turn's value
missing (``None``): recall without it would be a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from genir_eval.metrics.measures import Measure, _require
from genir_eval.records import NUGGET_ASSIGNMENTS, NUGGET_IMPORTANCE, NUGGETS

__all__ = [
    "IMPORTANCE",
    "ASSIGNMENTS",
    "AssignedNugget",
    "NuggetMeasure",
    "NuggetRecall",
    "VitalNuggetRecall",
    "WeightedNuggetRecall",
    "WEIGHTS",
    "NUGGET_MEASURES",
    "DEFAULT_NUGGET_MEASURES",
]

#: A nugget's importance, most important first (TREC 2024 RAG).
IMPORTANCE = NUGGET_IMPORTANCE
#: An answer's assignment for a nugget, strongest first (TREC 2024 RAG).
ASSIGNMENTS = NUGGET_ASSIGNMENTS
#: A nugget's weight by importance when it has no grade (the AutoNuggetizer's weighted score).
WEIGHTS: Mapping[str, float] = {"vital": 1.0, "okay": 0.5}


@dataclass(frozen=True)
class AssignedNugget:
    """A nugget as the measures see it: its importance and the answer's assignment
    (``None``: not assigned, the judgment is missing)."""

    importance: str
    assignment: str | None
    #: the importance grade a graded nugget file gives (``None``: vital/okay only)
    grade: float | None = None

    @property
    def weight(self) -> float:
        """What the nugget weighs in the weighted recall: its grade, else vital 1, okay 0.5."""
        if self.grade is not None:
            return float(self.grade)
        return WEIGHTS.get(self.importance, 0.0)


class NuggetMeasure(Measure):
    """A share of a turn's nuggets the answer supports; a session's is its turns' mean."""

    LEVEL = "nugget"
    RANGE = "0-1 (a share of the query's nuggets)"
    EVIDENCE = NUGGETS
    #: Only vital nuggets count.
    VITAL_ONLY: ClassVar[bool] = False

    def gain(self, assignment: str) -> float:
        partial: float = getattr(self, "partial", 0.5)
        return (
            1.0 if assignment == "support" else partial if assignment == "partial_support" else 0.0
        )

    def turn(self, nuggets: Sequence[AssignedNugget]) -> float | None:
        """The turn's value; ``None`` without nuggets counted or with one unassigned."""
        counted = [n for n in nuggets if not self.VITAL_ONLY or n.importance == "vital"]
        if not counted or any(n.assignment is None for n in counted):
            return None
        return sum(self.gain(n.assignment or "") for n in counted) / len(counted)

    def compute(self, turns: Sequence[Sequence[AssignedNugget]]) -> float | None:
        """The mean of the turns' values (turns without one left out); ``None`` if none."""
        values = [v for v in (self.turn(t) for t in turns) if v is not None]
        return sum(values) / len(values) if values else None


@dataclass(frozen=True, repr=False)
class NuggetRecall(NuggetMeasure):
    """Share of the query's nuggets the answer supports (partial support counts ``partial``)."""

    NAME: ClassVar[str] = "nugget-recall"
    SHORT: ClassVar[str] = "nugget_recall"
    SUMMARY = (
        "the coverage of the query's nuggets: the share of them the answer supports, a "
        "partial support counting `partial` (TREC 2024 RAG 'all'; partial=0 is 'strict "
        "all'); a session's is its turns' mean"
    )
    partial: float = 0.5

    def _validate(self) -> None:
        _require(0.0 <= self.partial <= 1.0, self, "partial must be in [0, 1]")


@dataclass(frozen=True, repr=False)
class VitalNuggetRecall(NuggetMeasure):
    """Share of the query's vital nuggets the answer supports (partial counts ``partial``)."""

    NAME: ClassVar[str] = "vital-nugget-recall"
    SHORT: ClassVar[str] = "vital_nugget_recall"
    VITAL_ONLY: ClassVar[bool] = True
    SUMMARY = (
        "the coverage of the query's vital nuggets: the share of them the answer supports, a "
        "partial support counting `partial` (TREC 2024 RAG 'vital'; partial=0 is 'strict "
        "vital'); none for a query without vital nuggets; a session's is its turns' mean"
    )
    partial: float = 0.5

    def _validate(self) -> None:
        _require(0.0 <= self.partial <= 1.0, self, "partial must be in [0, 1]")


@dataclass(frozen=True, repr=False)
class WeightedNuggetRecall(NuggetMeasure):
    """Share of the query's nugget weight the answer supports: each nugget weighs its grade
    (graded files), else vital 1 and okay 0.5; partial support counts ``partial``."""

    NAME: ClassVar[str] = "weighted-nugget-recall"
    SHORT: ClassVar[str] = "weighted_nugget_recall"
    SUMMARY = (
        "the coverage of the query's nuggets by weight: the share of their weight the answer "
        "supports, each nugget weighing "
        "its importance grade as the nugget file gives it (e.g. 1-4), else vital 1 and okay "
        "0.5 (the AutoNuggetizer's weighted score), a partial support counting `partial`; a "
        "session's is its turns' mean"
    )
    partial: float = 0.5

    def _validate(self) -> None:
        _require(0.0 <= self.partial <= 1.0, self, "partial must be in [0, 1]")

    def turn(self, nuggets: Sequence[AssignedNugget]) -> float | None:
        """The turn's weighted value; ``None`` without weight or with a nugget unassigned."""
        total = sum(n.weight for n in nuggets)
        if not nuggets or total <= 0 or any(n.assignment is None for n in nuggets):
            return None
        return sum(n.weight * self.gain(n.assignment or "") for n in nuggets) / total


#: What a nugget judge is scored with when the scenario names no nugget measure: TREC 2024
#: RAG's four scores and the weighted recall.
DEFAULT_NUGGET_MEASURES: tuple[str, ...] = (
    "nugget_recall",
    "nugget_recall(partial=0)",
    "vital_nugget_recall",
    "vital_nugget_recall(partial=0)",
    "weighted_nugget_recall",
)

NUGGET_MEASURES: Mapping[str, type[Measure]] = {
    cls.SHORT: cls for cls in (NuggetRecall, VitalNuggetRecall, WeightedNuggetRecall)
}
"""Nugget measures by short name (``parse_measure`` reads them too)."""
