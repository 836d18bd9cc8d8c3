"""The report's agreement sections: every score against the users' satisfaction with its
coefficients and intervals, the users' thumbs, the judges against the gold labels and against
each other. Moved from :mod:`genir_eval.report.html`, which imports them from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from genir_eval.judges.kinds import Figure, Interval, JudgeCell, judge_kinds, kind_blocks
from genir_eval.meta.stats import cohen_kappa, correlations
from genir_eval.report.charts import _confusion
from genir_eval.report.scores import SMALL_N
from genir_eval.report.views import (
    ReportContext,
    esc,
    fmt,
    fmt_ci,
    fold,
    table,
)
from genir_eval.rundir.folder import Run

_e = esc
_fmt = fmt


#: A table longer than this many rows is folded (its first rows are not worth a screen).
FOLD_ROWS = 8


CORRELATIONS = ("spearman", "pearson", "kendall")


METHOD_TITLES = {"pearson": "Pearson r", "spearman": "Spearman &rho;", "kendall": "Kendall &tau;-b"}


LEVEL_TITLES = {"turn": "query level", "session": "session level"}


def _coefficient_cell(entry: Mapping[str, Any], method: str) -> str:
    """A coefficient with its interval under it; with fewer than 10 pairs the interval is
    replaced by a flag (a bootstrap of a handful of pairs says nothing)."""
    value = fmt(entry.get(method))
    n = entry.get("n") or 0
    if isinstance(n, int) and n < SMALL_N:
        note = f"<span class='flag' title='fewer than {SMALL_N} pairs'>n&lt;{SMALL_N}</span>"
    else:
        note = (
            f"<span class='muted small'>{fmt_ci((entry.get('ci95') or {}).get(method), 2)}</span>"
        )
    return f"<td class='num'>{value}<br>{note}</td>"


def _all_scores(run: Run) -> str:
    correlations = (run.meta or {}).get("correlations") or {}
    parts = []
    for level in ("turn", "session"):
        scores = correlations.get(level) or {}
        if not scores:
            continue
        rows = []
        for name, entry in scores.items():
            cells = "".join(_coefficient_cell(entry, m) for m in CORRELATIONS)
            rows.append(
                f"<tr><td>{esc(name).replace('@', '<wbr>@')}</td>"
                f"<td class='num'>{esc(entry.get('n'))}</td>{cells}</tr>"
            )
        head = "".join(f"<th class='num'>{METHOD_TITLES[m]} [95% CI]</th>" for m in CORRELATIONS)
        tab = (
            f"<div class='scroll'><table class='correlations' id='correlations-{level}'>"
            f"<tr><th>score</th><th class='num'>n</th>{head}</tr>{''.join(rows)}</table></div>"
        )
        parts.append(
            f"<h3>All scores, {LEVEL_TITLES[level]}</h3>"
            + (fold(f"{len(rows)} scores", tab) if len(rows) > FOLD_ROWS else tab)
        )
    if not parts:
        return "<p class='muted'>No meta-evaluation.</p>"
    return "".join(parts)


def _table(table_id: str, head: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A table whose first column is text and the others numbers."""
    num = " class='num'"
    th = "".join(f"<th{'' if i == 0 else num}>{_e(h)}</th>" for i, h in enumerate(head))
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{_e(cell)}</td>" if i == 0 else f"<td class='num'>{_fmt(cell)}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<div class='scroll'><table id='{table_id}'><tr>{th}</tr>{body}</table></div>"


def _cell(cell: Any) -> Any:
    """A cell of a judge kind's table (:class:`~genir_eval.judges.kinds.JudgeTable`) as
    :func:`_table` takes it."""
    if isinstance(cell, JudgeCell):
        return cell.instead if cell.instead is not None else cell.judge + cell.after
    if isinstance(cell, Interval):
        return f"{fmt(cell.value)} {fmt_ci(cell.ci, 2)}".strip()
    if isinstance(cell, Figure):
        return cell.value
    return cell


def _agreement(run: Run) -> str:
    """Every judge kind's agreement with gold, one table each, in the kinds' order."""
    judges = (run.meta or {}).get("judges") or {}
    parts = []
    for kind in judge_kinds():
        table = kind.report_table(kind_blocks(judges, kind))
        if table is None:
            continue
        title = f"<h3>{_e(table.title)}</h3>" if table.title else ""
        note = f"<p class='muted'>{_e(table.note)}</p>" if table.note else ""
        rows = [[_cell(cell) for cell in row] for row in table.rows]
        parts.append(title + note + _table(table.key or kind.name, table.head, rows))
    return "".join(parts)


