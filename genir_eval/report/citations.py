"""The report's citation view: per session its citation precision and recall, and per turn
each cited statement with its citation markers, each citation's support verdict and the
evidence quoted from the source.

:func:`citations_section` returns an HTML fragment (no script, every logged text escaped)
that the report page includes; it is empty when the run had no citation judge.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.metrics import CitationMeasure, parse_measure
from genir_eval.report.tables import turn_key
from genir_eval.rundir.folder import CitationRow, Run, _citation_row_from_dict

__all__ = ["citations_section", "citation_score_names", "CITATIONS_CSS"]

#: Styles the fragment uses (the page may define its own for these classes).
CITATIONS_CSS = (
    ".cite-turn{margin:.8em 0}.cite-stmt{margin:.3em 0 .1em}.cite-list{margin:0 0 .4em 1.2em}"
    ".support-full{color:#1a7f37}.support-partial{color:#9a6700}.support-none{color:#cf222e}"
    ".cite-missing{color:#6e7781}.evidence{font-style:italic}"
)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def citation_score_names(run: Run) -> list[str]:
    """The run's session-level scores that are citation measures, in table order: the
    first citation judge's (plain names), the other judges' (``@judge``), then gold's."""
    names = []
    for name in run.score_names("session"):
        base = name.removeprefix("gold:").split("@", 1)[0]
        try:
            measure = parse_measure(base)
        except ConfigError:
            continue
        if isinstance(measure, CitationMeasure):
            names.append(name)
    return sorted(names, key=lambda n: (n.startswith("gold:"), "@" in n))


def _session_table(run: Run, names: Sequence[str]) -> str:
    head = "".join(f"<th class='num'>{_e(n)}</th>" for n in names)
    rows = []
    for session in run.iter_rows("sessions"):
        scores = session.get("scores") or {}
        cells = "".join(f"<td class='num'>{_fmt(_number(scores.get(n)))}</td>" for n in names)
        rows.append(f"<tr><td>{_e(session['session_id'])}</td>{cells}</tr>")
    return f"<table id='citation-sessions'><tr><th>session</th>{head}</tr>{''.join(rows)}</table>"


def _verdict(row: CitationRow) -> str:
    judge = f"<span class='cite-missing'>{_e(row.judge)}:</span> "
    if row.support is None:
        reason = row.missing_reason or "missing"
        return f"{judge}<span class='cite-missing'>missing — {_e(reason)}</span>"
    basis = " (judged from title and url only)" if row.basis == "title_url" else ""
    evidence = f" — <q class='evidence'>{_e(row.evidence)}</q>" if row.evidence else ""
    return (
        f"{judge}<strong class='support-{_e(row.support)}'>{_e(row.support)}</strong>"
        f"{_e(basis)}{evidence}"
    )


def _turns(run: Run, max_turns: int) -> str:
    # the rows of the first max_turns turns (in first-seen order); the others only counted
    by_turn: dict[tuple[str, int], list[CitationRow]] = {}
    others: set[int] = set()
    for data in run.iter_rows("citations"):
        key = (str(data["session_id"]), int(data["turn"]))
        if key not in by_turn and len(by_turn) >= max_turns:
            others.add(turn_key(*key))
            continue
        by_turn.setdefault(key, []).append(_citation_row_from_dict(data))
    queries = {
        (str(t["session_id"]), int(t["turn"])): str(t.get("query") or "")
        for t in run.iter_rows("turns")
        if (str(t["session_id"]), int(t["turn"])) in by_turn
    }
    blocks = []
    for key in by_turn:
        rows = by_turn[key]
        statements: dict[int, list[CitationRow]] = defaultdict(list)
        for row in rows:
            statements[row.statement].append(row)
        parts = [
            f"<div class='cite-turn'><h3>{_e(key[0])} · turn {key[1]}: "
            f"{_e(queries.get(key, ''))}</h3>"
        ]
        for position, cited in statements.items():
            markers = "".join(f"[{n}]" for n in dict.fromkeys(r.link_id for r in cited))
            parts.append(
                f"<p class='cite-stmt'>{position}. {_e(cited[0].statement_text)} "
                f"<strong>{_e(markers)}</strong></p><ul class='cite-list'>"
            )
            for row in cited:
                source = row.title or row.url or "(not in the link list)"
                parts.append(f"<li>[{row.link_id}] {_e(source)}: {_verdict(row)}</li>")
            parts.append("</ul>")
        parts.append("</div>")
        blocks.append("".join(parts))
    more = ""
    if others:
        more = f"<p>{len(others)} more turns in citations.jsonl.</p>"
    return "".join(blocks) + more


def citations_section(run: Run, *, max_turns: int = 50) -> str:
    """The citation view of ``run`` as an HTML fragment ("" without citation rows)."""
    if next(run.iter_rows("citations"), None) is None:
        return ""
    names = citation_score_names(run)
    intro = (
        "<p>Per session, the share of citations that support their statement (precision), "
        "of statements needing support that a citation supports (recall), and of those no "
        "citation supports at all; then each turn's cited statements with every citation's "
        "verdict and the evidence quoted from the source.</p>"
    )
    return intro + _session_table(run, names) + _turns(run, max_turns)
