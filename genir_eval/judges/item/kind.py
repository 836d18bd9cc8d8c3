"""The ITEM kind: a utility verdict per cited link (``link:<id>``, 1 in the utility set)
and a turn label (item ``item``) keeping every iteration; its figures are the chosen sets
against the links experts graded useful (:mod:`genir_eval.meta.item_eval`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.judges.kinds import Figure, JudgeKind, JudgeTable
from genir_eval.judges.link_sets import figure, figures_table, ndcg, set_columns
from genir_eval.kind_names import ITEM
from genir_eval.records import LINK_USEFULNESS as EVIDENCE

__all__ = ["Item", "KIND"]


class Item(JudgeKind):
    name = ITEM
    evidence = EVIDENCE
    own_items = frozenset({ITEM})
    labels_links = True

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        columns = [
            ("turns", figure("turns")),
            *set_columns("final"),
            ("nDCG@5", ndcg()),
            ("iterations", lambda m: Figure(m.get("mean_iterations"), 2)),
        ]
        return figures_table("ITEM judges: useful links (gold 3) chosen", blocks, columns)

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        columns = [
            ("turns", figure("turns")),
            ("missing", figure("turns_missing")),
            *set_columns("final"),
            ("F1 (1st iteration)", figure("f1", "first_iteration")),
            ("nDCG@5", ndcg()),
            ("nDCG@5 (log order)", ndcg("_log_order")),
            ("iterations", figure("mean_iterations")),
        ]
        return figures_table(
            "ITEM judges: useful-link sets vs gold",
            blocks,
            columns,
            judge_head="judge",
            key="item-agreement",
        )


KIND = Item()