def _between_judges(ctx: ReportContext) -> str:
    """How the judges agree with each other: link labels (kappa, Spearman) and session
    scores of different judges (Spearman), with no gold needed."""
    run = ctx.run
    parts = []
    rows = []
    twin_pairs = 0
    for a, b in combinations(ctx.links.judges, 2):
        if (a, b) not in ctx.links.pairs:
            continue
        twin_pairs += a in ctx.baselines and b in ctx.baselines
        x, y = (list(labels) for labels in ctx.links.pairs[(a, b)])
        exact = sum(1 for i, j in zip(x, y, strict=True) if i == j) / len(x)
        corr = correlations(x, y, n_boot=0)
        rows.append(
            [
                f"{ctx.marked(a)} vs {ctx.marked(b)}",
                len(x),
                exact,
                cohen_kappa(x, y, weights="linear", labels=[0, 1, 2, 3]),
                cohen_kappa([int(v >= 2) for v in x], [int(v >= 2) for v in y], labels=[0, 1]),
                corr.get("spearman"),
            ]
        )
    if rows:
        parts.append(
            "<h3>Link labels</h3><p class='muted'>Over links both judges labelled (0-3): exact "
            "agreement, Cohen's kappa weighted linearly and on useful (2-3) vs not, Spearman's "
            "&rho;.</p>"
            + table(
                "judge-agreement-links",
                ["judges", "links", "exact", "kappa (weighted)", "kappa (binary)", "spearman"],
                rows,
                raw_columns=[0],
            )
        )
        if twin_pairs:
            parts.append(
                "<p class='muted' id='twin-agreement-note'>Where both judges are offline twins "
                "(<sup class='twin'>*</sup>), their labels come from the same log features "
                "(without user feedback in the log the DNA and TRUE twins compute the same "
                "label): high agreement there says the heuristics agree, not that two judges "
                "independently do.</p>"
            )
    names = ctx.score_names("session")
    own = [
        str(j.get("id"))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping) and str(j.get("id")) in names
    ]
    measure = ctx.headline if ctx.headline in names else None
    family = [measure] if measure else []
    if measure:
        family += [n for n in names if n.startswith(f"{measure}@") or n == f"gold:{measure}"]
    candidates = list(dict.fromkeys([*family, *own]))
    rows = []
    for a, b in combinations(candidates, 2):
        corr = correlations(ctx.sessions.column(a), ctx.sessions.column(b), n_boot=0)
        rows.append(
            [
                f"{ctx.marked(a)} vs {ctx.marked(b)}",
                corr.get("n"),
                corr.get("spearman"),
                corr.get("kendall"),
            ]
        )
    if rows:
        agreement = table(
            "judge-agreement-sessions",
            ["scores", "sessions", "spearman", "kendall"],
            rows,
            raw_columns=[0],
        )
        parts.append(
            "<h3>Session scores</h3><p class='muted'>Rank agreement between scores from "
            "different judges over the sessions where both have a value.</p>"
            + (
                fold(f"{len(rows)} pairs of scores", agreement)
                if len(rows) > FOLD_ROWS
                else agreement
            )
        )
    if not parts:
        return "<p class='muted'>Only one judge labels each kind of item: nothing to compare.</p>"
    return "".join(parts)


def _feedback(ctx: ReportContext) -> str | None:
    """Turn scores against the users' thumbs: AUC and point-biserial r (``meta.json``)."""
    scores = ((ctx.run.meta or {}).get("feedback") or {}).get("turn") or {}
    if not scores:
        return None
    rows = []
    for name, entry in scores.items():
        cells = "".join(
            _coefficient_cell({**entry, "ci95": entry.get("ci95") or {}}, key)
            for key in ("auc", "point_biserial")
        )
        rows.append(
            f"<tr><td>{ctx.marked(name)}</td><td class='num'>{esc(entry.get('n'))}</td>"
            f"<td class='num'>{esc(entry.get('n_up'))}</td>"
            f"<td class='num'>{esc(entry.get('n_down'))}</td>{cells}</tr>"
        )
    return (
        "<p class='muted'>The users' thumbs up (1) or down (0) on each answer against every "
        "turn score: AUC, the chance that a thumbs-up turn scores higher than a thumbs-down "
        "one (0.5 = chance), and the point-biserial r (Pearson's r with the 0/1 thumb), with "
        "95% bootstrap intervals.</p>"
        "<div class='scroll'><table id='feedback-agreement'><tr><th>score</th>"
        "<th class='num'>turns</th><th class='num'>up</th><th class='num'>down</th>"
        "<th class='num'>AUC [95% CI]</th><th class='num'>point-biserial r [95% CI]</th></tr>"
        f"{''.join(rows)}</table></div>"
    )


def _judges_vs_gold(ctx: ReportContext) -> str | None:
    if not ctx.has_gold_links and not ctx.run.meta:
        return None
    n = len(ctx.links.judges)
    return _agreement(ctx.run) + fold(
        f"Confusion matrices of the link judges ({n})", _confusion(ctx), element_id="confusions"
    )
