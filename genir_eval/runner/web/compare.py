"""Two or more runs side by side: the sessions every run has, aligned by session id, each
score's change from the first run (the base) to each other, and the sessions that changed
most first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genir_eval.errors import InputError
from genir_eval.runner.web.index import RunIndex
from genir_eval.runner.web.query import Query, select

__all__ = ["Comparison", "compare_runs"]


@dataclass
class Comparison:
    """``runs[0]`` is the base; ``maps[k][i]`` is base session ``i``'s row in ``runs[k + 1]``
    (-1 when that run lacks it); ``common`` the base sessions every run has; ``shared`` the
    scores every run has."""

    runs: list[RunIndex]
    maps: list[np.ndarray]
    common: np.ndarray
    shared: list[str]
    _changes: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def base(self) -> RunIndex:
        return self.runs[0]

    @property
    def by_default(self) -> str | None:
        headline = self.base.headline
        return headline if headline in self.shared else (self.shared[0] if self.shared else None)

    def values(self, score: str, row: int) -> list[float]:
        """``score`` of base session ``row`` in each run, base first (NaN where missing)."""
        out = [float(self.base.columns[score][row])]
        for run, mapping in zip(self.runs[1:], self.maps, strict=True):
            other = int(mapping[row])
            out.append(float(run.columns[score][other]) if other >= 0 else float("nan"))
        return out

    def change(self, score: str) -> np.ndarray:
        """The largest absolute change of ``score`` from the base to any other run, per base
        session (NaN where a run lacks the session or the value)."""
        cached = self._changes.get(score)
        if cached is not None:
            return cached
        base = self.base.columns[score]
        gaps = np.vstack(
            [
                np.abs(np.where(m >= 0, run.columns[score][np.maximum(m, 0)], np.nan) - base)
                for run, m in zip(self.runs[1:], self.maps, strict=True)
            ]
            or [np.full(len(base), np.nan)]
        )
        unknown = np.isnan(gaps).any(axis=0)
        largest = np.where(unknown, np.nan, np.where(np.isnan(gaps), 0.0, gaps).max(axis=0))
        self._changes[score] = largest
        return largest

    def rows(self, query: Query) -> np.ndarray:
        """The sessions every run has that ``query``'s filters keep (on the base run), ordered
        by its sort, or by the change of its ``by`` score, the largest first."""
        found = select(query, self.base, keep=self.common)
        if query.sort or query.disagree:
            return found
        score = query.by or self.by_default
        if score is None:
            return found
        change = self.change(score)[found]
        order = np.argsort(np.where(np.isnan(change), np.inf, -change), kind="stable")
        return found[order]

    def changed_scores(self, row: int) -> int:
        """How many shared scores differ between the base and some other run for ``row``."""
        count = 0
        for score in self.shared:
            values = self.values(score, row)
            if any(v != values[0] and not (v != v and values[0] != values[0]) for v in values[1:]):
                count += 1
        return count

    def row_json(self, row: int, score: str | None) -> dict[str, Any]:
        values = self.values(score, row) if score else []
        return {
            "session_id": self.base.ids[row],
            "task_type": self.base.tasks[row] or None,
            "score": score,
            "values": [_json(v) for v in values],
            "deltas": [_json(v - values[0]) for v in values[1:]],
            "changed_scores": self.changed_scores(row),
        }


def _json(value: float) -> float | None:
    return None if value != value else value


def compare_runs(runs: Sequence[RunIndex]) -> Comparison:
    """Align ``runs`` on the base's session ids; refused when they share no session."""
    base = runs[0]
    maps = []
    common = np.ones(len(base), dtype=bool)
    for run in runs[1:]:
        mapping = np.fromiter((run.position.get(sid, -1) for sid in base.ids), np.int64, len(base))
        maps.append(mapping)
        common &= mapping >= 0
    if len(runs) > 1 and not common.any():
        raise InputError(
            f"the runs share no session id ({base.title}'s first: {base.ids[:1]}, "
            f"{runs[1].title}'s: {runs[1].ids[:1]})",
            path=str(runs[1].directory),
        )
    shared = [s for s in base.scores if all(s in run.columns for run in runs[1:])]
    return Comparison(list(runs), maps, common, shared)
