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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from genir_eval.figures import counted
from genir_eval.paths import write_output
from genir_eval.records import EVIDENCE_KINDS
from genir_eval.report.agreement import (  # noqa: F401 - moved, importable from here as before
    CORRELATIONS,
    LEVEL_TITLES,
    METHOD_TITLES,
    _all_scores,
    _between_judges,
    _feedback,
    _judges_vs_gold,
)
from genir_eval.report.card import (
    PARTS_NOTE,
    PARTS_TITLE,
    card_html,
    headline_card,
    part_scores,
)
from genir_eval.report.charts import (  # noqa: F401 - moved, importable from here as before
    MAX_SCATTER_POINTS,
    _sampled,
    _scatter,
)
from genir_eval.report.citations import CITATIONS_CSS, citations_section
from genir_eval.report.glossary import describe_score
from genir_eval.report.judge_quality import SECTION_TITLE as QUALITY_TITLE
from genir_eval.report.judge_quality import quality_section
from genir_eval.report.preferences import preferences_section
from genir_eval.report.score_sections import (  # noqa: F401 - moved, importable from here as before
    _glossary,
    _scores,
    _task_types,
)
from genir_eval.report.scores import SMALL_N
from genir_eval.report.turns import TURN_VIEWS, TurnDetail, choose_sessions, session_details
from genir_eval.report.turns import session_index as _session_index
from genir_eval.report.verdict import run_verdict, verdict_html, verdict_lede
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
)
from genir_eval.report.worst import worst_html
from genir_eval.rundir.causes import cause_of
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
    "CSS",
    "CSP",
    "styled_page",
]

