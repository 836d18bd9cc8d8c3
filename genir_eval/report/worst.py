"""Worst first: the sessions a reader should open, each with the judge's reason.

Two lists, read from the sessions table in one pass: the sessions with the worst headline
score (the lowest, or the highest for a score where lower is better), and, when the sessions
carry the users' satisfaction, those where the headline and the users disagree most (the
largest gap between the two ranks, as fractions of the sessions both scored: a session the
score puts last and the users first has gap 1). Each names the stated reason for the worst
label of the judge whose labels the headline comes from (its own judge, the link judge of a
link measure, the citation judge of a citation measure:
:attr:`~genir_eval.report.glossary.ScoreDescription.judges`), from ``evidence.jsonl``; never
another judge's: a session without such a reason is listed without one. The terminal summary prints :func:`worst_lines`, ``report.html`` shows
:func:`worst_html` with each session linked to its evidence (``#session-<position>``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from genir_eval.figures import number_text
from genir_eval.report.evidence import read_evidence
from genir_eval.report.glossary import describe_score
from genir_eval.report.views import esc, headline_score
from genir_eval.rundir.folder import EVIDENCE_FILE, Run

__all__ = [
    "WORST_COUNT",
    "WorstSession",
    "score_reasons",
    "worst_sessions",
    "worst_lines",
    "worst_html",
]

#: How many sessions each list names.
WORST_COUNT = 3
_REASON_CHARS = 160


@dataclass(frozen=True)
class WorstSession:
    """One session of a worst list: its position in the sessions table, its headline value,
    the users' satisfaction (when known), why it is listed and the judge's reason."""

    position: int
    session_id: str
    value: float
    gold: float | None
    why: str
    reason: str | None = None


def _ranks(values: Sequence[float]) -> list[float]:
    """Each value's rank as a fraction in [0, 1] (ties share their mean rank)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    top = max(len(values) - 1, 1)
    return [r / top for r in ranks]


def worst_sessions(
    run: Run, count: int = WORST_COUNT
) -> tuple[str | None, list[WorstSession], list[WorstSession]]:
    """The headline, its worst ``count`` sessions, and the ``count`` where it disagrees most
    with the users' satisfaction (empty without gold)."""
    score = headline_score(run)
    if score is None or count < 1:
        return score, [], []
    higher_is_better = describe_score(score, run).higher_is_better is not False
    rows: list[tuple[int, str, float, float | None]] = []
    for i, row in enumerate(run.iter_rows("sessions")):
        value = (row.get("scores") or {}).get(score)
        if isinstance(value, (int, float)) and math.isfinite(value):
            gold = row.get("gold_satisfaction")
            gold = float(gold) if isinstance(gold, (int, float)) and math.isfinite(gold) else None
            rows.append((i, str(row["session_id"]), float(value), gold))
    sign = 1.0 if higher_is_better else -1.0
    worst = [
        WorstSession(i, sid, value, gold, f"{'lowest' if higher_is_better else 'highest'} {score}")
        for i, sid, value, gold in sorted(rows, key=lambda r: (sign * r[2], r[0]))[:count]
    ]
    with_gold = [r for r in rows if r[3] is not None]
    disputed: list[WorstSession] = []
    if len(with_gold) >= 3:
        by_score = _ranks([sign * r[2] for r in with_gold])
        by_users = _ranks([r[3] for r in with_gold if r[3] is not None])
        gaps = sorted(
            ((abs(a - b), r) for a, b, r in zip(by_score, by_users, with_gold, strict=True)),
            key=lambda pair: (-pair[0], pair[1][0]),
        )
        disputed = [
            WorstSession(
                i, sid, value, gold, f"{score} and the users disagree (rank gap {gap:.2f})"
            )
            for gap, (i, sid, value, gold) in gaps[:count]
            if gap > 0
        ]
    reasons = score_reasons(run, score, {s.session_id for s in worst + disputed})
    return (
        score,
        [_with_reason(s, reasons) for s in worst],
        [_with_reason(s, reasons) for s in disputed],
    )


def _with_reason(session: WorstSession, reasons: Mapping[str, str]) -> WorstSession:
    reason = reasons.get(session.session_id)
    return WorstSession(**{**session.__dict__, "reason": reason})


def score_reasons(run: Run, score: str, session_ids: set[str]) -> dict[str, str]:
    """Per session of ``session_ids``, the reason stated for the lowest label of a judge
    whose labels ``score`` comes from (``describe_score(score).judges``: the headline's own
    judge, the link judge of a link measure, the citation judge of a citation measure);
    none for a session where no such judge stated one, and none for gold."""
    makers = set(describe_score(score, run).judges)
    if not makers:
        return {}
    chosen: dict[str, tuple[float, str]] = {}
    for (session_id, _turn), evidence in read_evidence(
        run.directory / EVIDENCE_FILE, session_ids
    ).items():
        for judgment in evidence.judgments:
            if judgment.judge not in makers or not judgment.reason:
                continue
            if isinstance(judgment.value, bool) or not isinstance(judgment.value, (int, float)):
                continue
            text = " ".join(judgment.reason.split())
            if len(text) > _REASON_CHARS:
                text = text[: _REASON_CHARS - 1] + "…"
            text = f"{judgment.judge} gave {number_text(judgment.value)}: {text}"
            best = chosen.get(session_id)
            if best is None or float(judgment.value) < best[0]:
                chosen[session_id] = (float(judgment.value), text)
    return {sid: text for sid, (_, text) in chosen.items()}


def _line(session: WorstSession, score: str) -> str:
    gold = f", users {number_text(session.gold, 1)}" if session.gold is not None else ""
    line = f"{session.session_id}: {score} {number_text(session.value)}{gold}"
    return line + (f" ({session.reason})" if session.reason else "")


def worst_lines(run: Run, count: int = WORST_COUNT) -> list[str]:
    """The worst lists as the terminal prints them (none when the run has no headline)."""
    score, worst, disputed = worst_sessions(run, count)
    if score is None or not worst:
        return []
    lines = [f"Worst first (report.html links each to its evidence): {worst[0].why}"]
    lines += [f"  {_line(s, score)}" for s in worst]
    if disputed:
        lines.append(f"  where {score} and the users disagree most:")
        lines += [f"  {_line(s, score)}" for s in disputed]
    return lines


def _anchor(position: int, shown: set[int] | None) -> str:
    return f"session-{position}" if shown is None or position in shown else "sessions"


def worst_html(run: Run, shown: set[int] | None = None, count: int = WORST_COUNT) -> str | None:
    """The worst lists as ``report.html`` shows them, each session linked to its turns
    (to the session index when ``shown``, the positions whose turns the page shows, leaves
    it out)."""
    score, worst, disputed = worst_sessions(run, count)
    if score is None or not worst:
        return None

    def items(sessions: list[WorstSession]) -> str:
        return "".join(
            f"<li><a href='#{_anchor(s.position, shown)}'>{esc(s.session_id)}</a>: {esc(score)} "
            f"<b>{esc(number_text(s.value))}</b>"
            + (f", users {esc(number_text(s.gold, 1))}" if s.gold is not None else "")
            + (f" <span class='reason'>{esc(s.reason)}</span>" if s.reason else "")
            + "</li>"
            for s in sessions
        )

    out = f"<p>{esc(worst[0].why)}:</p><ol id='worst-sessions'>{items(worst)}</ol>"
    if disputed:
        out += (
            f"<p>Where {esc(score)} and the users disagree most:</p>"
            f"<ol id='worst-disputed'>{items(disputed)}</ol>"
        )
    return out
