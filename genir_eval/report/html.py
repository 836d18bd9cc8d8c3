"""``report.html``: one self-contained page explaining a run directory.

The page needs nothing at view time (no network, no script): styles are inline, plots are
inline SVG, and a Content-Security-Policy forbids scripts outright; long lists fold with
``<details>``. Every string that comes from the logs or the run (queries, responses, urls,
ids, task types, reasons, raw replies) is escaped, so a logged ``<script>`` shows as text.

For every run, gold or not: a banner when offline twins answered, every score per judge and
measure (mean with its interval, median, distribution, what is missing and why), the same
per task type, a glossary of the scores, how the judges agree with each other, the session
index and the turns of the sessions shown (:mod:`genir_eval.report.turns`). When the logs
carry satisfaction ratings or expert labels: the headline correlations with their 95%
intervals, scatter plots, the judges against the gold labels (``meta.json``'s ``judges``
blocks, named as ``genir-eval meta`` names them). Then the failures and the run's facts.

Sections are listed in :data:`SECTIONS` (id, title, ``render(ctx) -> str | None``); views
of a single turn in :data:`TURN_VIEWS`. Other report parts plug in there.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from genir_eval.failure_causes import cause_of
from genir_eval.figures import counted
from genir_eval.judges.kinds import Figure, Interval, JudgeCell, judge_kinds, kind_blocks
from genir_eval.meta.stats import cohen_kappa, correlations
from genir_eval.report.card import (
    GROUNDING_NOTE,
    GROUNDING_TITLE,
    card_html,
    grounding_scores,
    headline_card,
)
from genir_eval.report.citations import CITATIONS_CSS, citations_section
from genir_eval.report.glossary import describe_score
from genir_eval.report.judge_quality import SECTION_TITLE as QUALITY_TITLE
from genir_eval.report.judge_quality import quality_section
from genir_eval.report.plots import histogram_svg, scatter_svg, task_bars_svg
from genir_eval.report.preferences import preferences_section
from genir_eval.report.scores import BOOTSTRAP_MAX_N, SMALL_N, summarize
from genir_eval.report.tables import LevelTable, optional
from genir_eval.report.turns import TURN_VIEWS, TurnDetail, choose_sessions, session_details
from genir_eval.report.turns import session_index as _session_index
from genir_eval.report.views import (
    PARTS,
    PARTS_WITH_SCORES,
    ReportContext,
    ReportLimits,
    Section,
    esc,
    fmt,
    fmt_ci,
    fold,
    headline_score,
    mean_cell,
    table,
)
from genir_eval.report.worst import worst_html
from genir_eval.rundir.folder import FAILURES_FILE, REPORT_FILE, Run, load_run

__all__ = [
    "render_report",
    "write_report",
    "headline_score",
    "ReportLimits",
    "ReportContext",
    "Section",
    "SECTIONS",
    "PARTS",
    "TURN_VIEWS",
    "TurnDetail",
]

#: The failure table and the banner group missing judgments by judge and reason; past this
#: many groups the rest are counted in one line.
MAX_FAILURE_GROUPS = 12
#: A table longer than this many rows is folded (its first rows are not worth a screen).
FOLD_ROWS = 8
CORRELATIONS = ("spearman", "pearson", "kendall")
METHOD_TITLES = {"pearson": "Pearson r", "spearman": "Spearman &rho;", "kendall": "Kendall &tau;-b"}
LEVEL_TITLES = {"turn": "query level", "session": "session level"}

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC",sans-serif;
 margin:0 auto;max-width:1180px;padding:16px 20px;color:#1d2430;line-height:1.45}
h1{font-size:1.5em;margin:0 0 4px} h2{margin-top:32px;border-bottom:1px solid #d8dde6;
 padding-bottom:4px;font-size:1.2em} h3{font-size:1.05em;margin:18px 0 6px} h4{margin:4px 0}
.sub{color:#5b6576;margin:0 0 12px} .toc{font-size:.85em} .toc a{white-space:nowrap}
.banner{background:#fff4d6;border:1px solid #f0b429;border-radius:6px;padding:8px 12px;margin:8px 0}
.banner.failed{background:#fde2e1;border-color:#c53030} .banner.failed h2{border:0;margin:0 0 4px;
 color:#8a1c1c;font-size:1.25em} .banner.partial h2{border:0;margin:0 0 4px;font-size:1.1em}
.banner table{background:#fff} .banner ul{margin:4px 0 4px 18px;padding:0}
details.fold>summary{cursor:pointer;color:#3566a8;margin:6px 0}
.toc .part{color:#5b6576;font-weight:600}
.scroll{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:8px 0;font-size:.88em}
th,td{border:1px solid #d8dde6;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f2f4f8;overflow-wrap:break-word} td.num,th.num{text-align:right;
 font-variant-numeric:tabular-nums} td.num{white-space:nowrap}
td.sid{overflow-wrap:break-word;max-width:22em}
table.scores td:first-child{overflow-wrap:anywhere;max-width:16em}
tr.headline-row td{background:#f4f8ff}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0;align-items:center}
.level{width:110px;font-weight:600}
.card{border:1px solid #d8dde6;border-radius:8px;padding:10px 14px;min-width:150px;
 background:#fafbfd}
.card .label{font-size:.8em;color:#5b6576} .card .value{font-size:1.8em;font-weight:600;
 font-variant-numeric:tabular-nums} .card .ci{font-size:.8em;color:#5b6576}
.facts td:first-child{color:#5b6576}
.plot svg{max-width:100%;height:auto} svg.hist{display:block}
.turn{border:1px solid #d8dde6;border-radius:6px;padding:8px 12px;margin:10px 0}
.turn:target,.session:target,tr:target{outline:3px solid #f0b429}
.response{white-space:pre-wrap;background:#f7f8fa;padding:8px;border-radius:4px;
 max-height:24em;overflow:auto;font-size:.92em;overflow-wrap:anywhere}
.pred{background:#fde68a} .g-user{border-bottom:2px solid #2f855a}
.g-ann{text-decoration:underline dotted #6b46c1 2px}
a.cite,span.cite{font-size:.8em;vertical-align:super;margin-left:1px;text-decoration:none}
.legend{font-size:.85em;color:#5b6576}
.jd{margin:2px 0} .reason{color:#36404f;font-style:italic}
details.raw summary,details.page summary{cursor:pointer;color:#3566a8;font-size:.85em}
details.raw pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f8fa;padding:6px;
 max-height:16em;overflow:auto;font-size:.85em;margin:4px 0}
.muted{color:#5b6576} .bad{color:#a33} .hint{color:#5b6576;font-size:.9em} .up{color:#2f855a;font-weight:600}
.down{color:#a33;font-weight:600} .small{font-size:.8em;white-space:normal}
.flag{background:#fde2e1;color:#8a1c1c;border-radius:4px;padding:0 4px;font-size:.8em}
sup.twin{color:#a05a00}
.url{word-break:break-all} code{white-space:nowrap}
dl.glossary dt{font-weight:600;margin-top:6px} dl.glossary dd{margin-left:16px}
#citations table{display:block;overflow-x:auto;max-width:100%}
@media (max-width:860px){body{padding:10px}.level{width:auto}}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

# kept for code reading the report's former private helpers
_e = esc
_fmt = fmt
_ci = fmt_ci


def _prompt_versions(text: Any) -> str:
    """A judge's prompt versions; a long list (one per rubric bank) is folded."""
    versions = [v for v in str(text or "").split(", ") if v]
    if len(versions) <= 3:
        return esc(", ".join(versions))
    return (
        f"<details class='raw'><summary>{len(versions)} versions</summary>"
        f"<span class='small'>{esc(', '.join(versions))}</span></details>"
    )