#: The failure table and the banner group missing judgments by judge and reason; past this
#: many groups the rest are counted in one line.
MAX_FAILURE_GROUPS = 12

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
.level{width:110px;font-weight:600;overflow-wrap:anywhere}
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
#run-verdict{font-size:.85em;line-height:1.3} #run-verdict h3{margin:4px 0 2px;font-size:1em}
#run-verdict ul,#run-verdict ol{margin:2px 0 6px 18px;padding:0} .verdict-bad b{color:#8a1c1c}
.verdict-good b{color:#1f6f3f} .verdict-small b,.verdict-none b{color:#7a5b00}
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
    """The missing judgments of one class of cause (:func:`~genir_eval.rundir.causes.cause_of`),
    whichever judges it hit: their count, the judges and endpoints, the most frequent reason,
    what to check and the first sessions."""

    cause: str
    count: int
    judges: list[str]
    endpoints: list[str]
    reason: str
    hint: str
    sessions: list[str]


def failure_groups(
    run: Run, limit: int | None = MAX_FAILURE_GROUPS
) -> tuple[list[FailureGroup], int]:
    """The missing judgments grouped by cause, most frequent first, for at most ``limit``
    groups (:data:`MAX_FAILURE_GROUPS`; every group when ``None``), and the number of groups
    in all."""
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
        for label, n in counts.most_common(limit)
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


def _per_judge_share(run: Run) -> str:
    """The missing judgments as the threshold reads them, per judge: ``link_usefulness.true
    1 of 17 (5.9%)`` for each judge with some missing (``max_missing`` is a share of each
    judge's labels, so a share of every judge's together would hide the one that failed)."""
    parts = []
    for j in run.info.get("judges") or []:
        if not isinstance(j, Mapping):
            continue
        total, missing = int(j.get("labels") or 0), int(j.get("missing") or 0)
        if total and missing:
            parts.append(f"{j.get('id')} {missing:,} of {total:,} ({missing / total:.1%})")
    return f": {'; '.join(parts)}" if parts else ""


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
    share = _per_judge_share(run)
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
            f"<p>{_count(total, 'judgment')} missing{share}. Why the run failed:</p>"
            f"<ul>{reasons}</ul>{top}{more}"
            "<p class='small'>Fix the cause and run again (judgments already made are kept "
            "in the cache and journal, so no call is repeated). The scores computed from the "
            "labels that did arrive are folded at the end of the page, for diagnosis "
            "only.</p></div>"
        )
    return (
        "<div class='banner partial' id='run-partial'>"
        f"<h2>Partial run: {_count(total, 'judgment')} missing{share}</h2>"
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


def _with_gold(render: Any) -> Any:
    def only_with_gold(ctx: ReportContext) -> str | None:
        return render(ctx) if (ctx.run.meta or {}).get("correlations") else None

    return only_with_gold


def _chosen(ctx: ReportContext) -> Any:
    if "_chosen" not in ctx.__dict__:
        ctx.__dict__["_chosen"] = choose_sessions(ctx)
    return ctx.__dict__["_chosen"]


def _score_cards(ctx: ReportContext) -> str:
    """The headline score's mean and the judges' own session scores (those of one part of
    an answer aside: they have their section), each a card with its interval: what a run
    without gold says on its own."""
    summaries = {s.name: s for s in ctx.summaries("session")}
    judges = [str(j.get("id")) for j in ctx.run.info.get("judges") or [] if isinstance(j, Mapping)]
    apart = {n for names in part_scores(ctx.run, list(summaries)).values() for n in names}
    names = [ctx.headline] if ctx.headline in summaries else []
    names += [j for j in judges if j in summaries and j not in names and j not in apart]
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
        # the score's scale, as its measure or judge kind declares it (a satisfaction
        # judge's 1-10, not the users' 1-5)
        scale = describe_score(name, ctx.run).range.split(":")[0].split(" (")[0]
        cards.append(
            f"<div class='card score-card' data-score='{esc(name)}'>"
            f"<div class='label'>{ctx.marked(name)}"
            + (" (headline)" if name == ctx.headline else "")
            + f"</div><div class='value'>{fmt(s.mean)}</div>"
            f"<div class='ci'>{interval}<br>mean of {counted(s.n, 'session')}{missing}"
            + (f"<br><span class='scale'>scale {esc(scale)}</span>" if scale else "")
            + "</div></div>"
        )
    if not cards:
        return ""
    return (
        f"<div class='cards' id='{element_id}'><div class='level'>session means</div>"
        f"{''.join(cards)}</div>"
    )


def _parts(ctx: ReportContext) -> str | None:
    """The means of the scores of one part of an answer, apart from the quality headline:
    one group per kind of evidence, titled by the kind's declaration."""
    groups = part_scores(ctx.run, [s.name for s in ctx.summaries("session")])
    blocks = []
    for kind, every in groups.items():
        # the run's own measures; their variants from other judges' labels and from gold are
        # in the Scores section
        names = [n for n in every if "@" not in n and not n.startswith(("gold:", "labels:"))]
        if names:
            evidence = EVIDENCE_KINDS[kind]
            blocks.append(
                f"<h3 class='evidence-kind' data-evidence='{esc(kind)}'>{esc(evidence.title)}</h3>"
                + _mean_cards(ctx, names[:6], f"cards-{kind.replace(' ', '-')}")
            )
    if not blocks:
        return None
    return f"<p class='muted'>{esc(PARTS_NOTE)}.</p>" + "".join(blocks)


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
    """What a reader decides on: the run's verdict in words and what to look at next (the
    terminal prints the same, :mod:`genir_eval.report.verdict`) under the citation verdicts,
    the correlation with users when there is gold and the headline score's mean."""
    verdict = run_verdict(ctx.run)
    # its main decision and the first thing to look at in one line, then the cards
    parts = [verdict_lede(verdict), _citation_verdicts(ctx)]
    if (ctx.run.meta or {}).get("correlations"):
        parts.append(_headline(ctx.run, ctx.headline))
    parts.append(_score_cards(ctx))
    # the whole verdict under the cards it words, above every table
    parts.append(verdict_html(verdict))
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
    Section("answer-parts", PARTS_TITLE, _parts, part="headline"),
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
    elif ((run.meta or {}).get("feedback") or {}).get("turn"):
        gold_note = (
            "<p class='muted' id='no-meta'>No satisfaction ratings in the input: the scores "
            "are set against the users' thumbs (see the verdict and <a href='#feedback'>the "
            "thumbs section</a>), not against ratings.</p>"
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


def styled_page(title: str, body: str, *, css: str = "") -> str:
    """A self-contained page styled as the run report: its stylesheet (plus ``css``), its
    content policy (nothing loads or runs, whatever the log text holds) and ``title`` as its
    heading; ``body`` is HTML built and escaped by the caller."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{CSS}{css}</style></head><body>"
        f"<h1>{esc(title)}</h1>{body}</body></html>\n"
    )


def write_report(run: Run | str | os.PathLike[str], *, limits: ReportLimits | None = None) -> Path:
    """Render the report of a run (or run directory) into its ``report.html``."""
    loaded = run if isinstance(run, Run) else load_run(run)
    path = loaded.directory / REPORT_FILE
    write_output(path, render_report(loaded, limits=limits), "the run's report")
    return path
