"""A session's page (each turn, its answer, links, statements, every judgment and people's
labels beside the judges') and a session's page across runs (every shared score, each run's
value and change)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS
from genir_eval.runner.label.items import SESSION_SATISFACTION, TURN_SATISFACTION
from genir_eval.runner.web.compare import Comparison
from genir_eval.runner.web.links import Links
from genir_eval.runner.web.pages import e, figure, page
from genir_eval.runner.web.session import anchor, label_key

__all__ = ["session_page", "compare_session_page"]


def _text(value: Any, cls: str = "log") -> str:
    return f"<div class='{cls}' dir='auto'>{e(value or '')}</div>"


def _url(url: str, title: str) -> str:
    """A log's link, clickable only when it is http(s) (never a ``javascript:`` one)."""
    shown = e(title or url)
    if urlsplit(url).scheme in ("http", "https"):
        return f"<a href='{e(url)}' rel='noopener noreferrer nofollow' dir='auto'>{shown}</a>"
    return f"<span dir='auto'>{shown}</span>"


def _label_button(links: Links, queue: str, key: str) -> str:
    target = links.label(queue, key)
    return f" <a class='label' href='{e(target)}'>label</a>" if target else ""


def _people(labels: Mapping[str, Any]) -> str:
    return ", ".join(f"{e(who)} {figure(v)}" for who, v in labels.items()) or "—"


