"""Meta-evaluation of the ITEM and RUBRIC judges against gold link usefulness (URGE, 0-3).

:func:`evaluate_item` scores an ITEM judge's utility sets (precision, recall, F1 against the
links whose gold label is at least ``gold_min``) and rankings (nDCG@k with the gold labels
as gains), with the loop's iterations and the calls and tokens it used, and the same set
figures for the *first* iteration, so a run shows whether iterating changed anything.
:func:`evaluate_rubric` scores a rubric judge's passage labels for links the same way, and
its response coverage against the user's query satisfaction.

:func:`genir_eval.runner.judge_eval.compare_item` runs several judges on the same sessions
and engine and lays the figures side by side (``python -m genir_eval.cli.item_eval SESSIONS``
does it offline).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.judges.item.judge import JUDGES as ITEM_JUDGES
from genir_eval.judges.rubric.grading import JUDGES as RUBRIC_JUDGES
from genir_eval.meta.gold.item import ItemFigures
from genir_eval.meta.gold.link_sets import gold_links, ndcg_at
from genir_eval.meta.gold.rubric import RubricFigures
from genir_eval.records import Session

__all__ = [
    "ndcg_at",
    "gold_links",
    "evaluate_item",
    "evaluate_rubric",
    "ItemFigures",
    "RubricFigures",
    "format_item_table",
    "format_rubric_table",
    "ITEM_JUDGES",
    "RUBRIC_JUDGES",
]


def evaluate_item(
    sessions: Iterable[Session],
    labels: Iterable[Label],
    *,
    gold_min: int = 3,
    k: int = 5,
) -> dict[str, Any]:
    """Figures of one ITEM judge's labels against gold link usefulness.

    Only turns with gold link labels count, and only links with a gold label enter the
    sets (an unlabelled link is unknown, not useless). A link is useful in gold when its
    label is ``>= gold_min`` (3: "very useful" only; 2: useful or better). Rankings come
    from the turn trace: the final iteration's ranking, or for set-only judges the set
    first then the rest in citation order. ``ndcg_log_order`` is the log's own citation
    order, the reference any ranking should beat. Turns whose judgment is missing are
    counted in ``turns_missing`` and left out of the figures, never scored as empty sets.
    A run gathers the same figures window by window with :class:`ItemFigures`.
    """
    figures = ItemFigures(gold_min=gold_min, k=k)
    figures.add(sessions, labels)
    return figures.result()


def evaluate_rubric(
    sessions: Iterable[Session],
    labels: Iterable[Label],
    *,
    gold_min: int = 3,
    k: int = 5,
) -> dict[str, Any]:
    """Figures of a rubric (or direct-grading) judge's link labels against gold usefulness.

    Link labels are items ``link:<id>`` whose value is a grade (0-5 for the rubric, 0-2 or
    0/1 for the direct baselines) and ``extra["relevant"]`` the thresholded binary label.
    Reports the correlation of grades with gold labels over all labelled links, P/R/F1 of
    the binary labels against ``gold >= gold_min``, nDCG@k of the links ordered by grade
    (citation order breaks ties), and the correlation of the turn coverage (item
    ``coverage``) with the user's query satisfaction. A run gathers the same figures window
    by window with :class:`RubricFigures`.
    """
    figures = RubricFigures(gold_min=gold_min, k=k)
    figures.add(sessions, labels)
    return figures.result()


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def format_item_table(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table: one row per judge, the figures :func:`evaluate_item` returns."""
    header = [
        "judge",
        "P",
        "R",
        "F1",
        "macroF1",
        "F1@it1",
        "nDCG",
        "nDCG@it1",
        "iters",
        "calls",
        "tokens",
    ]
    rows = [header]
    for name, r in reports.items():
        k = r["k"]
        rows.append(
            [
                name,
                _fmt(r["final"]["precision"]),
                _fmt(r["final"]["recall"]),
                _fmt(r["final"]["f1"]),
                _fmt(r["final"]["macro_f1"]),
                _fmt(r["first_iteration"]["f1"]),
                _fmt(r[f"ndcg@{k}"]),
                _fmt(r[f"ndcg@{k}_first_iteration"]),
                _fmt(r["mean_iterations"]),
                _fmt(r["calls"]),
                _fmt(r["input_tokens"] + r["output_tokens"]),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def format_rubric_table(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table of :func:`evaluate_rubric` reports, one row per judge."""
    header = ["judge", "P", "R", "F1", "kendall", "spearman", "nDCG", "cov~sat"]
    rows = [header]
    for name, r in reports.items():
        grade = r["grade_vs_gold"]
        rows.append(
            [
                name,
                _fmt(r["binary"]["precision"]),
                _fmt(r["binary"]["recall"]),
                _fmt(r["binary"]["f1"]),
                _fmt(grade["kendall"]),
                _fmt(grade["spearman"]),
                _fmt(r[f"ndcg@{r['k']}"]),
                _fmt(r["coverage_vs_query_satisfaction"]["kendall"]),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(line.rstrip() for line in lines)
