"""The nugget kind: per turn, the query's nuggets with the answer's assignment of each
(item ``nuggets``), scored by the nugget measures (:mod:`genir_eval.metrics.nuggets`); its
own score is TREC 2024 RAG's "all" score. Its scores meet gold as every session score does
(people's preferences: pair agreement; ratings: correlations, in ``meta.json``); its own
block of ``meta.json`` (:mod:`genir_eval.meta.gold.nuggets`) gives each system's mean scores
with 95% intervals (a system is the answers' ``meta.system``, as CrowdRAG's carry it, else the
run), shown in the summary and the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.evidence_kinds import NUGGETS as EVIDENCE
from genir_eval.judges.kinds import (
    Interval,
    JudgeCell,
    JudgeKind,
    JudgeTable,
)

__all__ = ["Nuggets", "KIND", "NAME", "SCORES", "turn_scores"]

NAME = "nuggets"
#: The four TREC 2024 RAG scores a system is summarised by: (name, vital only, partial).
SCORES = (
    ("nugget_recall", False, 0.5),
    ("nugget_recall(partial=0)", False, 0.0),
    ("vital_nugget_recall", True, 0.5),
    ("vital_nugget_recall(partial=0)", True, 0.0),
)
_GAIN = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}


def turn_scores(value: Any) -> dict[str, float | None]:
    """A turn label's four TREC scores (the nugget measures at those parameters; a test
    checks they agree); ``None`` where no nugget counts or one is unassigned."""
    out: dict[str, float | None] = {name: None for name, _, _ in SCORES}
    if not isinstance(value, Mapping) or not isinstance(value.get("nuggets"), list):
        return out
    nuggets = [n for n in value["nuggets"] if isinstance(n, Mapping)]
    for name, vital_only, partial in SCORES:
        counted = [n for n in nuggets if not vital_only or n.get("importance") == "vital"]
        words = [str(n.get("assignment")) for n in counted]
        if counted and all(w in _GAIN for w in words):
            gains = [
                1.0 if w == "support" else partial if w == "partial_support" else 0.0 for w in words
            ]
            out[name] = sum(gains) / len(gains)
    return out


class Nuggets(JudgeKind):
    name = NAME
    evidence = EVIDENCE
    own_items = frozenset({"nuggets"})
    judges_nuggets = True
    own_score = (
        "0-1",
        "the share of the query's nuggets the answer supports, a partial support counting "
        "half (TREC 2024 RAG 'all')",
    )

    def turn_value(self, value: Any, n_segments: int) -> float | None:
        return turn_scores(value)["nugget_recall"]

    def _table(self, blocks: Mapping[str, Mapping[str, Any]], key: str) -> JudgeTable | None:
        rows = []
        for judge, block in blocks.items():
            for system, scores in (block.get("systems") or {}).items():
                rows.append(
                    [
                        JudgeCell(judge, after=f" · {system}"),
                        scores.get("answers"),
                        *(Interval.of(scores, name) for name, _, _ in SCORES),
                    ]
                )
        if not rows:
            return None
        return JudgeTable(
            "Nugget scores per system (mean over answers, 95% interval over queries)",
            ("judge · system", "answers", "all", "all strict", "vital", "vital strict"),
            rows,
            key=key,
            note=(
                "TREC 2024 RAG's nugget scores: the share of a query's nuggets (all, or vital "
                "only) the answer supports, a partial support counting half (strict: nothing)."
            ),
        )

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        return self._table(blocks, "")

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        return self._table(blocks, "nugget-systems")


KIND = Nuggets()