def _header(ctx: ReportContext) -> str:
    run = ctx.run
    info = run.info
    scenario = info.get("scenario") or {}
    name = scenario.get("name") if isinstance(scenario, Mapping) else None
    usage = info.get("usage") or {}
    cache = info.get("cache") or {}
    judges = info.get("judges") or []
    facts = [
        ("scenario", name or "–"),
        ("scenario file", scenario.get("path", "–") if isinstance(scenario, Mapping) else "–"),
        (
            "sessions",
            f"{ctx.sessions.n} ({counted(ctx.turns.n, 'turn')}, {counted(ctx.links.n, 'link')})",
        ),
        ("skipped input rows", len(info.get("skipped") or [])),
        ("started", info.get("started_at", "–")),
        ("duration", f"{_fmt(info.get('duration_s'), 2)} s"),
        (
            "tokens",
            f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out",
        ),
        ("cost", f"${_fmt(info.get('cost_usd'), 4)}"),
        ("cache hits", f"{cache.get('hits', 0)} of {cache.get('lookups', '–')} lookups"),
        ("resumed from the journal", cache.get("resumed", 0)),
        ("provider calls", info.get("provider_calls", "–")),
        ("genir-eval", (info.get("versions") or {}).get("genir_eval", "–")),
        ("offline twins' evidence", info.get("offline_evidence", "–")),
    ]
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in facts)
    judge_rows = "".join(
        "<tr>"
        f"<td>{_e(j.get('name'))}</td><td>{_e(j.get('provider'))}</td>"
        f"<td>{_e(j.get('model'))}</td><td>{_prompt_versions(j.get('prompt_version'))}</td>"
        f"<td class='num'>{_e(j.get('labels', ''))}</td>"
        f"<td class='num'>{_e(j.get('missing', ''))}</td>"
        "</tr>"
        for j in judges
        if isinstance(j, Mapping)
    )
    judges_table = (
        "<h3>Judges</h3><div class='scroll'><table id='judges'><tr><th>judge</th><th>provider</th><th>model</th>"
        "<th>prompt</th><th class='num'>labels</th><th class='num'>missing</th></tr>"
        f"{judge_rows}</table></div>"
        if judge_rows
        else ""
    )
    return f"<div class='scroll'><table class='facts' id='run-facts'>{rows}</table></div>{judges_table}"


