"""The report's figures drawn from the run's tables: each score against the users' satisfaction
(scatter, a sample of at most :data:`MAX_SCATTER_POINTS` points), the scores by task type
(bars) and each judge's confusion matrix against the gold labels. Moved from
:mod:`genir_eval.report.html`, which imports them from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial

import numpy as np

from genir_eval.judges.kinds import judge_kinds, kind_blocks
from genir_eval.report.plots import scatter_svg, task_bars_svg
from genir_eval.report.tables import LevelTable, optional
from genir_eval.report.views import (
    ReportContext,
    esc,
)

_e = esc


def _pairs(rows: LevelTable, score: str) -> tuple[list[float], list[float]]:
    """The (gold, score) pairs of the rows with both, in table order."""
    values = rows.column(score)
    both = ~np.isnan(rows.gold) & ~np.isnan(values)
    return rows.gold[both].tolist(), values[both].tolist()


#: At most this many points per scatter panel: past it a seeded random sample is drawn (and
#: the panel says so), so the page stays a readable size at any number of sessions.
MAX_SCATTER_POINTS = 2000


def _sampled(
    gold: list[float], predicted: list[float], limit: int = MAX_SCATTER_POINTS
) -> tuple[list[float], list[float], str]:
    """Up to ``limit`` of the pairs, drawn at random with a fixed seed, in table order."""
    n = len(gold)
    if n <= limit:
        return gold, predicted, f"n = {n:,}"
    keep = np.sort(np.random.default_rng(0).choice(n, size=limit, replace=False))
    return (
        [gold[i] for i in keep],
        [predicted[i] for i in keep],
        f"n = {n:,}; {limit:,} drawn at random shown",
    )


def _scatter(ctx: ReportContext, score: str | None) -> str:
    if score is None:
        return "<p class='muted'>No scores.</p>"
    panels = []
    for title, rows in (("query level", ctx.turns), ("session level", ctx.sessions)):
        gold, predicted = _pairs(rows, score)
        if gold:
            gold, predicted, count = _sampled(gold, predicted)
            panels.append((f"{title} ({count})", gold, predicted))
    if not panels:
        return "<p class='muted'>No user satisfaction to plot against.</p>"
    return f"<div class='plot' id='scatter'>{scatter_svg(panels, y_label=score)}</div>"


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _task_groups(rows: LevelTable, none: str) -> dict[str, np.ndarray]:
    """The rows of each task type (``none`` naming the rows without one) as masks, in the
    order the task types first appear."""
    groups: dict[str, np.ndarray] = {}
    for label in dict.fromkeys(task or none for task in rows.task_types):
        groups[label] = rows.where_task(partial(_labelled, none=none, label=label))
    return groups


def _labelled(task: str | None, *, none: str, label: str) -> bool:
    return (task or none) == label


def _task_bars(ctx: ReportContext, score: str | None) -> str:
    rows = ctx.sessions
    if score is None or not rows.n:
        return "<p class='muted'>No scores.</p>"
    groups = _task_groups(rows, "(unknown)")
    task_types = sorted(groups)
    has_gold = bool(np.isfinite(rows.gold).any())
    values = rows.column(score)
    svg = task_bars_svg(
        task_types,
        [int(groups[t].sum()) for t in task_types],
        [_mean(map(optional, values[groups[t]].tolist())) for t in task_types],
        [_mean(map(optional, rows.gold[groups[t]].tolist())) for t in task_types]
        if has_gold
        else None,
        score_label=score,
    )
    return f"<div class='plot' id='task-bars'>{svg}</div>"


def _confusion_table(judge: str, classes: Sequence[float], matrix: Sequence[Sequence[int]]) -> str:
    """One judge's confusion matrix: ``matrix[i][j]`` links with gold ``classes[i]`` and
    judge label ``classes[j]``."""
    total = sum(map(sum, matrix))
    peak = max((n for row in matrix for n in row), default=0)
    head = "".join(f"<th class='num'>{_fmt_label(c)}</th>" for c in classes)
    body = []
    for g, row in zip(classes, matrix, strict=True):
        cells = []
        for n in row:
            alpha = 0.08 + 0.72 * n / peak if n else 0
            style = f" style='background:rgba(53,102,168,{alpha:.2f})'" if n else ""
            cells.append(f"<td class='num'{style}>{n}</td>")
        body.append(f"<tr><th class='num'>{_fmt_label(g)}</th>{''.join(cells)}</tr>")
    agree = sum(matrix[i][i] for i in range(len(classes)))
    agreement = f"{agree / total:.3f}" if total else "–"
    return (
        f"<h3>{_e(judge)}</h3>"
        f"<p class='muted'>{total} links with both labels; exact agreement {agreement}. "
        "Rows: gold (expert) label; columns: judge label (rounded).</p>"
        f"<div class='scroll'><table class='confusion' data-judge='{_e(judge)}'>"
        f"<tr><th>gold \\ judge</th>{head}</tr>{''.join(body)}</table></div>"
    )


def _confusion(ctx: ReportContext) -> str:
    """Each link judge's confusion matrix: ``meta.json``'s (``genir-eval meta``'s), else
    counted from the links table when the run has no meta-evaluation."""
    judges = (ctx.run.meta or {}).get("judges") or {}
    from_meta = {
        judge: block
        for kind in judge_kinds()
        if kind.feeds_link_measures
        for judge, block in kind_blocks(judges, kind).items()
    }
    parts = []
    for judge in ctx.links.judges:
        matrix = (from_meta.get(judge) or {}).get("confusion_matrix")
        if isinstance(matrix, Mapping):
            parts.append(_confusion_table(judge, matrix["labels"], matrix["matrix"]))
            continue
        counts = ctx.links.confusion.get(judge)
        if not counts:
            continue
        classes = sorted({p for pair in counts for p in pair})
        table = [[counts.get((g, p), 0) for p in classes] for g in classes]
        parts.append(_confusion_table(judge, classes, table))
    if not parts:
        return "<p class='muted'>No link has both a gold and a judge label.</p>"
    return "".join(parts)


def _fmt_label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
