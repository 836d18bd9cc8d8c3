"""The plain-text summary ``genir-eval run`` prints: what a run found, in one screen.

Read from the run directory alone (``meta.json``, ``run.json``), in the order a reader asks:
the run's verdict in words and what to look at next (:mod:`genir_eval.report.verdict`, the
same lines ``report.html`` shows, by :mod:`genir_eval.meta.decide`'s rules: no interval below
``MIN_N`` values, here and in every table); the headline's card; how well the headline score and every session score track the users' own satisfaction
(Pearson, Spearman and Kendall with their 95% bootstrap intervals, and ``n``); how the judges
agree with the gold labels, under the names ``genir-eval meta`` uses; what is missing; what
the engine did; where the files are. Judges answered by the offline provider are marked as
baselines, since their figures are heuristics computed from the log, not LLM judgments.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.figures import counted
from genir_eval.figures import number_text as _num
from genir_eval.judges.kinds import (
    Figure,
    Interval,
    JudgeCell,
    judge_kinds,
    kind_blocks,
)
from genir_eval.meta.decide import interval_text
from genir_eval.records import EVIDENCE_KINDS
from genir_eval.report.card import (
    PARTS_NOTE,
    card_lines,
    headline_card,
    part_scores,
)
from genir_eval.report.html import headline_score
from genir_eval.report.judge_quality import quality_lines, shared_ppi_reason
from genir_eval.report.preferences import agreement_text, preference_criteria
from genir_eval.report.scores import ScoreSummary, score_summaries
from genir_eval.report.tables import count_rows
from genir_eval.report.verdict import run_verdict, verdict_lines
from genir_eval.report.views import first_link_judge
from genir_eval.report.worst import worst_lines
from genir_eval.rundir.folder import META_FILE, REPORT_FILE, Run

__all__ = [
    "format_summary",
    "format_paths",
    "score_table",
    "feedback_table",
    "preference_table",
]

CORRELATIONS = ("pearson", "spearman", "kendall")
LEVELS = (("turn", "query level"), ("session", "session level"))
BASELINE_MARK = "*"
BASELINE_FOOTNOTE = (
    f"{BASELINE_MARK} offline baseline: deterministic heuristics computed from the log, "
    "not LLM judgments"
)


def _with_ci(entry: Mapping[str, Any], method: str) -> str:
    """``0.123 [-0.40, 0.61]``: the coefficient with its 95% interval (2 decimals), or
    ``0.231 (n<10)`` with too few values for one (:func:`~genir_eval.meta.decide.interval_text`)."""
    return interval_text(entry.get(method), (entry.get("ci95") or {}).get(method), entry.get("n"))


def _align(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Columns padded to their widest cell: the first left-aligned, the others right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def _baselines(run: Run) -> set[str]:
    return {
        str(j.get("id") or j.get("name"))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping) and j.get("provider") == "offline"
    }


def _marked(judge_id: str, baselines: set[str]) -> str:
    return f"{judge_id}{BASELINE_MARK}" if judge_id in baselines else judge_id


def _score_baseline(name: str, baselines: set[str], first_link_judge: str | None) -> bool:
    """Whether a score comes from an offline judge's labels (``gold:`` scores never do)."""
    if name.startswith("gold:"):
        return False
    if "@" in name:
        return name.rsplit("@", 1)[1] in baselines
    judge = name.split(":", 1)[0]
    if judge in baselines:
        return True
    # a plain measure name (sdcg_urge) is computed from the first link judge's labels
    return first_link_judge in baselines if first_link_judge else False


def _correlation_rows(
    table: Mapping[str, Mapping[str, Any]],
    names: Sequence[str],
    label: Any,
) -> list[list[str]]:
    rows = [["", "n", *(f"{m} [95% CI]" for m in CORRELATIONS)]]
    for name in names:
        entry = table.get(name)
        if not isinstance(entry, Mapping):
            continue
        rows.append(
            [label(name), _num(entry.get("n")), *(_with_ci(entry, m) for m in CORRELATIONS)]
        )
    return rows


def _ci_text(summary: ScoreSummary) -> str:
    if summary.mean is not None and not summary.small and summary.ci is None:
        return f"{_num(summary.mean)} (all equal)"
    return interval_text(summary.mean, summary.ci, summary.n)