def _card_interval(entry: Mapping[str, Any], interval: Any) -> str:
    n = entry.get("n") or 0
    if isinstance(n, int) and n < SMALL_N:
        return f"<span class='flag'>n&lt;{SMALL_N}: no interval</span>"
    return f"95% CI {fmt_ci(interval) or '–'}"


def _headline(run: Run, score: str | None) -> str:
    meta = run.meta
    if not meta or score is None:
        return (
            "<p class='muted' id='no-meta'>No gold satisfaction in the input: "
            "no meta-evaluation.</p>"
        )
    correlations = meta.get("correlations") or {}
    rows = []
    for level in ("turn", "session"):
        entry = (correlations.get(level) or {}).get(score)
        if not entry:
            continue
        intervals = entry.get("ci95") or {}
        cards = []
        for method in CORRELATIONS:
            value = entry.get(method)
            if value is None:
                continue
            cards.append(
                f"<div class='card headline' id='headline-{level}-{method}' "
                f"data-level='{level}' data-method='{method}' data-score='{_e(score)}'>"
                f"<div class='label'>{METHOD_TITLES.get(method, _e(method))}</div>"
                f"<div class='value'>{_fmt(value)}</div>"
                f"<div class='ci'>{_card_interval(entry, intervals.get(method))}</div></div>"
            )
        rows.append(
            f"<div class='cards'><div class='level'>{LEVEL_TITLES[level]}<br>"
            f"<span class='muted'>n = {_e(entry.get('n'))}</span></div>{''.join(cards)}</div>"
        )
    parts = [
        f"<p>Headline score <b>{_e(score)}</b> against the users' own satisfaction ratings.</p>",
        *rows,
    ]
    return "".join(parts)


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


def _fmt_label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def run_status(run: Run) -> Mapping[str, Any]:
    """``run.json``'s ``status`` (``{}`` for a run written before runs had one)."""
    status = run.info.get("status")
    return status if isinstance(status, Mapping) else {}


def run_failed(run: Run) -> bool:
    """Whether the run failed: its scores are not a result (``status.ok`` is false)."""
    return run_status(run).get("ok", True) is False


def _endpoints(run: Run) -> dict[str, str]:
    """Where each judge's calls went, as the terminal names it (``openai/gpt-4o at url``)."""
    out = {}
    for judge in run.info.get("judges") or []:
        if not isinstance(judge, Mapping):
            continue
        where = f"{judge.get('provider')}/{judge.get('model')}"
        if judge.get("base_url"):
            where += f" at {judge['base_url']}"
        out[str(judge.get("id"))] = where
    return out


@dataclass(frozen=True)
class FailureGroup:
    """The missing judgments of one class of cause (:func:`~genir_eval.failure_causes.cause_of`),
    whichever judges it hit: their count, the judges and endpoints, the most frequent reason,
    what to check and the first sessions."""

    cause: str
    count: int
    judges: list[str]
    endpoints: list[str]
    reason: str
    hint: str
    sessions: list[str]


def failure_groups(run: Run) -> tuple[list[FailureGroup], int]:
    """The missing judgments grouped by cause, most frequent first, for at most
    :data:`MAX_FAILURE_GROUPS` groups, and the number of groups in all."""
    endpoints = _endpoints(run)
    counts: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    judges: dict[str, dict[str, None]] = {}
    wheres: dict[str, dict[str, None]] = {}
    examples: dict[str, list[str]] = {}
    hints: dict[str, str] = {}
    for failure in run.iter_failures():
        judge = str(failure.get("judge", ""))
        reason = " ".join(str(failure.get("reason", "")).split())
        cause = cause_of(reason)
        n = int(failure.get("count", 1) or 1)
        counts[cause.label] += n
        reasons.setdefault(cause.label, Counter())[reason] += n
        judges.setdefault(cause.label, {})[judge] = None
        where = endpoints.get(judge)
        if where:
            wheres.setdefault(cause.label, {})[where] = None
        hints.setdefault(cause.label, cause.hint_for(where))
        shown = examples.setdefault(cause.label, [])
        session = str(failure.get("session_id", ""))
        if len(shown) < 3 and session and session not in shown:
            shown.append(session)
    groups = [
        FailureGroup(
            cause=label,
            count=n,
            judges=sorted(judges[label]),
            endpoints=list(wheres.get(label, {})),
            reason=reasons[label].most_common(1)[0][0],
            hint=hints[label],
            sessions=examples[label],
        )
        for label, n in counts.most_common(MAX_FAILURE_GROUPS)
    ]
    return groups, len(counts)


