"""The arena's report page, styled as the run report (its stylesheet and content policy).

It opens with what was judged (systems, pairs, queries), by which judge (the model and
provider, or the offline twin, said to be a baseline), when, and with which options; then
the gate's verdict when there is one (``compare --pairwise``, ``arena --min-win-rate``), the
ranking with a 95% interval on every figure (Bradley-Terry scores and win rates: bootstrap
over queries), the win/tie/loss matrix, the style-controlled scores sorted, the judge's
consistency and its agreement with people (Wilson intervals, with n), and a few example
pairs per pair of systems with the judge's reason. Every name and reason is escaped (system
names come from the command line and file names, reasons from a model: both are data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from genir_eval.figures import counted, number_text
from genir_eval.report.html import styled_page
from genir_eval.report.views import esc
from genir_eval.rundir.folder import write_text_atomic

__all__ = ["render_arena", "arena_page"]

_NO_INTERVAL = "<span class='muted'>no interval</span>"

_CSS = """
.banner.pass{background:#e6f4ea;border-color:#2f855a} .banner h2{border:0;margin:0 0 4px}
.banner.regression{background:#fde2e1;border-color:#c53030} .banner.regression h2{color:#8a1c1c}
ol.examples li{margin:4px 0;overflow-wrap:anywhere}
"""


def _number(value: Any, digits: int = 1) -> str:
    return esc(number_text(value, digits, missing="–"))


def _interval(ci: Any, digits: int = 1) -> str:
    if not isinstance(ci, (list, tuple)) or len(ci) != 2 or None in ci:
        return _NO_INTERVAL
    return f"[{_number(ci[0], digits)}, {_number(ci[1], digits)}]"


def _with_interval(value: Any, ci: Any, digits: int = 1) -> str:
    return f"{_number(value, digits)} {_interval(ci, digits)}"


def _judge_words(document: Mapping[str, Any]) -> str:
    judge = document.get("judge") or {}
    if judge.get("offline"):
        return (
            "the offline twin of the pairwise judge (a baseline computed from the answers' "
            "features, not a model's judgment)"
        )
    return f"the pairwise judge through {judge.get('endpoint') or 'an unnamed endpoint'}"


def _lead(document: Mapping[str, Any]) -> str:
    """The first screen's sentence: who ranks first, and whether the intervals separate it
    from the second."""
    systems = document.get("systems") or []
    if not systems:
        return "<p id='verdict-line'><b>No pair was judged: no ranking.</b></p>"
    first = systems[0]
    text = (
        f"Ranked first: <b>{esc(first['name'])}</b>, Bradley–Terry score "
        f"{_with_interval(first['score'], first.get('ci95'))}, win rate "
        f"{_with_interval(first.get('win_rate'), first.get('win_rate_ci95'), 2)}"
    )
    if len(systems) > 1:
        second = systems[1]
        a, b = first.get("ci95"), second.get("ci95")
        if a and b:
            apart = a[0] > b[1]
            text += (
                f"; {'ahead of' if apart else 'not separated from'} "
                f"<b>{esc(second['name'])}</b> "
                f"({'the 95% intervals do not overlap' if apart else 'their 95% intervals overlap'})"
            )
    return f"<p id='verdict-line'>{text}.</p>"


def _gate(document: Mapping[str, Any]) -> str:
    """The pairwise gate's verdict in words, when the arena gated."""
    gate = document.get("gate")
    if not gate:
        return ""
    undecided = gate.get("undecided") or []
    verdict = "regression" if not gate["passed"] else "too few to decide" if undecided else "pass"
    rows = "".join(
        f"<li><b>{esc(c['name'])}</b>: win rate against {esc(gate['baseline'])} "
        + (
            "– (no judged pair)"
            if c.get("win_rate") is None
            else f"{_with_interval(c['win_rate'], c.get('ci'), 3)} over "
            f"{counted(c['pairs'], 'pair')}"
        )
        + (" <b class='down'>significantly below the threshold</b>" if c.get("failed") else "")
        + "</li>"
        for c in gate["candidates"]
    )
    level = 1 - float(gate["alpha"])
    reasons = "".join(f"<li>{esc(r)}</li>" for r in undecided)
    return (
        f"<div class='banner {'regression' if verdict == 'regression' else 'pass' if verdict == 'pass' else ''}'"
        f" id='verdict'><h2>Pairwise gate: {verdict}</h2><ul>{rows}{reasons}</ul>"
        f"<p class='hint'>Rule: a regression when a system's whole {level:.0%} interval of its "
        f"win rate against {esc(gate['baseline'])} (ties half, bootstrap over queries) lies "
        f"below {gate['threshold']:g}.</p></div>"
    )


def _facts(document: Mapping[str, Any]) -> str:
    pairs = document["pairs"]
    settings = document.get("settings") or {}
    judge = document.get("judge") or {}
    options = ", ".join(f"{k}={v}" for k, v in (judge.get("options") or {}).items())
    unmatched = {k: v for k, v in (document.get("unmatched") or {}).items() if v}
    given = {
        "--match": settings.get("match", document.get("match")),
        "--pairs": settings.get("pairs_file"),
        "--max-pairs": settings.get("max_pairs"),
        "--seed": settings.get("seed"),
        "--resamples": settings.get("resamples"),
        "--gold": settings.get("gold"),
        "--gold-criterion": settings.get("gold_criterion"),
        "--baseline": settings.get("baseline"),
        "--min-win-rate": settings.get("min_win_rate"),
        "--nuggets": "yes" if settings.get("nuggets") else None,
    }
    facts = [
        (
            "systems",
            "; ".join(f"{s['name']} ({s['path']})" for s in document.get("inputs") or []),
        ),
        ("queries (topics) matched", document.get("queries", "–")),
        (
            "pairs",
            f"{pairs['judged']} judged, {pairs['missing']} missing, {pairs['ties']} ties"
            + (
                f" (of {settings['pairs_selected']} selected)"
                if settings.get("pairs_selected") is not None
                else ""
            ),
        ),
        ("unmatched answers left out", ", ".join(f"{k} {v}" for k, v in unmatched.items()) or 0),
        ("judge", judge.get("endpoint", "–")),
        ("judge options", options or "defaults"),
        ("started", document.get("started_at", "–")),
        ("duration", f"{number_text(document.get('duration_s'), 1, missing='–')} s"),
        ("options", ", ".join(f"{k} {v}" for k, v in given.items() if v is not None) or "–"),
    ]
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in facts)
    return f"<div class='scroll'><table class='facts' id='arena-facts'>{rows}</table></div>"


def _ranking(document: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td class='num'>{rank}</td><td>{esc(s['name'])}</td>"
        f"<td class='num'>{_with_interval(s['score'], s.get('ci95'))}</td>"
        f"<td class='num'>{_with_interval(s.get('win_rate'), s.get('win_rate_ci95'), 2)}</td>"
        f"<td class='num'>{s['wins']}</td><td class='num'>{s['ties']}</td>"
        f"<td class='num'>{s['losses']}</td></tr>"
        for rank, s in enumerate(document["systems"], 1)
    )
    return (
        "<h2 id='ranking'>Ranking</h2><p class='hint'>Bradley–Terry with ties (Davidson), on "
        "the Elo scale (1000 the mean strength); win rate: a win 1, a tie ½, a loss 0 over "
        "the system's judged pairs. Both with 95% bootstrap intervals over queries.</p>"
        "<div class='scroll'><table id='ranking-table'><tr><th class='num'>#</th>"
        "<th>system</th><th class='num'>score [95% interval]</th>"
        "<th class='num'>win rate [95% interval]</th><th class='num'>wins</th>"
        f"<th class='num'>ties</th><th class='num'>losses</th></tr>{rows}</table></div>"
    )


def _matrix(document: Mapping[str, Any]) -> str:
    matrix = document["matrix"]
    names = list(matrix)
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    body = ""
    for x in names:
        cells = "".join(
            "<td class='num'>–</td>"
            if x == y
            else "<td class='num'>{wins}/{ties}/{losses}</td>".format(**matrix[x][y])
            for y in names
        )
        body += f"<tr><th>{esc(x)}</th>{cells}</tr>"
    return (
        "<h2 id='matrix'>Wins / ties / losses of the row against the column</h2>"
        f"<div class='scroll'><table><tr><th></th>{head}</tr>{body}</table></div>"
    )


def _style(document: Mapping[str, Any]) -> str:
    style = document.get("style_control")
    if not style:
        return ""
    coefficients = "".join(
        f"<tr><td>{esc(k)}</td><td class='num'>{esc(f'{v:+.3f}')}</td></tr>"
        for k, v in style["coefficients"].items()
    )
    intervals = style.get("scores_ci95") or {}
    ranked = sorted(style["scores"].items(), key=lambda item: -item[1])
    scores = "".join(
        f"<tr><td>{esc(k)}</td><td class='num'>{_with_interval(v, intervals.get(k))}</td></tr>"
        for k, v in ranked
    )
    return (
        "<h2 id='style'>Style control</h2><p class='hint'>The ranking refitted with the "
        "answers' normalised differences (a − b)/(a + b) in length, cited sources and markup "
        "as covariates: the coefficients say how much each alone sways a verdict; the scores "
        "are what is left (95% bootstrap intervals over queries).</p>"
        f"<div class='scroll'><table id='style-scores'><tr><th>system</th>"
        f"<th class='num'>style-controlled score [95% interval]</th></tr>{scores}</table>"
        f"<table><tr><th>covariate</th><th class='num'>coefficient</th></tr>{coefficients}"
        "</table></div>"
    )


def _consistency(document: Mapping[str, Any]) -> str:
    c = document["consistency"]
    gold = document.get("gold")
    if c.get("position_consistency") is None:
        position = (
            f"position consistency: not measured ({c.get('mirrored_pairs', 0)} pairs judged "
            "once by the offline twin, the swapped order its mirror by construction)"
            if c.get("mirrored_pairs")
            else "position consistency: no pair was judged in both orders"
        )
    else:
        position = (
            f"position consistency: {_with_interval(c['position_consistency'], c.get('position_consistency_ci95'), 3)} "
            f"over {counted(c['pairs_in_both_orders'], 'pair')} judged in both orders"
        )
    lines = [
        position,
        esc(
            f"intransitive cycles: {c['intransitive_cycles']} of {c['decided_triads']} decided "
            "triads"
        ),
    ]
    if gold:
        lines.append(
            f"<b id='gold-agreement'>agreement with people</b> ({esc(gold['criterion'])}): "
            f"{_with_interval(gold['rate'], gold.get('rate_ci95'), 3)} over n = "
            f"{gold['judged']} gold pairs the judge decided or tied ({gold['ties']} judged "
            f"ties counted half, {gold['unjudged']} unjudged; 95% Wilson interval)"
        )
    items = "".join(f"<li>{line}</li>" for line in lines)
    return f"<h2 id='judge'>The judge</h2><ul>{items}</ul>"


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
        ci = (row.get("ci95") or {}).get(name)
        return f"<td class='num'>{_with_interval(row.get(name), ci, 3)}</td>"

    rows = "".join(
        f"<tr><td>{esc(name)}</td><td class='num'>{row['answers']}</td>"
        f"<td class='num'>{row['missing']}</td>"
        + "".join(cell(row, key) for key, _ in _NUGGET_SCORES)
        + "</tr>"
        for name, row in block["systems"].items()
    )
    heads = "".join(f"<th class='num'>{title}</th>" for _, title in _NUGGET_SCORES)
    return (
        "<h2 id='nuggets'>Nugget scores (TREC 2024 RAG), beside the ranking</h2><p class='hint'>"
        "Each query's nuggets are made from every system's cited sources (pooled); the share "
        "of them each answer supports, a partial support counting half (strict: nothing); "
        "mean over the system's answers, 95% interval over queries.</p><div class='scroll'>"
        "<table><tr><th>system</th><th class='num'>answers</th><th class='num'>missing</th>"
        f"{heads}</tr>{rows}</table></div>"
    )


def _examples(document: Mapping[str, Any]) -> str:
    examples: Sequence[Mapping[str, Any]] = document.get("examples") or []
    if not examples:
        return ""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for example in examples:
        groups.setdefault((example["a"], example["b"]), []).append(example)
    blocks = "".join(
        f"<h3>{esc(a)} against {esc(b)}</h3><ol class='examples'>"
        + "".join(
            f"<li>session <b>{esc(e['session_id'])}</b> turn {esc(e['turn'])}: "
            + ("a tie" if e["winner"] == "tie" else f"<b>{esc(e['winner'])}</b> won")
            + f" <span class='reason'>{esc(e['reason'])}</span></li>"
            for e in group
        )
        + "</ol>"
        for (a, b), group in groups.items()
    )
    return (
        "<h2 id='examples'>Example pairs with the judge's reason</h2><p class='hint'>Per pair "
        "of systems, the judged pairs whose reason is shortest.</p>" + blocks
    )


def arena_page(document: Mapping[str, Any]) -> str:
    """The arena's page as one self-contained HTML string (``document``: ``arena.json``)."""
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    pairs = document["pairs"]
    n_systems = len(document.get("inputs") or document.get("systems") or [])
    sub = (
        f"<p class='sub'>{counted(n_systems, 'system')}, {counted(pairs['judged'], 'pair')} "
        f"judged on {counted(document.get('queries', 0), 'query/queries')} by "
        f"{esc(_judge_words(document))} · started {esc(document.get('started_at', '–'))} · "
        f"generated {esc(generated)}</p>"
    )
    twin = (
        "<div class='banner' id='offline-twin'>Judged offline: the pairwise judge's offline "
        "twin prefers an answer by what the log states of it (distinct cited sources, layout "
        "blocks, text not copied from its sources), deterministically. It is a baseline to compare a model's judgments with, not a "
        "judgment of quality.</div>"
        if (document.get("judge") or {}).get("offline")
        else ""
    )
    body = (
        sub
        + _gate(document)
        + _lead(document)
        + twin
        + _facts(document)
        + _ranking(document)
        + _nuggets(document)
        + _matrix(document)
        + _style(document)
        + _consistency(document)
        + _examples(document)
    )
    return styled_page("genir-eval arena", body, css=_CSS)


def render_arena(path: Path, document: Mapping[str, Any]) -> None:
    """Write the arena's page to ``path``."""
    write_text_atomic(path, arena_page(document))