def _score_rows(summaries: Sequence[ScoreSummary], mark: Any) -> list[list[str]]:
    rows = [["", "n", "mean [95% CI]", "median", "missing"]]
    for s in summaries:
        why = ""
        if s.missing_reasons:
            reason, count = max(s.missing_reasons.items(), key=lambda item: item[1])
            why = f" ({reason})" if count == s.missing else f" ({reason}: {count})"
        rows.append([mark(s.name), str(s.n), _ci_text(s), _num(s.median), f"{s.missing}{why}"])
    return rows


def score_table(run: Run, baselines: set[str] | None = None) -> list[str]:
    """Every session score's mean with its 95% interval, median and missing count (with
    the most common reason): what a run without gold prints instead of correlations. The
    scores of one part of an answer have a table per kind of evidence, titled by the kind's
    declaration (:func:`~genir_eval.report.card.part_scores`)."""
    baselines = _baselines(run) if baselines is None else baselines
    first_link = first_link_judge(run)
    summaries = score_summaries(run, "session")
    if not summaries:
        return ["No session score."]

    def mark(name: str) -> str:
        return name + (BASELINE_MARK if _score_baseline(name, baselines, first_link) else "")

    parts = part_scores(run, [s.name for s in summaries])
    apart = {name for names in parts.values() for name in names}
    quality = [s for s in summaries if s.name not in apart]
    headline = headline_score(run)
    lines = []
    if quality:
        lines.append(f"Session scores ({_without_ratings(run)}: scores on their own)")
        if headline is not None:
            lines[0] += f"; headline {headline}"
        lines += _align(_score_rows(quality, mark))
    for kind, names in parts.items():
        if lines:
            lines.append("")
        lines += [f"{EVIDENCE_KINDS[kind].title} ({PARTS_NOTE})"]
        lines += _align(_score_rows([s for s in summaries if s.name in names], mark))
    return lines


def _without_ratings(run: Run) -> str:
    """What the input lacks when the scores stand on their own: the users' satisfaction
    ratings, and the thumbs too unless the run holds them (then they are said to follow)."""
    if ((run.meta or {}).get("feedback") or {}).get("turn"):
        return "no satisfaction ratings in the input; the users' thumbs follow"
    return "no user satisfaction in the input"


def feedback_table(run: Run, baselines: set[str] | None = None) -> list[str]:
    """Every turn score against the users' thumbs: AUC and point-biserial r."""
    feedback = (run.meta or {}).get("feedback") or {}
    scores = feedback.get("turn") or {}
    if not scores:
        return []
    baselines = _baselines(run) if baselines is None else baselines
    first_link = first_link_judge(run)
    rows = [["", "n", "up", "down", "AUC [95% CI]", "point-biserial r [95% CI]"]]
    for name, entry in scores.items():
        mark = BASELINE_MARK if _score_baseline(name, baselines, first_link) else ""
        rows.append(
            [
                name + mark,
                _num(entry.get("n")),
                _num(entry.get("n_up")),
                _num(entry.get("n_down")),
                _with_ci(entry, "auc"),
                _with_ci(entry, "point_biserial"),
            ]
        )
    return [
        "Turn scores vs the users' thumbs up/down (AUC 0.5 = chance)",
        *_align(rows),
    ]


def preference_rows(block: Mapping[str, Any], label: Any = str) -> list[list[str]]:
    """A level's scores (``{score: pair_agreement(...)}``) as table rows, header first."""
    rows = [["", "decided", "agreement [95% CI]", "score ties", "people's ties", "kappa a/tie/b"]]
    for name, entry in block.items():
        direction = " (lower better)" if entry.get("lower_is_better") else ""
        rows.append(
            [
                label(name) + direction,
                _num(entry.get("decided")),
                agreement_text(entry, missing="-"),
                _num(entry.get("score_ties")),
                _num(entry.get("gold_ties")),
                _num(entry.get("kappa")),
            ]
        )
    return rows


def preference_table(run: Run, baselines: set[str] | None = None) -> list[str]:
    """Every score against people's preferences on the first criterion (overall quality
    when given): share of people's decided pairs the score ranks the same way."""
    meta = run.meta or {}
    criteria = preference_criteria(meta)
    if not criteria:
        return []
    baselines = _baselines(run) if baselines is None else baselines
    first_link = first_link_judge(run)

    def label(name: str) -> str:
        return f"{name}{BASELINE_MARK}" if _score_baseline(name, baselines, first_link) else name

    criterion = criteria[0]
    table = meta["preferences"][criterion]
    lines = [
        f"Scores vs people's preferences ({criterion}: {table.get('rows', 0)} pairs; "
        "agreement over pairs both decided, bootstrap over queries)"
    ]
    if table.get("unknown"):
        lines.append(f"  {table['unknown']} pairs name a session this run does not have")
    for level, title in (("session", "session scores"), ("turn", "turn scores")):
        block = table.get(level) or {}
        if block:
            lines.append(f"  {title}")
            lines.extend(_align(preference_rows(block, label), indent="    "))
    if len(criteria) > 1:
        lines.append(f"  other criteria in meta.json and the report: {', '.join(criteria[1:])}")
    return lines