def _failure_table(groups: Sequence[FailureGroup], table_id: str = "failures") -> str:
    rows = "".join(
        f"<tr><td class='num'>{g.count:,}</td><td><b>{esc(g.cause)}</b></td>"
        f"<td>{esc(', '.join(g.judges))}</td>"
        f"<td class='small'>{esc(', '.join(g.endpoints) or '–')}</td>"
        f"<td>{esc(g.reason)}<br><span class='hint'>hint: {esc(g.hint)}</span></td>"
        f"<td class='sid small'>{esc(', '.join(g.sessions))}</td></tr>"
        for g in groups
    )
    return (
        f"<div class='scroll'><table id='{table_id}'><tr><th class='num'>count</th>"
        "<th>cause</th><th>judges hit</th><th>endpoint</th><th>most frequent reason</th>"
        f"<th>e.g. sessions</th></tr>{rows}</table></div>"
    )


def _failures(run: Run) -> str:
    """How many judgments are missing; the table of causes is the banner's at the top of the
    page (shown once), this section says where every row is."""
    total = run.failures_total
    groups, n_groups = failure_groups(run)
    if not groups and not total:
        return "<p id='no-failures'>None: every judgment got a usable label.</p>"
    total = max(total, sum(g.count for g in groups))
    where = FAILURES_FILE if FAILURES_FILE in (run.info.get("files") or {}) else "run.json"
    anchor = "run-failed" if run_failed(run) else "run-partial"
    return (
        f"<p class='bad'>{_count(total, 'judgment')} missing, for "
        f"{_count(n_groups, 'cause')}: see the table of causes "
        f"<a href='#{anchor}'>at the top of the page</a>.</p>"
        f"<p class='muted'>Every missing judgment, one a row, is in {esc(where)}; in the "
        "evidence below each turn folds its missing judgments.</p>"
    )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _label_total(run: Run) -> int:
    return sum(
        int(j.get("labels") or 0) for j in run.info.get("judges") or [] if isinstance(j, Mapping)
    )


def _status_banner(ctx: ReportContext) -> str:
    """A failed run opens with why it failed and the missing judgments grouped by reason,
    and says that its scores are not a result; a run with some missing judgments (within
    what the scenario allows) opens with how many and why."""
    run = ctx.run
    status = run_status(run)
    failed = run_failed(run)
    total = run.failures_total
    if not failed and not total:
        return ""
    groups, n_groups = failure_groups(run)
    labels = _label_total(run)
    share = f" of {labels:,} ({total / labels:.0%})" if labels else ""
    reasons = "".join(f"<li>{esc(r)}</li>" for r in status.get("reasons") or ())
    top = _failure_table(groups, "top-failures") if groups else ""
    where = FAILURES_FILE if FAILURES_FILE in (run.info.get("files") or {}) else "run.json"
    more = (
        f"<p class='small'>… and {n_groups - len(groups)} other causes (see {esc(where)}).</p>"
        if n_groups > len(groups)
        else ""
    )
    if failed:
        return (
            "<div class='banner failed' id='run-failed' role='alert'>"
            "<h2>Run failed: these scores are not a result</h2>"
            f"<p>{_count(total, 'judgment')}{share} missing. Why the run failed:</p>"
            f"<ul>{reasons}</ul>{top}{more}"
            "<p class='small'>Fix the cause and run again (judgments already made are kept "
            "in the cache and journal, so no call is repeated). The scores computed from the "
            "labels that did arrive are folded at the end of the page, for diagnosis "
            "only.</p></div>"
        )
    return (
        "<div class='banner partial' id='run-partial'>"
        f"<h2>Partial run: {_count(total, 'judgment')}{share} missing</h2>"
        "<p class='small'>Within what the scenario allows (<code>max_missing</code> "
        f"{fmt(status.get('max_missing'), 3) if status.get('max_missing') is not None else '–'}"
        "): the scores leave them out, as missing, never as 0.</p>"
        f"{top}{more}</div>"
    )


