"""How each score of a run tracks the users: every score of one level (turns or sessions) as
a float column aligned with the rows, against the users' satisfaction ratings (correlations
with bootstrap intervals) and their thumbs (binary agreement)."""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from genir_eval.meta.decide import within_minimum
from genir_eval.meta.gold.session import FEEDBACK_TARGET
from genir_eval.meta.stats import binary_agreement, correlations

__all__ = ["ScoreColumns", "ScoredRow"]


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _optional(column: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else v for v in column.tolist()]


class ScoredRow(Protocol):
    """A turn or session row of a run's tables, as the columns read it."""

    @property
    def scores(self) -> Mapping[str, float | None]: ...

    @property
    def gold_satisfaction(self) -> float | None: ...


class ScoreColumns:
    """Every score of one level (turns or sessions) as a float column aligned with the rows
    (NaN where a row has no value), and the users' satisfaction: 8 bytes a number, whatever
    the rows' texts. Names keep their first-seen order, as the run's tables list them."""

    def __init__(self) -> None:
        self._columns: dict[str, array[float]] = {}
        self._present: dict[str, int] = defaultdict(int)  # rows whose scores name it
        self._extra: dict[str, np.ndarray] = {}
        self._first_row: int | None = None  # names in the first row
        self.gold: array[float] = array("d")
        self.thumbs: array[float] = array("d")  # turns only: 1 up, 0 down, NaN none
        self.rows = 0

    def add(self, rows: Sequence[ScoredRow]) -> None:
        for row in rows:
            for name in row.scores:
                if name not in self._columns:
                    self._columns[name] = array("d", [math.nan]) * self.rows
                self._present[name] += 1
            for name, column in self._columns.items():
                column.append(_nan(row.scores.get(name)))
            self.gold.append(_nan(row.gold_satisfaction))
            self.thumbs.append(_nan(getattr(row, "thumbs", None)))
            if self._first_row is None:
                self._first_row = len(self._columns)
            self.rows += 1

    def names(self) -> list[str]:
        """Score names in the order a row-by-row reading of the table meets them (scores
        added with :meth:`put` sit at the end of the first row's, as in every row)."""
        names = list(self._columns)
        at = self._first_row if self._first_row is not None else len(names)
        return names[:at] + [n for n in self._extra if n not in self._columns] + names[at:]

    def in_every_row(self, name: str) -> bool:
        return name in self._extra or (self.rows > 0 and self._present.get(name) == self.rows)

    def column(self, name: str) -> np.ndarray:
        if name in self._extra:
            return self._extra[name]
        return np.frombuffer(self._columns[name], dtype=float)

    def put(self, name: str, values: np.ndarray) -> None:
        """A score computed from whole columns (a z-score combination), one per row."""
        self._extra[name] = values

    @property
    def extra(self) -> dict[str, np.ndarray]:
        return dict(self._extra)

    def correlations(self, n_boot: int, seed: int) -> dict[str, Any] | None:
        """Each score against the users' satisfaction (``None`` when no row has gold)."""
        gold = np.frombuffer(self.gold, dtype=float)
        if not self.rows or np.isnan(gold).all():
            return None
        return {
            name: within_minimum(correlations(self.column(name), gold, n_boot=n_boot, seed=seed))
            for name in self.names()
        }

    def has_thumbs(self) -> bool:
        return bool(self.rows) and not np.isnan(np.frombuffer(self.thumbs, dtype=float)).all()

    def feedback(self, n_boot: int, seed: int) -> dict[str, Any]:
        """Each score against the users' thumbs, as :func:`feedback_agreement` gives it."""
        thumbs = _optional(np.frombuffer(self.thumbs, dtype=float))
        return {
            "target": FEEDBACK_TARGET,
            "turn": {
                name: within_minimum(
                    binary_agreement(_optional(self.column(name)), thumbs, n_boot=n_boot, seed=seed)
                )
                for name in self.names()
            },
        }