def _correlations(run: Run, baselines: set[str]) -> list[str]:
    meta = run.meta
    if not meta or not meta.get("correlations"):
        alone = score_table(run, baselines)
        feedback = feedback_table(run, baselines)
        return alone + ([""] + feedback if feedback else [])
    correlations = meta.get("correlations") or {}
    first_link = first_link_judge(run)

    def label(name: str) -> str:
        return f"{name}{BASELINE_MARK}" if _score_baseline(name, baselines, first_link) else name

    lines: list[str] = []
    headline = headline_score(run)
    if headline is not None:
        rows = [["", "n", *(f"{m} [95% CI]" for m in CORRELATIONS)]]
        for level, title in LEVELS:
            entry = (correlations.get(level) or {}).get(headline)
            if isinstance(entry, Mapping):
                rows.append(
                    [title, _num(entry.get("n")), *(_with_ci(entry, m) for m in CORRELATIONS)]
                )
        lines.append(f"Headline: {label(headline)} vs user satisfaction")
        lines.extend(_align(rows) if len(rows) > 1 else ["  (no correlation)"])
    session = correlations.get("session") or {}
    parts = part_scores(run, list(session))
    apart = {name for names in parts.values() for name in names}
    for title, names in (
        ("Session scores vs user session satisfaction", [n for n in session if n not in apart]),
        *(
            (f"{EVIDENCE_KINDS[kind].title}, vs user session satisfaction", names)
            for kind, names in parts.items()
        ),
    ):
        if names:
            lines.append("")
            lines.append(title)
            lines.extend(_align(_correlation_rows(session, names, label)))
    feedback = feedback_table(run, baselines)
    return lines + ([""] + feedback if feedback else [])


def _section(lines: list[str], title: str, rows: Sequence[Sequence[str]]) -> None:
    """Append a titled, aligned table, a blank line apart from what precedes it."""
    if lines:
        lines.append("")
    lines.append(title)
    lines.extend(_align(rows))


def _cell(cell: Any, baselines: set[str]) -> str:
    """A cell of a judge kind's table (:class:`~genir_eval.judges.kinds.JudgeTable`) as the
    terminal prints it."""
    if isinstance(cell, JudgeCell):
        return (
            cell.instead
            if cell.instead is not None
            else _marked(cell.judge, baselines) + cell.after
        )
    if isinstance(cell, Interval):
        return _with_ci({"value": cell.value, "ci95": {"value": cell.ci}}, "value")
    if isinstance(cell, Figure):
        return _num(cell.value, cell.digits)
    return cell if isinstance(cell, str) else _num(cell)


def _judges(run: Run, baselines: set[str]) -> list[str]:
    """Each judge kind's figures against gold, then every judge's quality lines."""
    meta = run.meta or {}
    lines: list[str] = []
    for kind in judge_kinds():
        table = kind.summary_table(kind_blocks(meta.get("judges") or {}, kind))
        if table is not None:
            rows = [list(table.head)] + [[_cell(c, baselines) for c in r] for r in table.rows]
            _section(lines, table.title, rows)
    quality = []
    said = shared_ppi_reason(meta.get("judges"))
    for judge, block in (meta.get("judges") or {}).items():
        judge_lines = quality_lines(block, said=said) if isinstance(block, Mapping) else []
        if judge_lines:
            quality.append(f"  {_marked(str(judge), baselines)}")
            quality += [f"    {line}" for line in judge_lines]
    if quality:
        if lines:
            lines.append("")
        lines.append("Judge quality: collapse, calibration (leave-sessions-out), PPI means")
        lines += quality
        if said:
            lines.append(f"  PPI, every judge: {said}")
    return lines