def _banner(ctx: ReportContext) -> str:
    """Says at the top when offline twins answered, as the terminal does with ``*``."""
    twins = sorted(ctx.baselines)
    if not twins:
        return ""
    return (
        "<div class='banner' id='offline-banner'><b>Offline twins</b> answered "
        f"{len(twins)} judge{'s' if len(twins) > 1 else ''} ({esc(', '.join(twins))}): "
        "deterministic baselines computed from the log, not LLM judgments; their scores are "
        "marked <sup class='twin'>*</sup>. <code>--provider openai</code> (or a scenario "
        "naming a model) gives LLM labels.</div>"
    )


def _key_scores(ctx: ReportContext) -> set[str]:
    """The scores shown unfolded: the headline, its variants from other judges' labels and
    from gold, and each judge's own score."""
    headline = ctx.headline
    judges = {str(j.get("id")) for j in ctx.run.info.get("judges") or [] if isinstance(j, Mapping)}
    names = set(ctx.score_names("session")) | set(ctx.score_names("turn"))
    key = {n for n in names if n in judges}
    if headline:
        key |= {n for n in names if n in (headline, f"gold:{headline}")}
        key |= {n for n in names if n.startswith(f"{headline}@")}
    return key


def _score_rows(
    ctx: ReportContext, level: str, summaries: Sequence[Any] | None = None, suffix: str = ""
) -> str:
    summaries = ctx.summaries(level) if summaries is None else summaries
    if not summaries:
        return f"<p class='muted'>No {LEVEL_TITLES[level]} score.</p>"
    rows = []
    for s in summaries:
        reasons = "; ".join(f"{n} {esc(r)}" for r, n in sorted(s.missing_reasons.items()))
        missing = (
            f"{s.missing}<br><span class='muted small'>{reasons}</span>"
            if s.missing and reasons
            else str(s.missing)
        )
        hist = (
            histogram_svg(
                s.histogram, s.minimum or 0.0, s.maximum or 0.0, label=f"distribution of {s.name}"
            )
            if s.histogram
            else ""
        )
        rng = (
            f"<div class='muted small'>{fmt(s.minimum, 2)} – {fmt(s.maximum, 2)}</div>"
            if s.minimum is not None
            else ""
        )
        rows.append(
            f"<tr data-score='{esc(s.name)}'"
            + (" class='headline-row'" if s.name == ctx.headline else "")
            + f"><td>{ctx.marked(s.name)}</td>"
            f"<td class='num'>{s.n}</td><td class='num'>{missing}</td>"
            f"<td class='num'>{mean_cell(s)}</td><td class='num'>{fmt(s.median)}</td>"
            f"<td>{hist}{rng}</td></tr>"
        )
    noun = "sessions" if level == "session" else "turns"
    return (
        (f"<h3>{LEVEL_TITLES[level].capitalize()} ({noun})</h3>" if not suffix else "")
        + f"<div class='scroll'><table class='scores' id='scores-{level}{suffix}'>"
        f"<tr><th>score</th><th class='num'>n</th><th class='num'>missing (why)</th>"
        f"<th class='num'>mean [95% CI]</th><th class='num'>median</th>"
        f"<th>distribution (min – max)</th></tr>{''.join(rows)}</table></div>"
    )


def _scores(ctx: ReportContext) -> str:
    key = _key_scores(ctx)
    session = ctx.summaries("session")
    first = [s for s in session if s.name in key] or session[:FOLD_ROWS]
    shown = {s.name for s in first}
    rest = [s for s in session if s.name not in shown]
    folded = (
        fold(
            f"{len(rest)} more session scores (other measures, judges' other labels)",
            _score_rows(ctx, "session", rest, "-more"),
        )
        if rest
        else ""
    )
    turn = ctx.summaries("turn")
    return (
        "<p class='muted'>Means with a 95% interval of the mean (percentile bootstrap over "
        f"{ctx.limits.n_boot} resamples, seed {ctx.limits.seed}; normal approximation past "
        f"{BOOTSTRAP_MAX_N:,} values). Fewer than {SMALL_N} values get no interval "
        f"(<span class='flag'>n&lt;{SMALL_N}</span>). A session without a value is counted "
        "as missing, with the reason, never as 0.</p>"
        + _score_rows(ctx, "session", first)
        + folded
        + (
            fold(
                f"Query-level scores ({len(turn)} scores over the turns)",
                _score_rows(ctx, "turn"),
                element_id="turn-scores",
            )
            if turn
            else _score_rows(ctx, "turn")
        )
    )


