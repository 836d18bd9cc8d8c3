"""The report's score sections: every score per judge and measure (which are key, their rows
by level), the same per task type, and the glossary of the scores. Moved from
:mod:`genir_eval.report.html`, which imports them from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.report.agreement import FOLD_ROWS, LEVEL_TITLES
from genir_eval.report.card import score_evidence, score_kind_words
from genir_eval.report.charts import _task_bars, _task_groups
from genir_eval.report.glossary import describe_score
from genir_eval.report.plots import histogram_svg
from genir_eval.report.scores import BOOTSTRAP_MAX_N, SMALL_N, summarize
from genir_eval.report.views import (
    ReportContext,
    esc,
    fmt,
    fold,
    mean_cell,
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
        evidence = score_evidence(run, base)
        kind = f"{score_kind_words(evidence)}" + (
            f": it says {evidence.says}" if evidence is not None else ""
        )
        facts = "; ".join(
            part for part in (kind, f"range {d.range}" if d.range else "", direction) if part
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
