"""The report's per-session parts: the session index and each shown session's turns.

The index lists every session (up to :attr:`ReportLimits.index_rows`; the rest are in
``sessions.csv``) in pages folded with ``<details>``, so it needs no script. Each listed
session whose turns are shown links to them; turns are shown for every session of a small
run, and for the worst, the best and the most disputed sessions of a large one
(:func:`choose_sessions`).

A turn shows its query, the response with its citation markers linked to the source list,
the useful text units the gold marks and the spans judge found highlighted, each source with
every judge's label and reason, the other judgments with theirs, and each raw reply folded.
Further views of a turn plug in through :data:`TURN_VIEWS`.
"""

from __future__ import annotations

import bisect
import heapq
import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genir_eval.figures import counted
from genir_eval.judges.kinds import judge_kind
from genir_eval.report.evidence import (
    GOLD_ANNOTATORS,
    GOLD_USER,
    Judgment,
    TurnEvidence,
    read_evidence,
)
from genir_eval.report.tables import link_rows, session_rows, turn_rows
from genir_eval.report.views import ReportContext, esc, fmt
from genir_eval.rundir.folder import EVIDENCE_FILE, LinkRow, SessionRow, TurnRow

__all__ = [
    "TurnDetail",
    "TURN_VIEWS",
    "Chosen",
    "choose_sessions",
    "session_index",
    "session_details",
    "response_html",
]


@dataclass(frozen=True)
class TurnDetail:
    """One shown turn, as a turn view receives it. ``anchor`` prefixes element ids of this
    turn (``<anchor>-src-<n>`` is source ``n``)."""

    session: SessionRow
    turn: TurnRow
    links: tuple[LinkRow, ...]
    evidence: TurnEvidence | None
    anchor: str
    ctx: ReportContext

    @property
    def judgments(self) -> tuple[Judgment, ...]:
        return self.evidence.judgments if self.evidence else ()


TURN_VIEWS: list[Callable[[TurnDetail], str | None]] = []
"""Extra views of a turn, rendered after its sources in order; ``None`` adds nothing."""


@dataclass
class Chosen:
    """The sessions whose turns are shown, by position in the sessions table, with why."""

    positions: list[int] = field(default_factory=list)
    why: dict[int, list[str]] = field(default_factory=dict)
    complete: bool = True


def _disagreement(ctx: ReportContext, count: int) -> list[tuple[int, float]]:
    """The ``count`` sessions (positions) with the largest mean absolute difference between
    the first two link judges' labels over the links both labelled, largest first (ties:
    first session first)."""
    gaps = ctx.links.gaps
    if not gaps or count < 1:
        return []
    position: dict[str, int] = {}
    for i, row in enumerate(ctx.run.iter_rows("sessions")):
        session_id = str(row["session_id"])
        if session_id in gaps:
            position[session_id] = i
    ranked = heapq.nsmallest(
        count,
        ((-(sum(v) / len(v)), position[sid]) for sid, v in gaps.items() if v),
    )
    return [(i, -gap) for gap, i in ranked]