def _task_types(ctx: ReportContext) -> str:
    run = ctx.run
    if not ctx.sessions.n:
        return "<p class='muted'>No sessions.</p>"
    groups = _task_groups(ctx.sessions, "(none)")
    sizes = {task: int(mask.sum()) for task, mask in groups.items()}
    names = ctx.score_names("session")
    judges = {str(j.get("id")) for j in run.info.get("judges") or [] if isinstance(j, Mapping)}
    columns = [ctx.headline] if ctx.headline in names else []
    columns += [n for n in names if n in judges and n not in columns]
    columns = [c for c in columns if c is not None][:6]
    task_types = sorted(groups, key=lambda t: (-sizes[t], t))
    rows = []
    for task in task_types:
        members = groups[task]
        cells = "".join(
            f"<td class='num'>{mean_cell(summarize(c, ctx.sessions.column(c)[members], n_boot=ctx.limits.n_boot, seed=ctx.limits.seed), 2)}</td>"
            for c in columns
        )
        rows.append(f"<tr><td>{esc(task)}</td><td class='num'>{sizes[task]}</td>{cells}</tr>")
    head = "".join(f"<th class='num'>{ctx.marked(c)}</th>" for c in columns)
    tab = (
        "<div class='scroll'><table id='task-type-scores'><tr><th>task type</th>"
        f"<th class='num'>sessions</th>{head}</tr>{''.join(rows)}</table></div>"
    )
    return tab + _task_bars(ctx, ctx.headline)


def _glossary(ctx: ReportContext) -> str:
    """One row per score family: a measure and its ``@judge`` / ``gold:`` variants share a
    row, since they differ only in whose labels they are computed from."""
    run = ctx.run
    families: dict[str, list[str]] = {}
    for level in ("session", "turn"):
        for name in ctx.score_names(level):
            base = name
            if not name.startswith("z("):
                base = name.removeprefix("gold:").partition("@")[0]
            variants = families.setdefault(base, [])
            if name not in variants:
                variants.append(name)
    entries = []
    for base, variants in families.items():
        d = describe_score(base, run)
        direction = {True: "higher is better", False: "lower is better", None: ""}[
            d.higher_is_better
        ]
        facts = "; ".join(
            part for part in (f"range {d.range}" if d.range else "", direction) if part
        )
        sources = []
        for name in variants:
            source = describe_score(name, run).source
            sources.append(
                f"<code>{ctx.marked(name)}</code> from {esc(source)}"
                if source
                else f"<code>{ctx.marked(name)}</code>"
            )
        entries.append(
            f"<dt id='g-{esc(base)}'>{ctx.marked(base)}"
            + (f" <span class='muted'>({esc(facts)})</span>" if facts else "")
            + f"</dt><dd>{esc(d.averages)}<br><span class='muted small'>"
            + " · ".join(sources)
            + "</span></dd>"
        )
    glossary = f"<dl class='glossary' id='glossary-list'>{''.join(entries)}</dl>"
    first = ctx.link_judges[0] if ctx.link_judges else None
    rules = [
        "<li><b>Plain measure names</b> (<code>sdcg_urge</code>) are computed from the link "
        + (
            f"labels of <b>{esc(first)}</b>, the scenario's first link judge"
            if first
            else "labels of the scenario's first link judge"
        )
        + ".</li>",
        "<li><b><code>measure@judge</code></b>: the same measure from another judge's link "
        "labels.</li>",
        "<li><b><code>gold:measure</code></b>: the same measure from the expert (gold) link "
        "labels in the input, where present.</li>",
        "<li><b><code>judge</code></b> alone: that judge's own score (e.g. a satisfaction "
        "rating); <code>judge:item</code> one of its other labels.</li>",
        "<li><b><code>z(a+b)</code></b>: the mean of the z-scores of a and b over this run.</li>",
        "<li><sup class='twin'>*</sup> marks scores from offline twins (baselines).</li>",
    ]
    return f"<ul>{''.join(rules)}</ul>{glossary}"


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


def _with_gold(render: Any) -> Any:
    def only_with_gold(ctx: ReportContext) -> str | None:
        return render(ctx) if (ctx.run.meta or {}).get("correlations") else None

    return only_with_gold


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


def _chosen(ctx: ReportContext) -> Any:
    if "_chosen" not in ctx.__dict__:
        ctx.__dict__["_chosen"] = choose_sessions(ctx)
    return ctx.__dict__["_chosen"]


