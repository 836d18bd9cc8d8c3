"""The viewer's pages, rendered on the server: every value from a log, a judge's reply or a
person is escaped and shown as text (``dir="auto"`` blocks, so a right-to-left override turns
only its own text); each page loads one style sheet and one script, no inline script runs
(a bundle's data rides in a ``application/json`` block, read, never run)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

from genir_eval.figures import number_text
from genir_eval.runner.label.items import SESSION_SATISFACTION
from genir_eval.runner.web.compare import Comparison
from genir_eval.runner.web.index import FIXED_COLUMNS, RunIndex
from genir_eval.runner.web.links import Links
from genir_eval.runner.web.query import Query, query_string
from genir_eval.runner.web.session import anchor, label_key

__all__ = ["page", "table_page", "compare_page", "e", "figure", "shown_columns"]

TITLES = {
    "n_turns": "turns",
    "failed": "failed judgments",
    "missing": "missing scores",
    "gold_satisfaction": "users' satisfaction",
}


def e(value: Any) -> str:
    return escape(str(value), quote=True)


def figure(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return e(value)  # a turn's list-valued score (a kind's spans) is shown as it is
    return e(number_text(float(value)))


def column_title(name: str) -> str:
    if name.startswith("disagree:"):
        _, against, what = name.split(":", 2)
        return f"{what} vs {against}"
    return TITLES.get(name, name)


def page(title: str, body: str, links: Links, *, data: Any = None) -> str:
    """The shell every page shares; ``data`` (a bundle's rows) goes in a JSON block that the
    script reads, with ``<`` escaped so no text in it can close the block."""
    block = ""
    if data is not None:
        text = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
        block = f"<script type='application/json' id='view-data'>{text}</script>"
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(title)}</title><link rel='stylesheet' href='{e(links.static('viewer.css'))}'>"
        f"<script src='{e(links.static('viewer.js'))}' defer></script></head>"
        f"<body data-bundle='{int(links.bundle)}'>{body}{block}"
        "<footer><p class='keys'><kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> open · "
        "<kbd>/</kbd> search</p></footer></body></html>"
    )


def _options(names: Sequence[str], chosen: str, *, empty: str) -> str:
    out = [f"<option value=''>{e(empty)}</option>"]
    out += [
        f"<option value='{e(n)}'{' selected' if n == chosen else ''}>{e(column_title(n))}</option>"
        for n in names
    ]
    return "".join(out)


def filter_form(
    index: RunIndex, query: Query, action: str, *, hidden: dict[str, str], by: Sequence[str] = ()
) -> str:
    """The filters as a GET form: submitting it makes the URL the view's link."""
    ranges = [*query.ranges, None]
    range_rows = "".join(
        "<span class='range'><select name='col' aria-label='score'>"
        + _options(list(index.columns), r.column if r else "", empty="(score range)")
        + f"</select> from <input name='lo' size='5' value='{e(_blank(r.low if r else None))}'"
        + f" aria-label='from'> to <input name='hi' size='5' value='{e(_blank(r.high if r else None))}'"
        + " aria-label='to'></span>"
        for r in ranges
    )
    hide = "".join(f"<input type='hidden' name='{e(k)}' value='{e(v)}'>" for k, v in hidden.items())
    by_field = (
        "<label>order by the change of <select name='by' id='by'>"
        + _options(list(by), query.by, empty="(headline)")
        + "</select></label>"
        if by
        else ""
    )
    return (
        f"<form method='get' action='{e(action)}' class='filters' id='filters'>{hide}"
        f"<label>search <input type='search' name='q' id='q' value='{e(query.text)}' "
        "placeholder='text in queries and answers'></label>"
        "<label>task <select name='task' id='task'>"
        + _options(sorted({t for t in index.tasks if t}), query.task, empty="(any)")
        + "</select></label><label>judge <select name='judge' id='judge'>"
        + _options(index.judges, query.judge, empty="(any)")
        + "</select></label>"
        f"<label><input type='checkbox' name='failed' value='1' id='failed'"
        f"{' checked' if query.failed else ''}> failed judgments</label>"
        f"<label><input type='checkbox' name='missing' value='1' id='missing'"
        f"{' checked' if query.missing else ''}> missing scores</label>"
        "<label>judge vs people <select name='dis' id='dis'>"
        + _options(list(index.disagreements), query.disagree, empty="(no filter)")
        + f"</select></label><label>at least <input name='dis_min' id='dis_min' size='5' "
        f"value='{e(_blank(query.disagree_min))}'></label>"
        f"{range_rows}{by_field}"
        "<label>sort by <select name='sort' id='sort'>"
        + _options(index.sortable(), query.sort, empty="(file order)")
        + f"</select></label><label><input type='checkbox' name='desc' value='1' id='desc'"
        f"{' checked' if query.desc else ''}> largest first</label>"
        "<button type='submit' id='apply'>apply</button></form>"
    )


def _blank(value: float | None) -> str:
    return "" if value is None else repr(value).removesuffix(".0")


def shown_columns(index: RunIndex, query: Query) -> list[str]:
    """The score columns the table shows: the headline, then every column the view filters
    or sorts on, then the users' satisfaction and the failed and missing counts."""
    names = [index.headline] if index.headline else []
    names += [r.column for r in query.ranges]
    names += [query.disagree] if query.disagree else []
    names += [query.sort] if query.sort in index.columns else []
    names += [n for n in FIXED_COLUMNS if n != "n_turns"]
    return list(dict.fromkeys(names))


def _pager(total: int, query: Query, href: Any) -> str:
    pages = max(1, -(-total // query.size))
    parts = [f"<span id='count'>{total} sessions</span> · page {min(query.page, pages)} of {pages}"]
    if query.page > 1:
        parts.append(f"<a rel='prev' id='prev' href='{e(href(page=query.page - 1))}'>previous</a>")
    if query.page < pages:
        parts.append(f"<a rel='next' id='next' href='{e(href(page=query.page + 1))}'>next</a>")
    return f"<p class='pager'>{' · '.join(parts)}</p>"


def _header_cell(name: str, title: str, query: Query, href: Any) -> str:
    desc = query.sort == name and not query.desc
    mark = (" ▼" if query.desc else " ▲") if query.sort == name else ""
    return (
        f"<th><a class='sort' data-column='{e(name)}' "
        f"href='{e(href(sort=name, desc=desc, page=1))}'>{e(title)}{mark}</a></th>"
    )


def table_page(
    index: RunIndex, run: int, query: Query, rows: np.ndarray, links: Links, *, limit_note: str = ""
) -> str:
    """The session table of run ``run``: the filters, a page of ``rows`` (all of them in a
    bundle) and a link to each session."""

    def href(**changes: object) -> str:
        return links.table(run, query_string(query, **changes))

    columns = shown_columns(index, query)
    start = 0 if links.bundle else (query.page - 1) * query.size
    page_rows = rows if links.bundle else rows[start : start + query.size]
    head = "".join(
        _header_cell(n, t, query, href)
        for n, t in (("session_id", "session"), ("task_type", "task"), ("n_turns", "turns"))
    ) + "".join(_header_cell(n, column_title(n), query, href) for n in columns)
    body = []
    for row in page_rows:
        row = int(row)
        sid = index.ids[row]
        target = links.session(run, sid)
        name = f"<a href='{e(target)}'>{e(sid)}</a>" if target else e(sid)
        label = links.label(SESSION_SATISFACTION, label_key(SESSION_SATISFACTION, sid))
        cells = "".join(f"<td class='num'>{_cell(n, index.columns[n][row])}</td>" for n in columns)
        tools = (
            f"<a class='permalink' href='#{e(anchor('row', sid))}' title='link to this row'>#</a>"
        )
        if label:
            tools += f" <a class='label' href='{e(label)}'>label</a>"
        body.append(
            f"<tr id='{e(anchor('row', sid))}' data-session='{e(sid)}' data-href='{e(target or '')}'>"
            f"<td dir='auto'>{name} {tools}<div class='query' dir='auto'>"
            f"{e(index.first_query[row][:200])}</div></td>"
            f"<td dir='auto'>{e(index.tasks[row])}</td>"
            f"<td class='num'>{int(index.columns['n_turns'][row])}</td>{cells}</tr>"
        )
    form = (
        filter_form(index, query, links.table(run, ""), hidden={"run": str(run)})
        if not links.bundle
        else ""
    )
    pager = (
        _pager(len(rows), query, href)
        if not links.bundle
        else (f"<p class='pager'><span id='count'>{len(rows)} sessions</span>{e(limit_note)}</p>")
    )
    search = _BUNDLE_SEARCH if links.bundle else ""
    content = (
        f"<header><h1>{e(index.title)}</h1><p>{len(index)} sessions · "
        f"{e(_view_words(query))}</p></header><main>{form}{search}{pager}"
        f"<table class='sessions' id='sessions'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>{pager if not links.bundle else ''}</main>"
    )
    data = None
    if links.bundle:
        data = {
            "view": query_string(query.with_(page=1)),
            "rows": [
                {"session_id": index.ids[int(r)], "text": index.text[int(r)][:4000]}
                for r in page_rows
            ],
        }
    return page(f"{index.title}: sessions", content, links, data=data)


_BUNDLE_SEARCH = (
    "<p><label>search these rows <input type='search' id='q' "
    "placeholder='text in queries and answers'></label></p>"
)


def _cell(name: str, value: float) -> str:
    """A counted column (failed judgments, missing scores) as a whole number."""
    if name in ("failed", "missing") and value == value:
        return str(int(value))
    return figure(value)


def _view_words(query: Query) -> str:
    """The view's filters in words (shown in the header, and so in every screenshot)."""
    words = []
    if query.disagree:
        words.append(
            f"{column_title(query.disagree)} at least {_blank(query.disagree_min) or 'any'}"
        )
    words += [
        f"{r.column} in [{_blank(r.low) or '…'}, {_blank(r.high) or '…'}]" for r in query.ranges
    ]
    for on, what in (
        (query.task, f"task {query.task}"),
        (query.judge, f"judge {query.judge}"),
        (query.failed, "failed judgments"),
        (query.missing, "missing scores"),
        (query.text, f"text “{query.text}”"),
    ):
        if on:
            words.append(what)
    return "filtered: " + "; ".join(words) if words else "all sessions"


def compare_page(cmp: Comparison, query: Query, rows: np.ndarray, links: Links) -> str:
    """The sessions every run has, side by side on one score, the most changed first."""

    def href(**changes: object) -> str:
        return links.compare(query_string(query, **changes))

    score = query.by or cmp.by_default
    start = 0 if links.bundle else (query.page - 1) * query.size
    page_rows = rows if links.bundle else rows[start : start + query.size]
    names = [r.title for r in cmp.runs]
    head = "".join(f"<th>{e(n)}</th>" for n in names) + "".join(
        f"<th>Δ {e(n)}</th>" for n in names[1:]
    )
    body = []
    for row in page_rows:
        data = cmp.row_json(int(row), score)
        sid = data["session_id"]
        target = links.compare_session(sid)
        name = f"<a href='{e(target)}'>{e(sid)}</a>" if target else e(sid)
        values = "".join(f"<td class='num'>{figure(v)}</td>" for v in data["values"])
        deltas = "".join(f"<td class='num delta'>{figure(v)}</td>" for v in data["deltas"])
        body.append(
            f"<tr id='{e(anchor('row', sid))}' data-session='{e(sid)}' "
            f"data-href='{e(target or '')}'><td dir='auto'>{name} "
            f"<a class='permalink' href='#{e(anchor('row', sid))}'>#</a></td>"
            f"<td dir='auto'>{e(data['task_type'] or '')}</td>{values}{deltas}"
            f"<td class='num'>{data['changed_scores']}</td></tr>"
        )
    base = cmp.base
    form = (
        _BUNDLE_SEARCH if links.bundle else filter_form(base, query, "/", hidden={}, by=cmp.shared)
    )
    pager = "" if links.bundle else _pager(len(rows), query, href)
    content = (
        f"<header><h1>{e(' vs '.join(names))}</h1><p id='aligned'>{int(cmp.common.sum())} "
        f"sessions in all {len(cmp.runs)} runs (of {', '.join(str(len(r)) for r in cmp.runs)}); "
        f"ordered by the change of {e(score or '—')}, the largest first · {e(_view_words(query))}"
        f"</p></header><main>{form}{pager or f'<p><span id=count>{len(rows)} sessions</span></p>'}"
        f"<table class='sessions compare' id='sessions'><thead><tr><th>session</th><th>task</th>"
        f"{head}<th>scores changed (of {len(cmp.shared)})</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></main>"
    )
    data_block = None
    if links.bundle:
        data_block = {
            "view": query_string(query.with_(page=1)),
            "rows": [
                {"session_id": base.ids[int(r)], "text": base.text[int(r)][:4000]}
                for r in page_rows
            ],
        }
    return page(" vs ".join(names), content, links, data=data_block)
