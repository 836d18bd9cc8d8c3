"""The nugget kind: per turn, the query's nuggets with the answer's assignment of each
(item ``nuggets``), scored by the nugget measures (:mod:`genir_eval.metrics.nuggets`); its
own score is TREC 2024 RAG's "all" score. Its scores meet gold as every session score does:
people's preferences (pair agreement) and ratings (correlations) in ``meta.json``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.judges.kinds import JudgeKind

__all__ = ["Nuggets", "KIND", "NAME"]

NAME = "nuggets"
#: What an assignment counts in TREC 2024 RAG's "all" score (``nugget_recall`` at its
#: defaults, :mod:`genir_eval.metrics.nuggets`; a test checks the two agree).
_GAIN = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}


class Nuggets(JudgeKind):
    name = NAME
    own_items = frozenset({"nuggets"})
    judges_nuggets = True
    own_score = (
        "0-1",
        "the share of the query's nuggets the answer supports, a partial support counting "
        "half (TREC 2024 RAG 'all')",
    )

    def turn_value(self, value: Any, n_segments: int) -> float | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("nuggets"), list):
            return None
        gains = [_GAIN.get(str(n.get("assignment"))) for n in value["nuggets"]]
        if not gains or any(g is None for g in gains):
            return None
        return sum(g for g in gains if g is not None) / len(gains)


KIND = Nuggets()
