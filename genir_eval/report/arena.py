"""The arena's report page: the ranking, the win/tie/loss matrix, style control and the
judge's consistency, every name escaped (system names come from the command line and file
names, which are data)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genir_eval.report.html import CSP
from genir_eval.rundir.folder import write_text_atomic

__all__ = ["render_arena"]


def _number(value: Any, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ranking(document: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(s['name'])}</td><td>{_number(s['score'])}</td>"
        f"<td>{_number((s['ci95'] or [None])[0])} – {_number((s['ci95'] or [None, None])[1])}</td>"
        f"<td>{s['wins']}</td><td>{s['ties']}</td><td>{s['losses']}</td></tr>"
        for s in document["systems"]
    )
    return (
        "<h2>Ranking (Bradley–Terry with ties, Elo scale)</h2><table><tr><th>system</th>"
        "<th>score</th><th>95% interval</th><th>wins</th><th>ties</th><th>losses</th></tr>"
        f"{rows}</table>"
    )


def _matrix(document: Mapping[str, Any]) -> str:
    matrix = document["matrix"]
    names = list(matrix)
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    body = ""
    for x in names:
        cells = "".join(
            "<td>–</td>" if x == y else "<td>{wins}/{ties}/{losses}</td>".format(**matrix[x][y])
            for y in names
        )
        body += f"<tr><th>{html.escape(x)}</th>{cells}</tr>"
    return (
        "<h2>Wins / ties / losses of the row against the column</h2>"
        f"<table><tr><th></th>{head}</tr>{body}</table>"
    )


def _style(document: Mapping[str, Any]) -> str:
    style = document.get("style_control")
    if not style:
        return ""
    coefficients = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{v:+.3f}</td></tr>"
        for k, v in style["coefficients"].items()
    )
    scores = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{v:.1f}</td></tr>" for k, v in style["scores"].items()
    )
    return (
        "<h2>Style control</h2><p>Coefficients of the normalised differences (a − b)/(a + b): "
        "how much each alone sways a verdict.</p>"
        f"<table><tr><th>covariate</th><th>coefficient</th></tr>{coefficients}</table>"
        f"<table><tr><th>system</th><th>style-controlled score</th></tr>{scores}</table>"
    )


def _consistency(document: Mapping[str, Any]) -> str:
    c = document["consistency"]
    gold = document.get("gold")
    lines = [
        f"position consistency: {_number(c['position_consistency'], 3)} over "
        f"{c['pairs_in_both_orders']} pairs judged in both orders"
        + (
            f" ({c['mirrored_pairs']} pairs judged once by the offline twin, the swapped "
            "order its mirror by construction)"
            if c.get("mirrored_pairs")
            else ""
        ),
        f"intransitive cycles: {c['intransitive_cycles']} of {c['decided_triads']} decided triads",
        f"pairs judged: {document['pairs']['judged']}, missing: {document['pairs']['missing']}, "
        f"ties: {document['pairs']['ties']}",
    ]
    if gold:
        lines.append(
            f"agreement with people ({html.escape(str(gold['criterion']))}): "
            f"{_number(gold['rate'], 3)} of {gold['judged']} decided gold pairs "
            f"({gold['ties']} judged ties counted half, {gold['unjudged']} unjudged)"
        )
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f"<h2>The judge</h2><ul>{items}</ul>"


_NUGGET_SCORES = (
    ("nugget_recall", "all"),
    ("nugget_recall(partial=0)", "all strict"),
    ("vital_nugget_recall", "vital"),
    ("vital_nugget_recall(partial=0)", "vital strict"),
)


def _nuggets(document: Mapping[str, Any]) -> str:
    block = document.get("nuggets")
    if not block:
        return ""

    def cell(row: Mapping[str, Any], name: str) -> str:
        ci = (row.get("ci95") or {}).get(name) or [None, None]
        return f"<td>{_number(row.get(name), 3)} [{_number(ci[0], 2)}, {_number(ci[1], 2)}]</td>"

    rows = "".join(
        f"<tr><td>{html.escape(str(name))}</td><td>{row['answers']}</td><td>{row['missing']}</td>"
        + "".join(cell(row, key) for key, _ in _NUGGET_SCORES)
        + "</tr>"
        for name, row in block["systems"].items()
    )
    heads = "".join(f"<th>{title}</th>" for _, title in _NUGGET_SCORES)
    return (
        "<h2>Nugget scores (TREC 2024 RAG), beside the ranking</h2><p>Each query's nuggets "
        "are made from every system's cited sources (pooled); the share of them each answer "
        "supports, a partial support counting half (strict: nothing); mean over the system's "
        "answers, 95% interval over queries.</p><table><tr><th>system</th><th>answers</th>"
        f"<th>missing</th>{heads}</tr>{rows}</table>"
    )


def render_arena(path: Path, document: Mapping[str, Any]) -> None:
    body = (
        _ranking(document)
        + _nuggets(document)
        + _matrix(document)
        + _style(document)
        + _consistency(document)
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        # the run report's policy: nothing loads or runs, whatever a system's name holds
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<title>genir-eval arena</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
        "margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}</style>"
        f"</head><body><h1>genir-eval arena</h1>{body}</body></html>\n"
    )
    write_text_atomic(path, page)
