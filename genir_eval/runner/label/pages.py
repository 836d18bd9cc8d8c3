"""The labelling pages, rendered on the server: every value from a log or a person goes
through :func:`html.escape` and is shown as text in an isolated, left-to-right-safe block
(``dir="auto"``, ``unicode-bidi: isolate``: a right-to-left override in a statement turns
only its own text). The pages load one style sheet and one script from the server, no
inline script or style, so the Content-Security-Policy forbids everything else."""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from genir_eval.figures import number_text
from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS, PAIRWISE
from genir_eval.runner.label.items import (
    NUGGET_QUEUE,
    SESSION_SATISFACTION,
    TURN_SATISFACTION,
    Item,
)
from genir_eval.runner.label.queue import Queue, Workspace
from genir_eval.runner.label.selection import SampleSize

__all__ = ["index_page", "item_page", "done_page", "agreement_page", "QUEUE_TITLES"]

QUEUE_TITLES = {
    LINK_USEFULNESS: "Link usefulness (0-3)",
    CITATION_SUPPORT: "Citation support (full / partial / none)",
    NUGGET_QUEUE: "Does the answer give the nugget (support / partial / not)",
    TURN_SATISFACTION: "Turn satisfaction (1-5)",
    SESSION_SATISFACTION: "Session satisfaction (1-5)",
    PAIRWISE: "Which answer is better (left / right / tie)",
}


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><link rel='stylesheet' href='/static/label.css'>"
        "<script src='/static/label.js' defer></script></head>"
        f"<body>{body}</body></html>"
    )


def _queue_url(queue: str, labeller: str) -> str:
    return f"/label/{quote(queue)}?{urlencode({'labeller': labeller})}"


def index_page(space: Workspace, labeller: str | None) -> str:
    rows = []
    for q in space.queues.values():
        size = q.size(space.store)
        labelled = len(space.store.labels(q.name))
        name = (
            f"<a href='{_e(_queue_url(q.name, labeller))}'>{_e(QUEUE_TITLES[q.name])}</a>"
            if labeller
            else _e(QUEUE_TITLES[q.name])
        )
        rows.append(
            f"<tr><td>{name}</td><td>{len(q.items)}</td><td>{size.asked}</td>"
            f"<td>{labelled}</td><td>{q.per_item}</td></tr>"
        )
    form = (
        "<form method='get' action='/' class='who'><label>Your name "
        f"<input name='labeller' id='labeller' value='{_e(labeller or '')}' required "
        "pattern='[A-Za-z0-9][A-Za-z0-9 ._\\-]{0,39}' autofocus></label> "
        "<button type='submit'>Start</button></form>"
    )
    body = (
        f"<header><h1>Label: {_e(space.title)}</h1></header><main>{form}"
        "<table class='queues'><thead><tr><th>queue</th><th>items</th>"
        "<th>labels asked for</th><th>items labelled</th><th>people per item</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "<p><a href='/agreement'>Agreement with the judges</a> · "
        "<a href='/openapi.json'>API schema</a></p></main>"
    )
    return _page(f"Label {space.title}", body)


def _pane(heading: str, text: str) -> str:
    return (
        f"<section class='pane'><h2>{_e(heading)}</h2>"
        f"<div class='log' dir='auto'>{_e(text)}</div></section>"
    )


