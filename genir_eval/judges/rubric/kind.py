"""The RUBRIC kind: a 0-5 grade per response statement (``stmt:<i>``) and cited link
(``link:<id>``) and the turn's question coverage (item ``rubric``); its figures are the
passage grades against the experts' link labels (:mod:`genir_eval.meta.item_eval`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.judges.kinds import JudgeKind, JudgeTable
from genir_eval.judges.link_sets import figure, figures_table, ndcg, set_columns
from genir_eval.kind_names import RUBRIC
from genir_eval.records import RUBRIC as EVIDENCE

__all__ = ["Rubric", "KIND"]


class Rubric(JudgeKind):
    name = RUBRIC
    evidence = EVIDENCE
    own_items = frozenset({RUBRIC})
    labels_links = True
    own_score = ("0-1", "the share of the rubric's questions the response answers")

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        columns = [
            ("turns", figure("turns")),
            *set_columns("binary"),
            ("grade kendall", figure("kendall", "grade_vs_gold")),
            ("nDCG@5", ndcg()),
        ]
        return figures_table("RUBRIC judges: passage grades vs gold link labels", blocks, columns)

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        columns = [
            ("turns", figure("turns")),
            *set_columns("binary"),
            ("grade spearman", figure("spearman", "grade_vs_gold")),
            ("grade kendall", figure("kendall", "grade_vs_gold")),
            ("nDCG@5", ndcg()),
            (
                "coverage kendall (query satisfaction)",
                figure("kendall", "coverage_vs_query_satisfaction"),
            ),
        ]
        return figures_table(
            "RUBRIC judges: passage grades vs gold",
            blocks,
            columns,
            judge_head="judge",
            key="rubric-agreement",
        )


KIND = Rubric()
