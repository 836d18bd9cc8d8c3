"""The RUBRIC kind: a 0-5 grade per response statement (``stmt:<i>``) and cited link
(``link:<id>``) and the turn's question coverage (item ``rubric``); its figures are the
passage grades against the experts' link labels (:mod:`genir_eval.meta.item_eval`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.judges.kinds import (
    GoldBlock,
    GoldContext,
    JudgeCell,
    JudgeKind,
    JudgeTable,
)
from genir_eval.kind_names import RUBRIC

__all__ = ["Rubric", "KIND"]


class Rubric(JudgeKind):
    name = RUBRIC
    own_items = frozenset({RUBRIC})
    labels_links = True
    own_score = ("0-1", "the share of the rubric's questions the response answers")

    def gold_blocks(self, context: GoldContext) -> list[GoldBlock]:
        from genir_eval.meta.item_eval import RubricFigures

        figures = RubricFigures(gold_min=context.gold_min, k=context.k)
        return [
            GoldBlock(
                self.name,
                lambda sessions, labels, link_labels: figures.add(sessions, labels),
                figures.result,
            )
        ]

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = []
        for judge, m in blocks.items():
            binary = m.get("binary") or {}
            rows.append(
                [
                    JudgeCell(judge),
                    m.get("turns"),
                    binary.get("precision"),
                    binary.get("recall"),
                    binary.get("f1"),
                    (m.get("grade_vs_gold") or {}).get("kendall"),
                    m.get(f"ndcg@{m.get('k', 5)}"),
                ]
            )
        head: tuple[str, ...] = (
            "",
            "turns",
            "precision",
            "recall",
            "F1",
            "grade kendall",
            "nDCG@5",
        )
        return JudgeTable("RUBRIC judges: passage grades vs gold link labels", head, rows)

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = []
        for judge, m in blocks.items():
            k = m.get("k", 5)
            binary = m.get("binary") or {}
            grade = m.get("grade_vs_gold") or {}
            coverage = m.get("coverage_vs_query_satisfaction") or {}
            rows.append(
                [
                    JudgeCell(judge),
                    m.get("turns"),
                    binary.get("precision"),
                    binary.get("recall"),
                    binary.get("f1"),
                    grade.get("spearman"),
                    grade.get("kendall"),
                    m.get(f"ndcg@{k}"),
                    coverage.get("kendall"),
                ]
            )
        head: tuple[str, ...] = (
            "judge",
            "turns",
            "precision",
            "recall",
            "F1",
            "grade spearman",
            "grade kendall",
        )
        head += ("nDCG@5", "coverage kendall (query satisfaction)")
        return JudgeTable(
            "RUBRIC judges: passage grades vs gold", head, rows, key="rubric-agreement"
        )


KIND = Rubric()
