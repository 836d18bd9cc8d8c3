"""``report.html``: one self-contained page summarising a run directory.

The page needs nothing at view time (no network, no script): styles are inline, plots are
inline SVG, and a Content-Security-Policy forbids scripts outright. Every string that comes
from the logs or the run (queries, responses, urls, ids, task types, failure reasons) is
escaped with :func:`html.escape`, so a logged ``<script>`` shows as text.

Sections: the headline correlations with their 95% intervals, a scatter of the headline
score against user satisfaction at query and session level, bars per task type, the judges
against the gold labels (``meta.json``'s ``judges`` blocks, named as ``genir-eval meta``
names them: link agreement and confusion matrices, useful spans, ITEM and RUBRIC judges),
the worst sessions with links to their turns further down the page, and the failures.
"""

from __future__ import annotations

import html
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from genir_eval.report.citations import CITATIONS_CSS, citations_section
from genir_eval.report.outputs import REPORT_FILE, Run, SessionRow, TurnRow, load_run
from genir_eval.report.plots import scatter_svg, task_bars_svg

__all__ = ["render_report", "write_report", "headline_score", "WORST_SESSIONS"]

WORST_SESSIONS = 10
MAX_FAILURES = 200
CORRELATIONS = ("spearman", "pearson", "kendall")
METHOD_TITLES = {"pearson": "Pearson r", "spearman": "Spearman &rho;", "kendall": "Kendall &tau;-b"}
LEVEL_TITLES = {"turn": "query level", "session": "session level"}

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC",sans-serif;
 margin:0 auto;max-width:1180px;padding:24px;color:#1d2430;line-height:1.45}
h1{font-size:1.6em;margin:0 0 4px} h2{margin-top:36px;border-bottom:1px solid #d8dde6;
 padding-bottom:4px;font-size:1.25em} h3{font-size:1.05em;margin:18px 0 6px}