def _score_cards(ctx: ReportContext) -> str:
    """The headline score's mean and the judges' own session scores (grounding ones
    aside: they have their section), each a card with its interval: what a run without
    gold says on its own."""
    summaries = {s.name: s for s in ctx.summaries("session")}
    judges = [str(j.get("id")) for j in ctx.run.info.get("judges") or [] if isinstance(j, Mapping)]
    grounding = set(grounding_scores(ctx.run, list(summaries)))
    names = [ctx.headline] if ctx.headline in summaries else []
    names += [j for j in judges if j in summaries and j not in names and j not in grounding]
    return _mean_cards(ctx, [str(n) for n in names[:4]], "score-cards")


def _mean_cards(ctx: ReportContext, names: list[str], element_id: str) -> str:
    summaries = {s.name: s for s in ctx.summaries("session")}
    cards = []
    for name in names:
        s = summaries[name]
        if s.mean is None:
            interval = "no value"
        elif s.small:
            interval = f"<span class='flag'>n&lt;{SMALL_N}: no interval</span>"
        elif s.ci is None:
            interval = "all equal"
        else:
            interval = f"95% CI {fmt_ci(s.ci)}"
        missing = f", {s.missing} missing" if s.missing else ""
        cards.append(
            f"<div class='card score-card' data-score='{esc(name)}'>"
            f"<div class='label'>{ctx.marked(name)}"
            + (" (headline)" if name == ctx.headline else "")
            + f"</div><div class='value'>{fmt(s.mean)}</div>"
            f"<div class='ci'>{interval}<br>mean of {counted(s.n, 'session')}{missing}</div></div>"
        )
    if not cards:
        return ""
    return (
        f"<div class='cards' id='{element_id}'><div class='level'>session means</div>"
        f"{''.join(cards)}</div>"
    )


def _grounding(ctx: ReportContext) -> str | None:
    """The grounding scores' means, apart from the quality headline."""
    every = grounding_scores(ctx.run, [s.name for s in ctx.summaries("session")])
    # the run's own measures; their variants from other judges' labels and from gold are in
    # the Scores section
    names = [n for n in every if "@" not in n and not n.startswith(("gold:", "labels:"))][:6]
    if not names:
        return None
    return f"<p class='muted'>{esc(GROUNDING_NOTE)}.</p>" + _mean_cards(
        ctx, names, "grounding-cards"
    )


SUPPORT_WORDS = {"full": "fully supported", "partial": "partly supported", "none": "not supported"}


def _citation_verdicts(ctx: ReportContext) -> str:
    """How many citations each citation judge found supporting their statement, in words."""
    counts: dict[str, Counter[str]] = {}
    for row in ctx.run.iter_rows("citations"):
        counts.setdefault(str(row.get("judge")), Counter())[
            str(row.get("support") or "missing")
        ] += 1
    parts = []
    for judge, by_verdict in counts.items():
        total = sum(by_verdict.values())
        cards = "".join(
            f"<div class='card verdict' data-verdict='{verdict}'>"
            f"<div class='label'>{esc(SUPPORT_WORDS.get(verdict, verdict))}</div>"
            f"<div class='value'>{by_verdict[verdict]}</div>"
            f"<div class='ci'>{by_verdict[verdict] / total:.0%} of {total} citations</div></div>"
            for verdict in (*SUPPORT_WORDS, "missing")
            if by_verdict[verdict] or verdict != "missing"
        )
        parts.append(
            f"<div class='cards citation-verdicts' data-judge='{esc(judge)}'>"
            f"<div class='level'>citations<br><span class='muted'>{ctx.marked(judge)}</span>"
            f"</div>{cards}</div>"
        )
    return "".join(parts)


def _verdict(ctx: ReportContext) -> str:
    """What a reader decides on: the correlation with users when there is gold, the
    headline score's mean, and the citation verdicts."""
    parts = []
    parts.append(_citation_verdicts(ctx))
    if (ctx.run.meta or {}).get("correlations"):
        parts.append(_headline(ctx.run, ctx.headline))
    parts.append(_score_cards(ctx))
    card = headline_card(ctx.run)
    if card is not None:
        parts.append(card_html(card, ctx.marked(card.score)))
    return "".join(parts)


