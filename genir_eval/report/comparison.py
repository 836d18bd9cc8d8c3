"""``genir-eval compare --html FILE``: two runs side by side on one self-contained page.

It opens with the verdict in words and the rule that gave it (a pass beside an interval
lying wholly on the worse side says so; too few to decide is its own verdict), names the
session that got worse most, then shows each compared score's paired delta with its 95%
interval and randomisation p, then the sessions that got worse first by the gated score
(the first one that regressed, else the first compared): each with both runs' answers (the
turns' text, from each run's turns table) and, in each run's column, the reasons of the
judges whose labels that run's score comes from (from each run's ``evidence.jsonl``; run B's
``sdcg_urge`` may come from another link judge than run A's), never another judge's. Every log text is escaped (:func:`~genir_eval.report.views.esc`); the
page is styled by the run report's stylesheet (:func:`~genir_eval.report.html.styled_page`).

The figures are the documents ``compare --format json`` prints (``Comparison.to_dict()``
with the verdict's reasons), so the page and the JSON cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from genir_eval.figures import number_text
from genir_eval.report.evidence import read_evidence
from genir_eval.report.glossary import describe_score
from genir_eval.report.html import styled_page
from genir_eval.report.views import esc, fmt, fmt_ci
from genir_eval.rundir.folder import EVIDENCE_FILE, Run, write_text_atomic

__all__ = ["VERDICT_HEADINGS", "render_comparison", "write_comparison"]

#: The verdict in words, as the page's first heading says it.
VERDICT_HEADINGS = {
    "regression": "Regression: run B is worse than run A",
    "too few to decide": "Too few to decide (exit 4): no regression found, but too few pairs",
    "pass": "Pass: no regression of run B against run A",
}
#: A pass whose interval lies wholly on the worse side is never a bare pass.
_PASS_WITH_NOTE = "Pass by the rule, but read the note: the interval lies on the worse side"
_REASON_CHARS = 400
_REASONS_PER_TURN = 6

_CSS = """
.banner.pass{background:#e6f4ea;border-color:#2f855a} .banner h2{border:0;margin:0 0 4px}
.banner.regression{background:#fde2e1;border-color:#c53030} .banner.regression h2{color:#8a1c1c}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.side>div{min-width:0}
.query{font-weight:600;margin:4px 0;overflow-wrap:anywhere}
@media (max-width:860px){.side{grid-template-columns:1fr}}
"""


def _signed(value: Any, digits: int) -> str:
    """A change with its sign (``+0.120``, ``-0.050``); ``–`` when there is none."""
    if not isinstance(value, (int, float)):
        return "–"
    text = number_text(float(value), digits, missing="–")
    return text if text.startswith(("-", "–")) else f"+{text}"


def _gated(documents: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The comparison whose worse sessions the page lists: the first that regressed, else
    the first."""
    for document in documents:
        if document.get("verdict") == "regression":
            return document
    return documents[0] if documents else None


def _split(key: str, level: str) -> tuple[str, int | None]:
    """A compared key as ``(session id, turn)`` (``turn`` ``None`` at session level)."""
    if level != "turn":
        return key, None
    session_id, _, turn = key.rpartition("#")
    return session_id, int(turn) if turn.isdigit() else None


def _heading(verdict: str, documents: Sequence[Mapping[str, Any]]) -> str:
    notes = [n for d in documents for n in d.get("notes") or ()]
    if verdict == "pass" and notes:
        return _PASS_WITH_NOTE
    return VERDICT_HEADINGS[verdict]


def _change(document: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    return (
        f"{esc(document['metric'])} {fmt(row['a'])} → {fmt(row['b'])} "
        f"(<b class='down'>{esc(_signed(row['delta'], 3))}</b>)"
    )


def _verdict(verdict: str, documents: Sequence[Mapping[str, Any]], rule: str) -> str:
    """The first screen: the verdict in words, why, the session that got worse most, and the
    rule."""
    items = [
        (kind, text)
        for document in documents
        for kind in ("reasons", "undecided", "notes")
        for text in document.get(kind) or ()
    ]
    listed = "".join(
        f"<li>{'note: ' if kind == 'notes' else ''}{esc(text)}</li>" for kind, text in items
    )
    gated = _gated(documents)
    worse = list((gated or {}).get("worse") or ())
    if gated is not None and worse:
        unit = "sessions" if gated["level"] == "session" else "turns"
        first = worse[0]
        worst = (
            f"<p id='worst-first'>Got worse most: <b>{esc(first['key'])}</b>, "
            f"{_change(gated, first)}; {len(worse)} of {gated['n']} {unit} got worse on "
            f"{esc(gated['metric'])}.</p>"
        )
    elif gated is not None:
        worst = f"<p id='worst-first'>No session got worse on {esc(gated['metric'])}.</p>"
    else:
        worst = ""
    kind = {"pass": "pass", "regression": "regression"}.get(verdict, "")
    return (
        f"<div class='banner {kind}' id='verdict'><h2>{esc(_heading(verdict, documents))}</h2>"
        f"{f'<ul>{listed}</ul>' if listed else ''}{worst}"
        f"<p class='hint' id='rule'>Rule: {esc(rule)}</p></div>"
    )


def _table(documents: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for d in documents:
        direction = (
            ""
            if d.get("higher_is_better", True)
            else " <span class='muted'>(lower is better)</span>"
        )
        p = "–" if d.get("p_value") is None else number_text(d["p_value"], 4)
        exact = " (exact)" if d.get("p_exact") and d.get("p_value") is not None else ""
        kind = (
            f" <span class='muted evidence-kind'>({esc(d['kind'])})</span>" if d.get("kind") else ""
        )
        rows.append(
            f"<tr><td>{esc(d['metric'])}{kind}{direction}</td><td>{esc(d['level'])}</td>"
            f"<td class='num'>{d['n']}</td><td class='num'>{fmt(d.get('mean_a'))}</td>"
            f"<td class='num'>{fmt(d.get('mean_b'))}</td>"
            f"<td class='num'>{esc(_signed(d.get('mean_delta'), 4))}"
            f" {fmt_ci(d.get('ci95'), 4) or '<span class=muted>no interval (n &lt; 2)</span>'}</td>"
            f"<td class='num'>{esc(p)}{exact}</td>"
            f"<td class='num'>{esc(_signed(d.get('cohen_dz'), 2))}</td>"
            f"<td>{esc(d.get('verdict', ''))}</td></tr>"
        )
    return (
        "<h2 id='scores'>Per score: run B minus run A</h2><p class='hint'>Δ: the mean of the "
        "paired differences B − A, with its 95% paired bootstrap interval; p: the paired "
        "randomisation (sign-flip) test of no difference; d_z: Cohen's effect size.</p>"
        "<div class='scroll'><table id='comparisons'><tr><th>score</th><th>level</th>"
        "<th class='num'>n</th><th class='num'>A</th><th class='num'>B</th>"
        "<th class='num'>Δ [95% interval]</th><th class='num'>p</th><th class='num'>d_z</th>"
        f"<th>verdict</th></tr>{''.join(rows)}</table></div>"
    )


def _turn_rows(run: Run, session_ids: set[str]) -> dict[tuple[str, int], Mapping[str, Any]]:
    """The turns table's rows of ``session_ids`` (read in one pass)."""
    return {
        (str(row["session_id"]), int(row["turn"])): row
        for row in run.iter_rows("turns")
        if str(row.get("session_id")) in session_ids
    }


def _reasons(evidence: Any, judges: frozenset[str]) -> str:
    """A turn's (or session's) judgments by ``judges`` that state a reason, shortened."""
    if evidence is None:
        return ""
    items = []
    for judgment in evidence.judgments:
        if not judgment.reason or judgment.judge not in judges:
            continue
        text = " ".join(judgment.reason.split())
        if len(text) > _REASON_CHARS:
            text = text[: _REASON_CHARS - 1] + "…"
        value = "missing" if judgment.value is None else number_text(judgment.value)
        items.append(
            f"<li class='jd'><b>{esc(judgment.judge)}</b> on {esc(judgment.item)} gave "
            f"{esc(value)}: <span class='reason'>{esc(text)}</span></li>"
        )
        if len(items) == _REASONS_PER_TURN:
            break
    return f"<ul>{''.join(items)}</ul>" if items else ""


class _Side:
    """What one run shows of the listed sessions: its turns' text and the reasons of the
    judges whose labels its ``metric`` comes from (in this run)."""

    def __init__(self, run: Run, session_ids: set[str], metric: str) -> None:
        self.turns = _turn_rows(run, session_ids)
        self.evidence = read_evidence(run.directory / EVIDENCE_FILE, session_ids)
        self.judges = frozenset(describe_score(metric, run).judges)
        self.none = (
            f"no reason stated by {', '.join(sorted(self.judges))} for this turn"
            if self.judges
            else f"{metric} comes from no judge's labels in this run: no reason to show"
        )

    def numbers(self, session_id: str) -> list[int]:
        return sorted(t for s, t in self.turns if s == session_id)

    def column(self, label: str, session_id: str, turn: int) -> str:
        row = self.turns.get((session_id, turn))
        if row is None:
            return (
                f"<div><h4>Run {label}</h4><p class='muted'>no such turn in run {label}</p></div>"
            )
        reasons = _reasons(self.evidence.get((session_id, turn)), self.judges)
        return (
            f"<div data-judges='{esc(' '.join(sorted(self.judges)))}'><h4>Run {label}</h4>"
            f"<p class='query'>{esc(row.get('query'))}</p>"
            f"<div class='response'>{esc(row.get('response_text'))}</div>"
            f"{reasons or f'<p class=muted>{esc(self.none)}</p>'}</div>"
        )

    def session_reasons(self, session_id: str) -> str:
        return _reasons(self.evidence.get((session_id, None)), self.judges)


def _worse_sessions(gated: Mapping[str, Any] | None, run_a: Run, run_b: Run, count: int) -> str:
    """The sessions (turns) that got worse on the gated score, the largest change first,
    each with both runs' answers and reasons side by side."""
    if gated is None:
        return ""
    worse = list(gated.get("worse") or ())[:count]
    level = str(gated["level"])
    if not worse:
        return f"<h2 id='worse'>Got worse</h2><p>No {esc(level)} got worse on {esc(gated['metric'])}.</p>"
    keys = [_split(str(row["key"]), level) for row in worse]
    ids = {session_id for session_id, _ in keys}
    metric = str(gated["metric"])
    sides = (_Side(run_a, ids, metric), _Side(run_b, ids, metric))
    blocks = []
    for position, (row, (session_id, turn)) in enumerate(zip(worse, keys, strict=True), 1):
        numbers = (
            [turn]
            if turn is not None
            else sorted(set(sides[0].numbers(session_id)) | set(sides[1].numbers(session_id)))
        )
        turns = "".join(
            f"<div class='turn'><p class='muted'>turn {n}</p><div class='side'>"
            f"{sides[0].column('A', session_id, n)}{sides[1].column('B', session_id, n)}</div></div>"
            for n in numbers
        )
        whole = [side.session_reasons(session_id) for side in sides]
        session_level = (
            "<div class='side'>"
            + "".join(
                f"<div><h4>Run {label}: the session as a whole</h4>{text}</div>"
                for label, text in zip("AB", whole, strict=True)
            )
            + "</div>"
            if any(whole)
            else ""
        )
        blocks.append(
            f"<div class='session' id='worse-{position}'><h3>{position}. {esc(row['key'])}: "
            f"{_change(gated, row)}</h3>{session_level}{turns}</div>"
        )
    shown = len(worse)
    total = len(gated.get("worse") or ())
    more = f" (the {shown} largest of {total})" if total > shown else ""
    return (
        f"<h2 id='worse'>Got worse first, by {esc(gated['metric'])}{more}</h2>"
        "<p class='hint'>Each with both runs' answers and what the judges whose labels each "
        "run's score comes from said of them.</p>" + "".join(blocks)
    )


def render_comparison(
    documents: Sequence[Mapping[str, Any]],
    *,
    verdict: str,
    rule: str,
    run_a: Run,
    run_b: Run,
    worst: int = 5,
    options: Mapping[str, Any] | None = None,
) -> str:
    """The comparison page: ``documents`` are ``compare``'s JSON documents (one per score),
    ``verdict`` their joint verdict by ``rule``, ``options`` what the command was asked."""
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    given = ", ".join(f"{k} {v}" for k, v in (options or {}).items() if v is not None)
    sub = (
        f"<p class='sub'>Run B <code>{esc(run_b.directory)}</code> against run A "
        f"<code>{esc(run_a.directory)}</code> · generated {esc(generated)}"
        + (f" · {esc(given)}" if given else "")
        + "</p>"
    )
    body = (
        sub
        + _verdict(verdict, documents, rule)
        + _table(documents)
        + _worse_sessions(_gated(documents), run_a, run_b, worst)
    )
    return styled_page("genir-eval compare", body, css=_CSS)


def write_comparison(path: Path, page: str) -> Path:
    """Write the page atomically."""
    write_text_atomic(path, page)
    return path