def choose_sessions(ctx: ReportContext) -> Chosen:
    """Every session when the run has at most ``detail_sessions``; else a third each of the
    lowest and highest headline scores and of the largest disagreement between link
    judges (filled up from the lowest scores when a group runs short). Reads the headline
    column, not the sessions."""
    n = ctx.sessions.n
    cap = ctx.limits.detail_sessions
    if n <= cap:
        return Chosen(list(range(n)), {}, True)
    score = ctx.headline
    scored: list[tuple[float, int]] = []
    if score is not None:
        values = ctx.sessions.column(score)
        present = np.flatnonzero(~np.isnan(values))
        # by score, then position: as sorting (score, position) pairs
        order = present[np.lexsort((present, values[present]))]
        scored = list(zip(values[order].tolist(), order.tolist(), strict=True))
    chosen = Chosen(complete=False)

    def take(i: int, why: str) -> None:
        if i not in chosen.why:
            if len(chosen.positions) >= cap:
                return
            chosen.positions.append(i)
            chosen.why[i] = []
        chosen.why[i].append(why)

    third = max(1, cap // 3)
    for _, i in scored[:third]:
        take(i, f"lowest {score}")
    for _, i in reversed(scored[-third:]):
        take(i, f"highest {score}")
    for i, gap in _disagreement(ctx, third):
        take(i, f"judges disagree (mean |difference| {gap:.2f})")
    for _, i in scored:
        if len(chosen.positions) >= cap:
            break
        take(i, f"low {score}")
    for i in range(n):
        if len(chosen.positions) >= cap:
            break
        take(i, "no score")
    chosen.positions.sort()
    return chosen


def _index_columns(ctx: ReportContext) -> list[str]:
    """The scores the index shows: the headline, then each judge's own session score."""
    names = ctx.score_names("session")
    judges = [str(j.get("id")) for j in ctx.run.info.get("judges") or [] if isinstance(j, Mapping)]
    columns = [ctx.headline] if ctx.headline in names else []
    columns += [n for n in names if n in judges and n not in columns]
    return [c for c in columns if c is not None][:4]


def _scores_line(ctx: ReportContext, scores: Mapping[str, float | None]) -> str:
    """The main scores inline (the index's columns, and their gold twins), every score in
    a fold."""
    main = _index_columns(ctx)
    main += [f"gold:{c}" for c in main if f"gold:{c}" in scores]
    shown = [f"{ctx.marked(k)} <b>{fmt(scores.get(k))}</b>" for k in main if k in scores]
    rest = [f"{ctx.marked(k)} {fmt(v)}" for k, v in scores.items()]
    fold = (
        f"<details class='raw'><summary>all {len(rest)} scores</summary>"
        f"<p class='small'>{', '.join(rest)}</p></details>"
        if len(rest) > len(shown)
        else ""
    )
    return f"<div class='muted'>{' · '.join(shown) or 'no score'}{fold}</div>"


def session_index(ctx: ReportContext, chosen: Chosen) -> str:
    run = ctx.run
    n = ctx.sessions.n
    if not n:
        return "<p class='muted'>No session.</p>"
    limit = min(n, ctx.limits.index_rows)
    page = max(1, ctx.limits.index_page)
    # a failed run's scores are not a result: the index lists its sessions without them
    status = ctx.run.info.get("status")
    failed = isinstance(status, Mapping) and status.get("ok", True) is False
    columns = [] if failed else _index_columns(ctx)
    gold = ctx.has_gold and bool(np.isfinite(ctx.sessions.gold).any())
    sessions = session_rows(run, first=limit)
    thumbs: dict[str, list[int]] = defaultdict(list)
    if ctx.turns.any_thumbs:
        listed = {row.session_id for row in sessions.values()}
        for turn in turn_rows(run, listed):
            if turn.thumbs is not None:
                thumbs[turn.session_id].append(turn.thumbs)
    shown = set(chosen.positions)
    head = (
        "<tr><th class='num'>#</th><th>session</th><th>task type</th><th class='num'>turns</th>"
        + "".join(f"<th class='num'>{ctx.marked(c)}</th>" for c in columns)
        + ("<th class='num'>user satisfaction</th>" if gold else "")
        + ("<th>users' thumbs</th>" if ctx.turns.any_thumbs else "")
        + "<th>turns shown</th></tr>"
    )
    pages = []
    for start in range(0, limit, page):
        rows = []
        for i in range(start, min(start + page, limit)):
            row = sessions[i]
            if i in shown:
                name = f"<a href='#session-{i}'>{esc(row.session_id)}</a>"
                turns = " ".join(
                    f"<a href='#turn-{i}-{t}'>{t}</a>" for t in range(1, row.n_turns + 1)
                )
            else:
                name, turns = esc(row.session_id), "<span class='muted'>turns.csv</span>"
            cells = "".join(f"<td class='num'>{fmt(row.scores.get(c))}</td>" for c in columns)
            gold_cell = f"<td class='num'>{fmt(row.gold_satisfaction, 1)}</td>" if gold else ""
            if ctx.turns.any_thumbs:
                given = thumbs.get(row.session_id, [])
                gold_cell += (
                    f"<td>{sum(given)} 👍 {len(given) - sum(given)} 👎</td>"
                    if given
                    else "<td></td>"
                )
            rows.append(
                f"<tr><td class='num'>{i + 1}</td><td class='sid'>{name}</td>"
                f"<td>{esc(row.task_type or '')}</td><td class='num'>{row.n_turns}</td>"
                f"{cells}{gold_cell}<td>{turns}</td></tr>"
            )
        end = min(start + page, limit)
        opened = " open" if start == 0 else ""
        pages.append(
            f"<details class='page'{opened}><summary>sessions {start + 1}–{end}</summary>"
            f"<div class='scroll'><table class='session-index'>{head}{''.join(rows)}</table>"
            "</div></details>"
        )
    notes = [
        f"<p>{counted(n, 'session', grouped=True)}"
        + (
            f"; the first {limit:,} are listed here, all of them are in <code>sessions.csv</code>"
            if limit < n
            else ""
        )
        + (
            f". The turns of {counted(len(chosen.positions), 'session')} are shown below (the lowest and "
            "highest scores and the largest disagreement between judges); every turn is in "
            "<code>turns.csv</code>.</p>"
            if not chosen.complete
            else ". Each session links to its turns below.</p>"
        )
    ]
    return f"<div id='session-index'>{''.join(notes)}{''.join(pages)}</div>"


def _classes(
    position: int,
    starts: Sequence[int],
    segments: Sequence[tuple[int, int]],
    marks: Mapping[str, set[int]],
) -> list[str]:
    at = bisect.bisect_right(starts, position) - 1
    if at < 0 or not (segments[at][0] <= position < segments[at][1]):
        return []
    return [cls for cls, units in marks.items() if at in units]


def _marker(anchor: str, n: int, known: set[int]) -> str:
    if n in known:
        return f"<a class='cite' href='#{anchor}-src-{n}'>[{n}]</a>"
    return f"<span class='cite bad' title='no source {n} in this turn'>[{n}]</span>"


def response_html(
    text: str,
    statements: Sequence[tuple[str, Sequence[int]]],
    segments: Sequence[tuple[int, int]],
    marks: Mapping[str, set[int]],
    anchor: str,
    known_links: set[int],
) -> str:
    """The response text, escaped, with each statement's citation markers placed after it
    (linked to ``#<anchor>-src-<n>``) and the text units in ``marks`` (CSS class -> unit
    indices) wrapped in spans of those classes."""
    markers: dict[int, list[int]] = defaultdict(list)
    cursor = 0
    unplaced: list[int] = []
    for statement, cites in statements:
        needle = statement.strip()
        found = text.find(needle, cursor) if needle else -1
        if found < 0:
            unplaced.extend(cites)
            continue
        end = found + len(needle)
        markers[end].extend(cites)
        cursor = end
    ordered = sorted(range(len(segments)), key=lambda i: segments[i][0])
    segs = [segments[i] for i in ordered]
    remap = {old: new for new, old in enumerate(ordered)}
    marks_sorted = {cls: {remap[i] for i in units if i in remap} for cls, units in marks.items()}
    starts = [s for s, _ in segs]
    cuts = {0, len(text), *markers}
    for s, e in segs:
        cuts.update((max(0, min(s, len(text))), max(0, min(e, len(text)))))
    points = sorted(cuts)
    out = []
    for a, b in zip(points, points[1:], strict=False):
        piece = text[a:b]
        classes = _classes(a, starts, segs, marks_sorted)
        out.append(
            f"<span class='{' '.join(classes)}'>{esc(piece)}</span>" if classes else esc(piece)
        )
        if b in markers:
            out.append("".join(_marker(anchor, n, known_links) for n in markers[b]))
    if 0 in markers and len(points) == 1:
        out.append("".join(_marker(anchor, n, known_links) for n in markers[0]))
    if unplaced:
        out.append(
            " <span class='muted'>(citations not placed: "
            + "".join(_marker(anchor, n, known_links) for n in unplaced)
            + ")</span>"
        )
    return "".join(out)


def _value(value: Any) -> str:
    if isinstance(value, float):
        return fmt(value, 2) if not value.is_integer() else str(int(value))
    if isinstance(value, (int, str)) or value is None:
        return esc(value if value is not None else "–")
    text = json.dumps(value, ensure_ascii=False)
    return esc(text if len(text) <= 80 else text[:79] + "…")


def _raw(judgment: Judgment) -> str:
    if judgment.raw_with_session:
        return "<div class='muted small'>raw reply: with the session's judgments</div>"
    if not judgment.raw:
        return ""
    return (
        f"<details class='raw'><summary>raw reply</summary><pre>{esc(judgment.raw)}</pre></details>"
    )


def _kind(ctx: ReportContext, judge: str) -> str | None:
    kinds = ctx.__dict__.get("_judge_kinds")
    if kinds is None:
        kinds = {
            str(j.get("id")): str(j.get("kind"))
            for j in ctx.run.info.get("judges") or []
            if isinstance(j, Mapping)
        }
        ctx.__dict__["_judge_kinds"] = kinds
    return kinds.get(judge)


def verdict_html(ctx: ReportContext, judge: str, value: Any) -> str:
    """A judge's label as the report shows it: in words where its kind has words for it
    (``partial``, ``useful (2/3)``), else the value."""
    kind = judge_kind(_kind(ctx, judge))
    words = kind.verdict_words
    if (
        words
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and float(value).is_integer()
    ):
        word = words.get(int(value))
        if word is not None:
            if kind.verdict_out_of is not None:
                return f"<b>{esc(word)}</b> ({int(value)}/{kind.verdict_out_of})"
            return f"<b>{esc(word)}</b>"
    return f"<b>{_value(value)}</b>"


def _judgment_cell(ctx: ReportContext, judgment: Judgment) -> str:
    who = ctx.marked(judgment.judge)
    if judgment.value is None:
        return (
            f"<div class='jd'>{who}: <span class='bad'>missing</span> "
            f"<span class='reason'>{esc(judgment.missing_reason or 'no reason recorded')}</span>"
            f"{_raw(judgment)}</div>"
        )
    reason = (
        f" <span class='reason'>{esc(judgment.reason)}</span>"
        if judgment.reason
        else " <span class='muted'>(no reason given)</span>"
    )
    verdict = verdict_html(ctx, judgment.judge, judgment.value)
    return f"<div class='jd'>{who}: {verdict}{reason}{_raw(judgment)}</div>"


def judgment_cells(ctx: ReportContext, judgments: Sequence[Judgment]) -> str:
    """The judgments of one item: those with a label, then the missing ones folded into one
    ``<details>`` that counts them (a failed run has one per judge on every item, each with
    the same reason, which the table of causes at the top already gives)."""
    present = "".join(_judgment_cell(ctx, j) for j in judgments if j.value is not None)
    missing = [j for j in judgments if j.value is None]
    if not missing:
        return present
    judges = ", ".join(dict.fromkeys(j.judge for j in missing))
    return (
        f"{present}<details class='missing'><summary><span class='bad'>{len(missing)} "
        f"missing</span> <span class='muted'>({esc(judges)})</span></summary>"
        f"{''.join(_judgment_cell(ctx, j) for j in missing)}</details>"
    )


def _sources(detail: TurnDetail) -> str:
    if not detail.links:
        return "<p class='muted'>No sources.</p>"
    with_gold = detail.ctx.has_gold_links
    by_item: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in detail.judgments:
        by_item[judgment.item].append(judgment)
    rows = []
    for link in detail.links:
        judged = by_item.get(f"link:{link.link_id}", [])
        cells = judgment_cells(detail.ctx, judged)
        if not judged:
            # no evidence row (a run written before evidence.jsonl): the labels alone
            cells = "".join(
                f"<div class='jd'>{detail.ctx.marked(judge)}: "
                + (
                    verdict_html(detail.ctx, judge, value)
                    if value is not None
                    else f"<span class='bad'>missing</span> "
                    f"<span class='reason'>{esc(link.missing.get(judge, ''))}</span>"
                )
                + "</div>"
                for judge, value in link.labels.items()
            )
        cited = "" if link.cited else " <span class='muted'>(not cited)</span>"
        rows.append(
            f"<tr id='{detail.anchor}-src-{link.link_id}'><td class='num'>[{link.link_id}]</td>"
            f"<td class='url'>{esc(link.title) or '<span class=muted>(no title)</span>'}{cited}"
            f"<br><span class='muted'>{esc(link.url)}</span></td>"
            + (f"<td class='num'>{fmt(link.gold, 0)}</td>" if with_gold else "")
            + f"<td>{cells}</td></tr>"
        )
    return (
        "<div class='scroll'><table class='sources'><tr><th class='num'>#</th>"
        "<th>title / url</th>"
        + ("<th class='num'>gold</th>" if with_gold else "")
        + "<th>judges: label, reason</th></tr>"
        f"{''.join(rows)}</table></div>"
    )


#: Past this many judgments of single statements, a turn folds them.
FOLD_STATEMENTS = 3


def _judgment_table(ctx: ReportContext, judgments: Sequence[Judgment]) -> str:
    by_item: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        by_item[judgment.item].append(judgment)
    rows = "".join(
        f"<tr><td>{esc(item)}</td><td>{judgment_cells(ctx, judged)}</td></tr>"
        for item, judged in by_item.items()
    )
    return (
        "<div class='scroll'><table class='judgments'><tr><th>item</th>"
        f"<th>judge: label, reason</th></tr>{rows}</table></div>"
    )


def _other_judgments(ctx: ReportContext, judgments: Sequence[Judgment]) -> str:
    """The judgments of the turn itself, then those of its single statements (a rubric's
    grades), folded when there are more than :data:`FOLD_STATEMENTS`."""
    others = [j for j in judgments if not j.item.startswith("link:")]
    if not others:
        return ""
    statements = [j for j in others if j.item.startswith("stmt:")]
    whole = [j for j in others if not j.item.startswith("stmt:")]
    if len(statements) <= FOLD_STATEMENTS:
        return _judgment_table(ctx, others)
    judges = ", ".join(dict.fromkeys(j.judge for j in statements))
    return (
        (_judgment_table(ctx, whole) if whole else "")
        + f"<details class='fold'><summary>{len(statements)} judgments of single statements "
        f"({esc(judges)})</summary>{_judgment_table(ctx, statements)}</details>"
    )


SPAN_CLASSES = {GOLD_USER: "g-user", GOLD_ANNOTATORS: "g-ann"}


def _turn(detail: TurnDetail, spans_judge: str | None) -> str:
    turn, evidence = detail.turn, detail.evidence
    marks: dict[str, set[int]] = {}
    if evidence is not None:
        for source, cls in SPAN_CLASSES.items():
            if source in evidence.spans:
                marks[cls] = set(evidence.spans[source])
        if spans_judge and spans_judge in evidence.spans:
            marks["pred"] = set(evidence.spans[spans_judge])
    known = {link.link_id for link in detail.links}
    response = response_html(
        turn.response_text,
        evidence.statements if evidence else (),
        evidence.segments if evidence else (),
        marks,
        detail.anchor,
        known,
    )
    gold = (
        f"user satisfaction {fmt(turn.gold_satisfaction, 1)}"
        if turn.gold_satisfaction is not None
        else ""
    )
    if turn.thumbs is not None or turn.feedback:
        thumb = (
            {1: "<span class='up'>thumbs up</span>", 0: "<span class='down'>thumbs down</span>"}[
                turn.thumbs
            ]
            if turn.thumbs in (0, 1)
            else ""
        )
        comment = f" “{esc(turn.feedback)}”" if turn.feedback else ""
        gold = (gold + "; " if gold else "") + f"user feedback: {thumb}{comment}"
    views = "".join(part for view in TURN_VIEWS if (part := view(detail)))
    return (
        f"<div class='turn' id='turn-{detail.anchor.removeprefix('t-')}'>"
        f"<h4>Turn {turn.turn}: {esc(turn.query)}</h4>"
        + (f"<p class='muted'>{gold}</p>" if gold else "")
        + _scores_line(detail.ctx, turn.scores)
        + f"<div class='response'>{response}</div>"
        f"{_sources(detail)}{views}{_other_judgments(detail.ctx, detail.judgments)}</div>"
    )


def _legend(spans_judge: str | None) -> str:
    parts = [
        "<span class='cite'>[n]</span> citation marker, linked to its source",
        "<span class='pred'>text</span> useful to the "
        + (esc(spans_judge) if spans_judge else "spans judge"),
        "<span class='g-user'>text</span> marked useful by the user",
        "<span class='g-ann'>text</span> marked useful by annotators",
    ]
    return f"<p class='legend'>{' · '.join(parts)}</p>"


def session_details(ctx: ReportContext, chosen: Chosen) -> str:
    run = ctx.run
    if not chosen.positions:
        return "<p class='muted'>No session to show.</p>"
    sessions = session_rows(run, chosen.positions)
    wanted = {row.session_id for row in sessions.values()}
    evidence = read_evidence(run.directory / EVIDENCE_FILE, wanted)
    turns_of: dict[str, list[TurnRow]] = defaultdict(list)
    for turn in turn_rows(run, wanted):
        turns_of[turn.session_id].append(turn)
    links_of: dict[tuple[str, int], list[LinkRow]] = defaultdict(list)
    for link in link_rows(run, wanted):
        links_of[(link.session_id, link.turn)].append(link)
    spans_judge = next(
        (
            str(j.get("id"))
            for j in run.info.get("judges") or []
            if isinstance(j, Mapping) and judge_kind(str(j.get("kind"))).marks_units
        ),
        None,
    )
    parts = [_legend(spans_judge)]
    if not evidence:
        parts.append(
            "<p class='muted'>This run directory has no evidence.jsonl (written by an older "
            "genir-eval): judges' reasons and highlighted spans are not available.</p>"
        )
    for i in chosen.positions:
        session = sessions[i]
        why = chosen.why.get(i)
        session_level = evidence.get((session.session_id, None))
        whole = (
            "<h4>Judgments of the whole session</h4>"
            + _other_judgments(ctx, session_level.judgments)
            if session_level and session_level.judgments
            else ""
        )
        turn_parts = [
            _turn(
                TurnDetail(
                    session=session,
                    turn=turn,
                    links=tuple(links_of.get((session.session_id, turn.turn), ())),
                    evidence=evidence.get((session.session_id, turn.turn)),
                    anchor=f"t-{i}-{turn.turn}",
                    ctx=ctx,
                ),
                spans_judge,
            )
            for turn in sorted(turns_of.get(session.session_id, []), key=lambda t: t.turn)
        ]
        gold = (
            f"; user satisfaction {fmt(session.gold_satisfaction, 1)}"
            if session.gold_satisfaction is not None
            else ""
        )
        parts.append(
            f"<section class='session' id='session-{i}'>"
            f"<h3>Session {esc(session.session_id)}</h3>"
            f"<p class='muted'>{esc(session.task_type or 'no task type')}; "
            f"{counted(session.n_turns, 'turn')}{gold}"
            + (f"; shown for: {esc('; '.join(why))}" if why else "")
            + "</p>"
            + _scores_line(ctx, session.scores)
            + f"{whole}{''.join(turn_parts)}</section>"
        )
    return "".join(parts)