def item_page(space: Workspace, queue: Queue, item: Item, labeller: str, *, reveal: bool) -> str:
    size = queue.size(space.store)
    done, seconds = space.store.done_by(queue.name, labeller)
    position = done + 1
    past = " (past the labels asked for)" if position > size.asked else ""
    pace = f"{number_text(seconds)} s an item" if seconds is not None else "no label yet"
    judged = ""
    if reveal:
        shown = item.expected
        judged = (
            "<p class='judged'>Judges: "
            + ", ".join(
                f"{_e(j)} {_e(number_text(v))}" for j, v in item.judged.items() if v is not None
            )
            + (f" (mean {_e(number_text(shown))})" if shown is not None else "")
            + "</p>"
        )
    here = f"/label/{quote(queue.name)}?"
    reveal_link = (
        f"<a href='{_e(here + urlencode({'labeller': labeller}))}'>hide the judges' labels</a>"
        if reveal
        else f"<a href='{_e(here + urlencode({'labeller': labeller, 'reveal': 1}))}'>show the "
        "judges' labels (your labels then say they were shown)</a>"
    )
    buttons = "".join(
        f"<button type='button' class='choice' data-value='{_e(c.value)}' data-key='{_e(c.key)}'>"
        f"<kbd>{_e(c.key)}</kbd> {_e(c.words)}</button>"
        for c in item.choices or queue.choices
    )
    panes = "".join(_pane(p.heading, p.text) for p in item.panes)
    width = {2: "two", 3: "three"}.get(len(item.panes), "one")
    body = (
        f"<header><h1>{_e(QUEUE_TITLES[queue.name])}</h1>"
        f"<p class='progress' id='progress'>{_e(labeller)}: item {position} of {size.asked}"
        f"{_e(past)} · {_e(pace)} · {len(queue.items)} in the queue</p>"
        f"<p class='target'>{_e(_asked(size))} give a 95% interval "
        f"{_e(number_text(size.width))} wide (judge-minus-person spread "
        f"{_e(number_text(size.rectifier_sd))}, {'measured' if size.observed else 'assumed'})"
        f"</p></header>"
        f"<main id='item' data-queue='{_e(queue.name)}' data-item='{_e(item.key)}' "
        f"data-labeller='{_e(labeller)}' data-reveal='{int(reveal)}'>"
        f"<p class='where'>{_e(item.key)}</p>{judged}"
        f"<div class='panes {width}'>{panes}</div>"
        f"<div class='choices'>{buttons}</div>"
        "<div class='actions'><button type='button' id='skip'><kbd>s</kbd> skip</button>"
        "<button type='button' id='undo'><kbd>u</kbd> undo</button>"
        "<label class='comment'><kbd>c</kbd> comment "
        "<textarea id='comment' rows='2' maxlength='2000'></textarea></label></div>"
        "<p id='status' role='status'></p>"
        f"<p><a href='/?{_e(urlencode({'labeller': labeller}))}'>queues</a> · {reveal_link}</p>"
        "</main>"
    )
    return _page(f"{QUEUE_TITLES[queue.name]}: {item.key}", body)


def _asked(size: SampleSize) -> str:
    """What the page asks for, and why that many."""
    if size.asked >= size.pool and size.needed >= size.pool:
        return f"All {size.pool} items labelled (a prediction-powered mean needs them all)"
    return (
        f"{size.asked} labels (every other item drawn at random: the {size.needed} a "
        "prediction-powered mean rests on)"
    )


def done_page(space: Workspace, queue: Queue, labeller: str) -> str:
    done, _ = space.store.done_by(queue.name, labeller)
    body = (
        f"<header><h1>{_e(QUEUE_TITLES[queue.name])}</h1></header>"
        f"<main id='item' data-queue='{_e(queue.name)}' data-item='' "
        f"data-labeller='{_e(labeller)}' data-reveal='0'>"
        f"<p class='progress' id='progress'>{_e(labeller)}: done, {done} items. Nothing left "
        "for you in this queue.</p>"
        "<div class='actions'><button type='button' id='undo'><kbd>u</kbd> undo</button></div>"
        "<p id='status' role='status'></p>"
        f"<p><a href='/?{_e(urlencode({'labeller': labeller}))}'>queues</a> · "
        "<a href='/agreement'>agreement</a></p></main>"
    )
    return _page("Done", body)


def _figure(value: Any) -> str:
    return "—" if value is None else _e(number_text(value))


def _interval(block: dict[str, Any] | None) -> str:
    if not block:
        return "—"
    lo, hi = block["ci"]
    return f"{_figure(block['estimate'])} [{_figure(lo)}, {_figure(hi)}]"


def agreement_page(space: Workspace) -> str:
    sections = []
    for q in space.agreement()["queues"]:
        rows = []
        for j in q["judges"]:
            ppi = j["ppi"]
            rows.append(
                f"<tr><td>{_e(j['judge'])}</td><td>{j['n']}</td><td>{_figure(j['kappa_linear'])}"
                f"</td><td>{_figure(j['mae'])}</td><td>{_interval(j['people_mean'])}</td>"
                f"<td>{_interval(ppi if ppi.get('ci') else None)} (n {ppi['n_sample']})</td>"
                f"<td>{_e(ppi.get('reason') or '')}</td></tr>"
            )
        alpha = q["between_people"]
        sections.append(
            f"<section><h2>{_e(QUEUE_TITLES[q['queue']])}</h2>"
            f"<p>{q['labelled']} of {q['items']} items labelled ({q['labels']} labels). "
            f"Between people: Krippendorff's alpha (ordinal) {_figure(alpha['alpha'])} on "
            f"{alpha['items']} items, {alpha['labellers']} people"
            f"{' — ' + _e(alpha['reason']) if alpha.get('reason') else ''}.</p>"
            "<table><thead><tr><th>judge</th><th>n</th><th>kappa (linear)</th><th>MAE</th>"
            "<th>people's mean of the labelled [95%]</th><th>PPI mean of all items, from the random sample [95%]</th><th>note</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></section>"
        )
    body = (
        f"<header><h1>Agreement: {_e(space.title)}</h1></header><main>{''.join(sections)}"
        "<p><a href='/'>queues</a></p></main>"
    )
    return _page(f"Agreement {space.title}", body)
