"""The ITEM kind: a utility verdict per cited link (``link:<id>``, 1 in the utility set)
and a turn label (item ``item``) keeping every iteration; its figures are the chosen sets
against the links experts graded useful (:mod:`genir_eval.meta.item_eval`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.judges.kinds import (
    Figure,
    GoldBlock,
    GoldContext,
    JudgeCell,
    JudgeKind,
    JudgeTable,
)
from genir_eval.kind_names import ITEM

__all__ = ["Item", "KIND"]


class Item(JudgeKind):
    name = ITEM
    own_items = frozenset({ITEM})
    labels_links = True

    def gold_blocks(self, context: GoldContext) -> list[GoldBlock]:
        from genir_eval.meta.item_eval import ItemFigures

        figures = ItemFigures(gold_min=context.gold_min, k=context.k)
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
            final = m.get("final") or {}
            rows.append(
                [
                    JudgeCell(judge),
                    m.get("turns"),
                    final.get("precision"),
                    final.get("recall"),
                    final.get("f1"),
                    m.get(f"ndcg@{m.get('k', 5)}"),
                    Figure(m.get("mean_iterations"), 2),
                ]
            )
        head: tuple[str, ...] = ("", "turns", "precision", "recall", "F1", "nDCG@5", "iterations")
        return JudgeTable("ITEM judges: useful links (gold 3) chosen", head, rows)

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = []
        for judge, m in blocks.items():
            k = m.get("k", 5)
            final = m.get("final") or {}
            rows.append(
                [
                    JudgeCell(judge),
                    m.get("turns"),
                    m.get("turns_missing"),
                    final.get("precision"),
                    final.get("recall"),
                    final.get("f1"),
                    (m.get("first_iteration") or {}).get("f1"),
                    m.get(f"ndcg@{k}"),
                    m.get(f"ndcg@{k}_log_order"),
                    m.get("mean_iterations"),
                ]
            )
        head: tuple[str, ...] = (
            "judge",
            "turns",
            "missing",
            "precision",
            "recall",
            "F1",
            "F1 (1st iteration)",
        )
        head += ("nDCG@5", "nDCG@5 (log order)", "iterations")
        return JudgeTable("ITEM judges: useful-link sets vs gold", head, rows, key="item-agreement")


KIND = Item()