def _failures(run: Run) -> list[str]:
    skipped = len(run.info.get("skipped") or [])
    by_judge = Counter(str(f.get("judge")) for f in run.iter_failures())
    detail = ", ".join(f"{judge} {n}" for judge, n in by_judge.most_common())
    line = f"Missing labels: {run.failures_total}" + (f" ({detail})" if detail else "")
    line += f"; skipped input sessions: {skipped}"
    return [line]


def _engine(run: Run) -> list[str]:
    info = run.info
    usage = info.get("usage") or {}
    cost = info.get("cost_usd")
    cost_text = "unknown (a model without a price)" if cost is None else f"${cost:.4f}"
    return [
        f"Engine: {info.get('provider_calls', 0)} provider calls, {reuse_words(info)}; "
        f"tokens {usage.get('input_tokens', 0):,} in / "
        f"{usage.get('output_tokens', 0):,} out; cost {cost_text}; "
        f"{_num(info.get('duration_s'), 2)} s"
    ]


def reuse_words(info: Mapping[str, Any]) -> str:
    """What a run took from earlier work, truthfully: the judgments resumed from the output
    folder's journal (none in a new folder: running into the same folder resumes), and the
    cache's hits of its lookups, or that the offline twins are not cached (computed again
    each time, at no cost)."""
    cache = info.get("cache") or {}
    resumed, lookups = int(cache.get("resumed") or 0), int(cache.get("lookups") or 0)
    calls = int(info.get("provider_calls") or 0)
    engines = [e for e in info.get("engines") or [] if isinstance(e, Mapping)]
    offline = bool(engines) and all(e.get("provider") == "offline" for e in engines)
    if resumed:
        words = f"{resumed:,} resumed from the output folder's journal"
    elif calls:
        words = "0 resumed (no earlier judgments in this output folder's journal)"
    else:
        words = "0 resumed"
    if lookups:
        return f"{words}, {cache.get('hits', 0):,} cache hits of {lookups:,} lookups"
    if offline and calls:
        return f"{words}; offline twins are not cached (computed again, at no cost)"
    return f"{words}, no cache lookups" if calls and not offline else words


def format_paths(run: Run) -> str:
    """The run directory and, when written, its report: one path a line."""
    lines = [str(run.directory)]
    if run.report_path.is_file():
        lines.append(str(run.report_path))
    return "\n".join(lines) + "\n"


def format_summary(run: Run) -> str:
    """The run's summary as aligned plain text, ending with the paths it wrote."""
    info = run.info
    scenario = info.get("scenario") or {}
    name = scenario.get("name") if isinstance(scenario, Mapping) else None
    judges = [j for j in info.get("judges") or [] if isinstance(j, Mapping)]
    engines = sorted({f"{j.get('provider')}/{j.get('model')}" for j in judges})
    baselines = _baselines(run)
    lines = [
        f"{name or 'run'}: {counted(count_rows(run, 'sessions'), 'session')}, "
        f"{counted(count_rows(run, 'turns'), 'turn')}, {counted(count_rows(run, 'links'), 'link')}; "
        f"{counted(len(judges), 'judge')} ({', '.join(engines) or '-'})",
        "",
    ]
    status = info.get("status")
    if isinstance(status, Mapping) and status.get("ok", True) is False:
        # a failed run's scores are not a result: none is printed (the reasons follow on
        # stderr; report.html folds the scores away for diagnosis)
        lines.append(
            f"RUN FAILED: no score is shown ({run.failures_total} judgments missing); "
            "the reasons follow"
        )
    else:
        verdict = verdict_lines(run_verdict(run))
        if verdict:
            lines += [*verdict, ""]
        card = headline_card(run)
        if card is not None:
            mark = (
                BASELINE_MARK
                if _score_baseline(card.score, baselines, first_link_judge(run))
                else ""
            )
            lines += [*card_lines(card, mark), ""]
        worst = worst_lines(run)
        if worst:
            lines += [*worst, ""]
        lines += _correlations(run, baselines)
        preferences = preference_table(run, baselines)
        if preferences:
            lines += ["", *preferences]
        agreement = _judges(run, baselines)
        if agreement:
            lines += ["", *agreement]
    lines += ["", *_failures(run), *_engine(run)]
    if baselines:
        lines.append(BASELINE_FOOTNOTE)
    lines += ["", f"Wrote {run.directory}"]
    if run.meta is not None:
        lines.append(f"  meta-evaluation {run.directory / META_FILE}")
    if run.report_path.is_file():
        lines.append(f"  report          {run.directory / REPORT_FILE}")
    return "\n".join(lines) + "\n"