.sub{color:#5b6576;margin:0 0 16px}
table{border-collapse:collapse;margin:8px 0;font-size:.9em}
th,td{border:1px solid #d8dde6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f8} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0;align-items:center}
.level{width:110px;font-weight:600}
.card{border:1px solid #d8dde6;border-radius:8px;padding:10px 14px;min-width:150px;
 background:#fafbfd}
.card .label{font-size:.8em;color:#5b6576} .card .value{font-size:1.8em;font-weight:600;
 font-variant-numeric:tabular-nums} .card .ci{font-size:.8em;color:#5b6576}
.facts td:first-child{color:#5b6576}
.plot svg{max-width:100%;height:auto}
.turn{border:1px solid #d8dde6;border-radius:6px;padding:8px 12px;margin:10px 0}
.turn:target,.session:target{outline:3px solid #f0b429}
.response{white-space:pre-wrap;background:#f7f8fa;padding:8px;border-radius:4px;
 max-height:22em;overflow:auto;font-size:.9em}
.muted{color:#5b6576} .bad{color:#a33}
.url{word-break:break-all}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(value: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.{digits}f}"
    return _e(value)


def _ci(interval: Any) -> str:
    if isinstance(interval, (list, tuple)) and len(interval) == 2:
        lo, hi = interval
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            return f"[{lo + 0.0:.3f}, {hi + 0.0:.3f}]".replace("-0.000", "0.000")
    return ""


def headline_score(run: Run) -> str | None:
    """The score the report leads with: ``meta.json``'s headline, else the scenario's,
    else the first session score."""
    if run.meta and run.meta.get("headline"):
        return str(run.meta["headline"])
    scenario = run.info.get("scenario") or {}
    headline = (scenario.get("meta") or {}).get("headline") if isinstance(scenario, dict) else None
    if headline:
        return str(headline)
    names = run.score_names("session")
    return names[0] if names else None


def _header(run: Run) -> str:
    info = run.info
    scenario = info.get("scenario") or {}
    name = scenario.get("name") if isinstance(scenario, Mapping) else None
    usage = info.get("usage") or {}
    cache = info.get("cache") or {}
    judges = info.get("judges") or []
    facts = [
        ("scenario", name or "–"),
        ("scenario file", scenario.get("path", "–") if isinstance(scenario, Mapping) else "–"),
        ("sessions", f"{len(run.sessions)} ({len(run.turns)} turns, {len(run.links)} links)"),
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
    ]
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in facts)
    judge_rows = "".join(
        "<tr>"
        f"<td>{_e(j.get('name'))}</td><td>{_e(j.get('provider'))}</td>"
        f"<td>{_e(j.get('model'))}</td><td>{_e(j.get('prompt_version', ''))}</td>"
        f"<td class='num'>{_e(j.get('labels', ''))}</td>"
        f"<td class='num'>{_e(j.get('missing', ''))}</td>"
        "</tr>"
        for j in judges
        if isinstance(j, Mapping)
    )
    judges_table = (
        "<h3>Judges</h3><table id='judges'><tr><th>judge</th><th>provider</th><th>model</th>"
        "<th>prompt</th><th class='num'>labels</th><th class='num'>missing</th></tr>"
        f"{judge_rows}</table>"
        if judge_rows
        else ""
    )
    return f"<table class='facts' id='run-facts'>{rows}</table>{judges_table}"


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
                f"<div class='ci'>95% CI {_ci(intervals.get(method)) or '–'}</div></div>"
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


def _all_scores(run: Run) -> str:
    correlations = (run.meta or {}).get("correlations") or {}
    parts = []
    for level in ("turn", "session"):
        table = correlations.get(level) or {}
        if not table:
            continue
        rows = []
        for name, entry in table.items():
            intervals = entry.get("ci95") or {}
            cells = "".join(
                f"<td class='num'>{_fmt(entry.get(m))}</td>"
                f"<td class='num muted'>{_ci(intervals.get(m))}</td>"
                for m in CORRELATIONS
            )
            rows.append(
                f"<tr><td>{_e(name)}</td><td class='num'>{_e(entry.get('n'))}</td>{cells}</tr>"
            )
        head = "".join(f"<th class='num'>{m}</th><th class='num'>95% CI</th>" for m in CORRELATIONS)
        parts.append(
            f"<h3>All scores, {LEVEL_TITLES[level]}</h3>"
            f"<table class='correlations' id='correlations-{level}'>"
            f"<tr><th>score</th><th class='num'>n</th>{head}</tr>{''.join(rows)}</table>"
        )
    if not parts:
        return "<p class='muted'>No meta-evaluation.</p>"
    return "".join(parts)


def _pairs(rows: Iterable[TurnRow | SessionRow], score: str) -> tuple[list[float], list[float]]:
    gold, predicted = [], []
    for row in rows:
        value = row.scores.get(score)
        if row.gold_satisfaction is not None and value is not None:
            gold.append(row.gold_satisfaction)
            predicted.append(value)
    return gold, predicted


def _scatter(run: Run, score: str | None) -> str:
    if score is None:
        return "<p class='muted'>No scores.</p>"
    panels = []
    for title, rows in (("query level", run.turns), ("session level", run.sessions)):
        gold, predicted = _pairs(rows, score)
        if gold:
            panels.append((f"{title} (n = {len(gold)})", gold, predicted))
    if not panels:
        return "<p class='muted'>No user satisfaction to plot against.</p>"
    return f"<div class='plot' id='scatter'>{scatter_svg(panels, y_label=score)}</div>"


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _task_bars(run: Run, score: str | None) -> str:
    if score is None or not run.sessions:
        return "<p class='muted'>No scores.</p>"
    groups: dict[str, list[SessionRow]] = defaultdict(list)
    for row in run.sessions:
        groups[row.task_type or "(unknown)"].append(row)
    task_types = sorted(groups)
    has_gold = any(r.gold_satisfaction is not None for r in run.sessions)
    svg = task_bars_svg(
        task_types,
        [len(groups[t]) for t in task_types],
        [_mean(r.scores.get(score) for r in groups[t]) for t in task_types],
        [_mean(r.gold_satisfaction for r in groups[t]) for t in task_types] if has_gold else None,
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
        f"<table class='confusion' data-judge='{_e(judge)}'>"
        f"<tr><th>gold \\ judge</th>{head}</tr>{''.join(body)}</table>"
    )


def _confusion(run: Run) -> str:
    """Each link judge's confusion matrix: ``meta.json``'s (``genir-eval meta``'s), else
    counted from the links table when the run has no meta-evaluation."""
    judges: dict[str, None] = {}
    for link in run.links:
        for judge in link.labels:
            judges.setdefault(judge, None)
    from_meta = _judge_blocks(run, "link_usefulness")
    parts = []
    for judge in judges:
        matrix = (from_meta.get(judge) or {}).get("confusion_matrix")
        if isinstance(matrix, Mapping):
            parts.append(_confusion_table(judge, matrix["labels"], matrix["matrix"]))
            continue
        pairs = [
            (link.gold, link.labels.get(judge))
            for link in run.links
            if link.gold is not None and link.labels.get(judge) is not None
        ]
        if not pairs:
            continue
        classes = sorted({p for pair in pairs for p in pair if p is not None})
        counts: dict[tuple[float, float], int] = defaultdict(int)
        for gold, label in pairs:
            assert gold is not None and label is not None
            counts[(gold, label)] += 1
        table = [[counts.get((g, p), 0) for p in classes] for g in classes]
        parts.append(_confusion_table(judge, classes, table))
    if not parts:
        return "<p class='muted'>No link has both a gold and a judge label.</p>"
    return "".join(parts)


def _judge_blocks(run: Run, block: str) -> dict[str, Mapping[str, Any]]:
    """``meta.json``'s ``judges[<id>][block]`` by judge id (``genir-eval meta``'s names)."""
    judges = (run.meta or {}).get("judges") or {}
    return {
        judge: entry[block]
        for judge, entry in judges.items()
        if isinstance(entry, Mapping) and isinstance(entry.get(block), Mapping)
    }


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
    return f"<table id='{table_id}'><tr>{th}</tr>{body}</table>"


SPAN_REFERENCES = {
    "vs_user": "the user's marks",
    "vs_annotators": "the annotators' marks",
    "human_reference_user_vs_annotators": "user vs annotators (human reference)",
}


def _agreement(run: Run) -> str:
    parts = []
    links = _judge_blocks(run, "link_usefulness")
    if links:
        rows = [
            [
                judge,
                m.get("n"),
                m.get("missing"),
                m.get("spearman"),
                m.get("kendall"),
                m.get("cohen_kappa_binary"),
                m.get("cohen_kappa_weighted"),
                m.get("mae"),
                m.get("pairwise_auc"),
            ]
            for judge, m in links.items()
        ]
        parts.append(
            "<p class='muted'>Link labels (0-3) against the experts': kappa binary on useful "
            "(2-3) vs not, weighted linearly on 0-3; AUC over pairs of links with different "
            "gold labels.</p>"
            + _table(
                "link-agreement",
                [
                    "link judge",
                    "n",
                    "missing",
                    "spearman",
                    "kendall",
                    "kappa (binary)",
                    "kappa (weighted)",
                    "MAE",
                    "AUC",
                ],
                rows,
            )
        )
    spans = _judge_blocks(run, "spans")
    if spans:
        rows = [
            [
                f"{judge}: {title}",
                m.get("n_turns"),
                m.get("precision"),
                m.get("recall"),
                m.get("f1"),
                m.get("macro_f1"),
            ]
            for judge, block in spans.items()
            for name, title in SPAN_REFERENCES.items()
            if isinstance(m := block.get(name), Mapping)
        ]
        parts.append(
            "<h3>Useful spans vs gold</h3>"
            + _table(
                "span-agreement",
                ["judge: against", "turns", "precision", "recall", "F1", "macro F1"],
                rows,
            )
        )
    items = _judge_blocks(run, "item")
    if items:
        rows = []
        for judge, m in items.items():
            k = m.get("k", 5)
            final = m.get("final") or {}
            rows.append(
                [
                    judge,
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
        parts.append(
            "<h3>ITEM judges: useful-link sets vs gold</h3>"
            + _table(
                "item-agreement",
                [
                    "judge",
                    "turns",
                    "missing",
                    "precision",
                    "recall",
                    "F1",
                    "F1 (1st iteration)",
                    "nDCG@5",
                    "nDCG@5 (log order)",
                    "iterations",
                ],
                rows,
            )
        )
    rubrics = _judge_blocks(run, "rubric")
    if rubrics:
        rows = []
        for judge, m in rubrics.items():
            k = m.get("k", 5)
            binary = m.get("binary") or {}
            grade = m.get("grade_vs_gold") or {}
            coverage = m.get("coverage_vs_query_satisfaction") or {}
            rows.append(
                [
                    judge,
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
        parts.append(
            "<h3>RUBRIC judges: passage grades vs gold</h3>"
            + _table(
                "rubric-agreement",
                [
                    "judge",
                    "turns",
                    "precision",
                    "recall",
                    "F1",
                    "grade spearman",
                    "grade kendall",
                    "nDCG@5",
                    "coverage kendall (query satisfaction)",
                ],
                rows,
            )
        )
    return "".join(parts)


def _fmt_label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _worst(run: Run, score: str | None) -> tuple[str, list[int]]:
    if score is None:
        return "<p class='muted'>No scores.</p>", []
    indexed = [
        (row.scores.get(score), i)
        for i, row in enumerate(run.sessions)
        if row.scores.get(score) is not None
    ]
    indexed.sort(key=lambda pair: (pair[0], pair[1]))
    chosen = [i for _, i in indexed[:WORST_SESSIONS]]
    if not chosen:
        return "<p class='muted'>No session has a score.</p>", []
    turns_by_session: dict[str, list[TurnRow]] = defaultdict(list)
    for turn in run.turns:
        turns_by_session[turn.session_id].append(turn)
    rows = []
    for i in chosen:
        row = run.sessions[i]
        links = " ".join(
            f"<a href='#turn-{i}-{t.turn}'>{t.turn}</a>"
            for t in sorted(turns_by_session[row.session_id], key=lambda t: t.turn)
        )
        rows.append(
            f"<tr><td><a href='#session-{i}'>{_e(row.session_id)}</a></td>"
            f"<td>{_e(row.task_type or '')}</td>"
            f"<td class='num'>{_fmt(row.scores.get(score))}</td>"
            f"<td class='num'>{_fmt(row.gold_satisfaction, 1)}</td>"
            f"<td>{links}</td></tr>"
        )
    table = (
        f"<p>The {len(chosen)} sessions with the lowest <b>{_e(score)}</b>.</p>"
        "<table id='worst-sessions'><tr><th>session</th><th>task type</th>"
        f"<th class='num'>{_e(score)}</th><th class='num'>user satisfaction</th><th>turns</th></tr>"
        f"{''.join(rows)}</table>"
    )
    return table, chosen


def _session_details(run: Run, chosen: Sequence[int]) -> str:
    turns_by_session: dict[str, list[TurnRow]] = defaultdict(list)
    for turn in run.turns:
        turns_by_session[turn.session_id].append(turn)
    links_by_turn: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for link in run.links:
        links_by_turn[(link.session_id, link.turn)].append(link)
    parts = []
    for i in chosen:
        session = run.sessions[i]
        turn_parts = []
        for turn in sorted(turns_by_session[session.session_id], key=lambda t: t.turn):
            scores = ", ".join(f"{_e(k)} {_fmt(v)}" for k, v in turn.scores.items())
            link_rows = "".join(
                f"<tr><td class='num'>{link.link_id}</td>"
                f"<td class='url'>{_e(link.title)}<br><span class='muted'>{_e(link.url)}</span></td>"
                f"<td class='num'>{_fmt(link.gold, 0)}</td>"
                f"<td>{_labels(link.labels, link.missing)}</td></tr>"
                for link in links_by_turn[(session.session_id, turn.turn)]
            )
            links_table = (
                "<table class='links'><tr><th class='num'>link</th><th>title / url</th>"
                f"<th class='num'>gold</th><th>judge labels</th></tr>{link_rows}</table>"
                if link_rows
                else "<p class='muted'>No links.</p>"
            )
            turn_parts.append(
                f"<div class='turn' id='turn-{i}-{turn.turn}'>"
                f"<h4>Turn {turn.turn}: {_e(turn.query)}</h4>"
                f"<p class='muted'>user satisfaction {_fmt(turn.gold_satisfaction, 1)}; "
                f"{scores}</p>"
                f"<div class='response'>{_e(turn.response_text)}</div>{links_table}</div>"
            )
        parts.append(
            f"<section class='session' id='session-{i}'>"
            f"<h3>Session {_e(session.session_id)}</h3>"
            f"<p class='muted'>{_e(session.task_type or '')}; user satisfaction "
            f"{_fmt(session.gold_satisfaction, 1)}</p>{''.join(turn_parts)}</section>"
        )
    return "".join(parts)


def _labels(labels: Mapping[str, float | None], missing: Mapping[str, str]) -> str:
    items = []
    for judge, value in labels.items():
        if value is None:
            reason = missing.get(judge, "missing")
            items.append(f"{_e(judge)}: <span class='bad' title='{_e(reason)}'>missing</span>")
        else:
            items.append(f"{_e(judge)}: {_fmt_label(value)}")
    return "<br>".join(items)


def _failures(run: Run) -> str:
    failures = [f for f in run.info.get("failures") or [] if isinstance(f, Mapping)]
    if not failures:
        return "<p id='no-failures'>None: every judgment got a usable label.</p>"
    rows = "".join(
        f"<tr><td>{_e(f.get('judge'))}</td><td>{_e(f.get('session_id'))}</td>"
        f"<td class='num'>{_e(f.get('turn'))}</td><td>{_e(f.get('item'))}</td>"
        f"<td>{_e(f.get('reason'))}</td></tr>"
        for f in failures[:MAX_FAILURES]
    )
    more = (
        f"<p class='muted'>… and {len(failures) - MAX_FAILURES} more (see run.json).</p>"
        if len(failures) > MAX_FAILURES
        else ""
    )
    return (
        f"<p class='bad'>{len(failures)} judgments are missing.</p>"
        "<table id='failures'><tr><th>judge</th><th>session</th><th class='num'>turn</th>"
        f"<th>item</th><th>reason</th></tr>{rows}</table>{more}"
    )


def render_report(run: Run) -> str:
    """The report page of ``run`` as one self-contained HTML string."""
    score = headline_score(run)
    worst_table, chosen = _worst(run, score)
    scenario = run.info.get("scenario") or {}
    name = scenario.get("name") if isinstance(scenario, Mapping) else None
    title = f"genir-eval report: {name}" if name else "genir-eval report"
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = [
        ("headline", "Headline correlations", _headline(run, score)),
        ("scatter-section", "Predicted vs user satisfaction", _scatter(run, score)),
        ("task-types", "Per task type", _task_bars(run, score)),
        ("confusion", "Judges vs expert labels", _agreement(run) + _confusion(run)),
        ("worst", "Worst sessions", worst_table),
        ("citations", "Citation support", citations_section(run)),
        ("all-scores", "All scores vs user satisfaction", _all_scores(run)),
        ("failures-section", "Failures", _failures(run)),
        ("run", "Run", _header(run)),
        ("details", "Turns of the worst sessions", _session_details(run, chosen)),
    ]
    sections = [s for s in sections if s[0] != "citations" or s[2]]
    toc = " · ".join(f"<a href='#{sid}'>{_e(t)}</a>" for sid, t, _ in sections)
    body = "".join(f"<section id='{sid}'><h2>{_e(t)}</h2>{c}</section>" for sid, t, c in sections)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{CSS}{CITATIONS_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p class='sub'>generated {generated} · {toc}</p>"
        f"{body}</body></html>\n"
    )


def write_report(run: Run | str | os.PathLike[str]) -> Path:
    """Render the report of a run (or run directory) into its ``report.html``."""
    loaded = run if isinstance(run, Run) else load_run(run)
    path = loaded.directory / REPORT_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render_report(loaded), encoding="utf-8")
    os.replace(tmp, path)
    return path