def _links_table(turn: Mapping[str, Any], links: Links, judges: list[str]) -> str:
    if not turn["links"]:
        return ""
    head = "".join(f"<th>{e(j)}</th>" for j in judges)
    rows = []
    for link in turn["links"]:
        where = anchor("link", turn["turn"], link["link_id"])
        labels = link.get("labels") or {}
        missing = link.get("missing") or {}
        cells = "".join(
            f"<td class='num' title='{e(missing.get(j, ''))}'>"
            f"{figure(labels.get(j)) if j not in missing else 'missing'}</td>"
            for j in judges
        )
        rows.append(
            f"<tr id='{e(where)}'><td>[{e(link['link_id'])}] {_url(str(link.get('url') or ''), str(link.get('title') or ''))}"
            f" <a class='permalink' href='#{e(where)}'>#</a>"
            f"{_label_button(links, LINK_USEFULNESS, link['label_key'])}</td>"
            f"<td>{'yes' if link.get('cited') else 'no'}</td>{cells}"
            f"<td class='num people'>{figure(link.get('annotators'))}</td>"
            f"<td class='people'>{_people(link['people'])}</td></tr>"
        )
    return (
        "<h3>Links</h3><table class='links'><thead><tr><th>link</th><th>cited</th>"
        f"{head}<th>annotators</th><th>labelling page</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _statements(turn: Mapping[str, Any]) -> str:
    if not turn["statements"]:
        return ""
    items = "".join(
        f"<li>{_text(s['text'], 'statement')}<span class='cites'>cites "
        f"{', '.join(f'[{int(i)}]' for i in s['links']) or 'nothing'}</span></li>"
        for s in turn["statements"]
    )
    return f"<h3>Statements and the links they cite</h3><ol class='statements'>{items}</ol>"


def _spans(turn: Mapping[str, Any]) -> str:
    if not turn.get("spans"):
        return ""
    rows = "".join(
        f"<tr><td class='{'people' if m['by'].startswith('gold:') else ''}'>"
        f"{e(m['by'].removeprefix('gold:'))}</td><td class='num'>{m['marked']} of "
        f"{m['segments']}</td><td class='num'>{figure(m['jaccard_annotators'])}</td></tr>"
        for m in turn["spans"]
    )
    return (
        "<h3>Marked segments of the answer</h3><table class='spans'><thead><tr><th>by</th>"
        "<th>segments marked</th><th>overlap with the annotators' (Jaccard)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _citations(turn: Mapping[str, Any], links: Links) -> str:
    if not turn["citations"]:
        return ""
    rows = "".join(
        f"<tr><td>{e(c['statement'])}</td><td>[{e(c['link_id'])}]</td><td>{e(c['judge'])}</td>"
        f"<td>{e(c.get('support') or ('missing: ' + str(c.get('missing_reason') or '')))}</td>"
        f"<td>{_text(c.get('evidence'), 'evidence')}</td><td class='people'>{_people(c['people'])}"
        f"{_label_button(links, CITATION_SUPPORT, c['label_key'])}</td></tr>"
        for c in turn["citations"]
    )
    return (
        "<h3>Citation support</h3><table class='citations'><thead><tr><th>statement</th>"
        "<th>link</th><th>judge</th><th>support</th><th>evidence</th><th>people</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _judgment(j: Mapping[str, Any], costs: Mapping[str, Any]) -> str:
    request = j.get("request") or {}
    cost = costs.get(j["judge"]) or {}
    value = (
        f"<span class='missing'>missing: {e(j.get('missing_reason'))}</span>"
        if j.get("missing_reason")
        else f"<span class='value'>{figure(j.get('value'))}</span>"
    )
    repeat = f" · repeat {e(j['repeat'])}" if j.get("repeat") else ""
    raw = (
        f"<details><summary>raw reply</summary><pre dir='auto'>{e(j['raw'])}</pre></details>"
        if j.get("raw")
        else ""
    )
    return (
        f"<article class='judgment' id='{e(j['anchor'])}'><h4>{e(j['judge'])} · {e(j['item'])}"
        f"{repeat} {value} "
        f"<a class='permalink' href='#{e(j['anchor'])}'>#</a></h4>"
        f"{_text(j.get('reason'), 'reason')}{raw}"
        f"<p class='digest'>prompt {e(cost.get('prompt_version') or '—')} · request "
        f"{e((request.get('fingerprint') or '—')[:16])} · {e(request.get('status') or 'no journal row')}"
        f"{' · ' + str(request.get('attempts')) + ' attempts' if request.get('attempts') else ''}</p>"
        "</article>"
    )


def _judges_table(costs: Mapping[str, Mapping[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>{e(name)}</td><td>{e(c.get('provider') or '')} {e(c.get('model') or '')}</td>"
        f"<td>{e(c.get('prompt_version') or '—')}</td><td class='num'>{c['calls']}</td>"
        f"<td class='num'>{c['input_tokens']}</td><td class='num'>{c['output_tokens']}</td>"
        f"<td class='num'>{figure(c['cost_usd'])}</td>"
        f"<td class='num'>{figure(c['input_tokens'] / c['calls']) if c['calls'] else '—'} / "
        f"{figure(c['output_tokens'] / c['calls']) if c['calls'] else '—'}</td></tr>"
        for name, c in costs.items()
    )
    return (
        "<section><h2>Judges: tokens and cost over the run</h2><p class='note'>The run folder "
        "keeps tokens and cost per judge, not per judgment: the last column is the mean per "
        "call.</p><table class='judges'><thead><tr><th>judge</th><th>model</th><th>prompt "
        "digest</th><th>calls</th><th>input tokens</th><th>output tokens</th><th>cost (USD)"
        f"</th><th>tokens per call (in / out)</th></tr></thead><tbody>{rows}</tbody></table>"
        "</section>"
    )


def _turn(
    sid: str, turn: Mapping[str, Any], links: Links, judges: list[str], costs: Mapping[str, Any]
) -> str:
    where = anchor("turn", turn["turn"])
    users = turn["users"]
    said = [f"satisfaction {figure(users.get('satisfaction'))}"]
    if users.get("thumbs") is not None:
        said.append(f"thumbs {'up' if users['thumbs'] > 0 else 'down'}")
    scores = "".join(
        f"<li>{e(k)} <b>{figure(v)}</b></li>" for k, v in (turn.get("scores") or {}).items()
    )
    failures = "".join(
        f"<li class='missing'>{e(f['judge'])} · {e(f['item'])}: {e(f['reason'])}</li>"
        for f in turn["failures"]
    )
    return (
        f"<section class='turn' id='{e(where)}'><h2>Turn {e(turn['turn'])} "
        f"<a class='permalink' href='#{e(where)}'>#</a>"
        f"{_label_button(links, TURN_SATISFACTION, label_key(TURN_SATISFACTION, sid, turn['turn']))}</h2>"
        f"<h3>Query</h3>{_text(turn['query'], 'log query')}<h3>Answer</h3>{_text(turn['answer'])}"
        f"<p class='people'>User: {e('; '.join(said))}"
        f"{' · feedback: ' + e(users['feedback']) if users.get('feedback') else ''} · labelling "
        f"page: {_people(turn['people'])}</p>"
        f"<details><summary>turn scores</summary><ul class='scores'>{scores}</ul></details>"
        f"{_links_table(turn, links, judges)}{_statements(turn)}{_spans(turn)}"
        f"{_citations(turn, links)}"
        f"{f'<h3>Failed judgments</h3><ul>{failures}</ul>' if failures else ''}"
        f"<h3>Judgments</h3>{''.join(_judgment(j, costs) for j in turn['judgments'])}</section>"
    )


def session_page(detail: Mapping[str, Any], run: int, links: Links) -> str:
    sid = detail["session_id"]
    judges = sorted(
        {j for t in detail["turns"] for link in t["links"] for j in link.get("labels") or {}}
    )
    turns = "".join(_turn(sid, t, links, judges, detail["judges"]) for t in detail["turns"])
    scores = "".join(
        f"<tr><td>{e(k)}</td><td class='num'>{figure(v)}</td></tr>"
        for k, v in detail["scores"].items()
    )
    dis = "".join(
        f"<li>{e(k.split(':', 2)[2])} vs {e(k.split(':', 2)[1])}: {figure(v)}</li>"
        for k, v in detail["disagreements"].items()
        if v is not None
    )
    back = links.table(run, "")
    headline = detail.get("headline")
    lead = (
        f" · {e(headline)} {figure(detail['scores'].get(headline))}"
        if headline in detail["scores"]
        else ""
    )
    body = (
        f"<header><p><a href='{e(back)}' id='back'>{e(detail['run'])}: sessions</a></p>"
        f"<h1 dir='auto'>{e(sid)}</h1><p>{e(detail['task_type'] or 'no task type')} · "
        f"{detail['n_turns']} turns{lead} · users' session satisfaction "
        f"{figure(detail['users']['satisfaction'])} · labelling page: {_people(detail['people'])}"
        f"{_label_button(links, SESSION_SATISFACTION, detail['label_key'])}</p></header><main>"
        f"<section><details><summary>Session scores ({len(detail['scores'])})</summary>"
        f"<table class='scores'><tbody>{scores}</tbody></table></details>"
        f"<details><summary>Judge vs people</summary>"
        f"<ul>{dis or '<li>no people’s labels to compare</li>'}</ul></details></section>"
        f"{turns}{_judges_table(detail['judges'])}</main>"
    )
    return page(f"{detail['run']}: {sid}", body, links)


def compare_session_page(cmp: Comparison, session_id: str, links: Links) -> str:
    row = cmp.base.row_of(session_id)
    names = [r.title for r in cmp.runs]
    rows = []
    for score in sorted(cmp.shared, key=lambda s: -abs(_gap(cmp.values(s, row)))):
        values = cmp.values(score, row)
        rows.append(
            f"<tr><td>{e(score)}</td>{''.join(f'<td class=num>{figure(v)}</td>' for v in values)}"
            f"{''.join(f'<td class=num>{figure(v - values[0])}</td>' for v in values[1:])}</tr>"
        )
    runs = "".join(
        f"<li><a href='{e(links.session(k, session_id) or '')}'>{e(r.title)}</a></li>"
        for k, r in enumerate(cmp.runs)
        if links.session(k, session_id)
    )
    body = (
        f"<header><p><a href='{e(links.compare(''))}' id='back'>all sessions</a></p>"
        f"<h1 dir='auto'>{e(session_id)}</h1><p>in {e(', '.join(names))}</p></header><main>"
        f"<p>Each run's page of this session:</p><ul>{runs}</ul>"
        "<table class='scores compare' id='deltas'><thead><tr><th>score</th>"
        + "".join(f"<th>{e(n)}</th>" for n in names)
        + "".join(f"<th>Δ {e(n)}</th>" for n in names[1:])
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table></main>"
    )
    return page(f"{session_id} across runs", body, links)


def _gap(values: list[float]) -> float:
    gaps = [abs(v - values[0]) for v in values[1:] if v == v and values[0] == values[0]]
    return max(gaps, default=0.0)