SECTIONS: list[Section] = [
    Section("headline", "Headline", _verdict, part="headline"),
    Section(
        "scatter-section",
        "Predicted vs user satisfaction",
        _with_gold(lambda ctx: _scatter(ctx, ctx.headline)),
        part="headline",
    ),
    Section(
        "worst",
        "Worst first",
        lambda ctx: worst_html(ctx.run, set(_chosen(ctx).positions)),
        part="headline",
    ),
    Section("grounding", GROUNDING_TITLE, _grounding, part="headline"),
    Section("scores", "Scores", _scores, part="distributions"),
    Section("task-types", "Per task type", _task_types, part="distributions"),
    Section("feedback", "Scores vs the users' thumbs", _feedback, part="distributions"),
    Section(
        "preferences",
        "Scores vs people's preferences",
        lambda ctx: preferences_section(ctx.run, ctx.marked),
        part="distributions",
    ),
    Section(
        "all-scores",
        "All scores vs user satisfaction",
        _with_gold(lambda ctx: _all_scores(ctx.run)),
        part="distributions",
    ),
    Section("judge-agreement", "Agreement between judges", _between_judges, part="judges"),
    Section("confusion", "Judges vs expert labels", _judges_vs_gold, part="judges"),
    Section(
        "judge-quality",
        QUALITY_TITLE,
        lambda ctx: quality_section((ctx.run.meta or {}).get("judges")),
        part="judges",
    ),
    Section(
        "citations",
        "Citation support",
        lambda ctx: citations_section(ctx.run) or None,
        part="evidence",
    ),
    Section("sessions", "Sessions", lambda ctx: _session_index(ctx, _chosen(ctx)), part="evidence"),
    Section("details", "Turns", lambda ctx: session_details(ctx, _chosen(ctx)), part="evidence"),
    Section("failures-section", "Failures", lambda ctx: _failures(ctx.run), part="reference"),
    Section("glossary", "What the scores mean", _glossary, part="reference"),
    Section("run", "Run", _header, part="reference"),
]
"""The page's sections in order (grouped by :data:`PARTS`: verdict, scores, judge quality,
evidence, reference); a renderer returning ``None`` leaves its section out. A new section
is inserted where its part's sections are."""


def _toc(shown: Sequence[tuple[Section, str]]) -> str:
    groups: dict[str, list[str]] = {}
    for section, _ in shown:
        groups.setdefault(section.part, []).append(
            f"<a href='#{section.id}'>{esc(section.title)}</a>"
        )
    return " &nbsp; ".join(
        f"<span class='part'>{esc(PARTS.get(part, part))}:</span> {' · '.join(links)}"
        for part, links in groups.items()
    )


def render_report(run: Run, *, limits: ReportLimits | None = None) -> str:
    """The report page of ``run`` as one self-contained HTML string."""
    ctx = ReportContext(run, limits or ReportLimits())
    scenario = run.info.get("scenario") or {}
    name = scenario.get("name") if isinstance(scenario, Mapping) else None
    title = f"genir-eval report: {name}" if name else "genir-eval report"
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    order = {part: i for i, part in enumerate(PARTS)}
    sections = sorted(SECTIONS, key=lambda s: order.get(s.part, len(order)))
    shown = [(s, c) for s in sections if (c := s.render(ctx)) is not None]
    failed = run_failed(run)

    def block(section: Section, content: str) -> str:
        return f"<section id='{section.id}'><h2>{esc(section.title)}</h2>{content}</section>"

    kept = [(s, c) for s, c in shown if not (failed and s.part in PARTS_WITH_SCORES)]
    if failed:  # what went wrong comes first
        kept.sort(key=lambda item: item[0].id != "failures-section")
    body = "".join(block(s, c) for s, c in kept)
    if failed:
        # a failed run's scores are kept for diagnosis, folded and said not to be a result
        diagnosis = "".join(block(s, c) for s, c in shown if s.part in PARTS_WITH_SCORES)
        body += fold(
            "Scores computed from the labels that did arrive (diagnosis only: not a result)",
            diagnosis,
            element_id="failed-scores",
        )
    if (run.meta or {}).get("correlations") or failed:
        gold_note = ""
    elif ctx.has_gold:
        gold_note = (
            "<p class='muted' id='no-meta'>The meta-evaluation was not run: the scores are "
            "described on their own.</p>"
        )
    else:
        gold_note = (
            "<p class='muted' id='no-meta'>No user satisfaction in the input: the scores are "
            "described on their own (no correlation with users).</p>"
        )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{CSS}{CITATIONS_CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1>{_status_banner(ctx)}"
        f"<p class='sub'>{counted(ctx.sessions.n, 'session', grouped=True)}, "
        f"{counted(ctx.turns.n, 'turn', grouped=True)}, "
        f"{counted(ctx.links.n, 'source', grouped=True)} · generated {generated}</p>"
        f"{_banner(ctx)}<p class='sub toc'>{_toc(kept)}</p>{gold_note}"
        f"{body}</body></html>\n"
    )


def write_report(run: Run | str | os.PathLike[str], *, limits: ReportLimits | None = None) -> Path:
    """Render the report of a run (or run directory) into its ``report.html``."""
    loaded = run if isinstance(run, Run) else load_run(run)
    path = loaded.directory / REPORT_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render_report(loaded, limits=limits), encoding="utf-8")
    os.replace(tmp, path)
    return path
