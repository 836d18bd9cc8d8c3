"""What the session table shows, as the URL's query string says it: filters, sort and page.

Every filter and the sort live in the query string, so a view is a link: ``q`` (text in the
queries and answers), ``task``, ``judge`` (the sessions it judged), ``failed`` / ``missing``
(``1``: sessions with a failed judgment, or a missing score), ``dis`` and ``dis_min`` (a
judge-vs-people disagreement column, at least this large), ranges (``col``, ``lo``, ``hi``
repeated, one range each), ``sort`` and ``desc``, ``page`` and ``size``. A compared view adds
``by`` (the score whose change orders it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlencode

import numpy as np

from genir_eval.runner.web.index import RunIndex

__all__ = ["Range", "Query", "QueryError", "parse_query", "query_string", "select", "MAX_SIZE"]

MAX_SIZE = 500
DEFAULT_SIZE = 50


class QueryError(ValueError):
    """A query string the viewer refuses, naming the parameter."""


@dataclass(frozen=True)
class Range:
    column: str
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Query:
    text: str = ""
    task: str = ""
    judge: str = ""
    failed: bool = False
    missing: bool = False
    disagree: str = ""
    disagree_min: float | None = None
    ranges: tuple[Range, ...] = ()
    sort: str = ""
    desc: bool = False
    page: int = 1
    size: int = DEFAULT_SIZE
    by: str = ""

    def with_(self, **changes: object) -> Query:
        return replace(self, **changes)  # type: ignore[arg-type]


def _one(params: Mapping[str, Sequence[str]], key: str) -> str:
    values = params.get(key) or [""]
    return values[-1].strip()


def _number(text: str, key: str) -> float | None:
    if text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise QueryError(f"{key}: a number, got {text!r}") from None
    if not math.isfinite(value):
        raise QueryError(f"{key}: a finite number, got {text!r}")
    return value


def _whole(text: str, key: str, default: int, top: int) -> int:
    if text == "":
        return default
    if not text.isdigit() or not 1 <= int(text) <= top:
        raise QueryError(f"{key}: a whole number from 1 to {top}, got {text!r}")
    return int(text)


def _flag(text: str, key: str) -> bool:
    if text not in ("", "0", "1"):
        raise QueryError(f"{key}: 1 or 0, got {text!r}")
    return text == "1"


def _known(value: str, key: str, known: Sequence[str]) -> str:
    if value and value not in known:
        shown = ", ".join(list(known)[:12]) + (", ..." if len(known) > 12 else "")
        raise QueryError(f"{key}: no {value!r} in this run (known: {shown or 'none'})")
    return value


def parse_query(params: Mapping[str, Sequence[str]], index: RunIndex) -> Query:
    """The query string's ``params`` (each key's values, as ``parse_qs`` gives them) checked
    against ``index``; a :class:`QueryError` names the first wrong parameter."""
    columns = list(index.columns)
    cols, lows, highs = (list(params.get(k) or []) for k in ("col", "lo", "hi"))
    if not len(lows) <= len(cols) or not len(highs) <= len(cols):
        raise QueryError("lo, hi: one of each at most per col (a range is col, lo, hi)")
    ranges = []
    for n, column in enumerate(cols):
        column = column.strip()
        low = _number(lows[n].strip() if n < len(lows) else "", "lo")
        high = _number(highs[n].strip() if n < len(highs) else "", "hi")
        if not column:
            if low is not None or high is not None:
                raise QueryError("col: name the column a range is on")
            continue
        ranges.append(Range(_known(column, "col", columns), low, high))
    text = _one(params, "q")
    if len(text) > 500:
        raise QueryError("q: at most 500 characters")
    return Query(
        text=text,
        task=_known(_one(params, "task"), "task", sorted(set(index.tasks))),
        judge=_known(_one(params, "judge"), "judge", index.judges),
        failed=_flag(_one(params, "failed"), "failed"),
        missing=_flag(_one(params, "missing"), "missing"),
        disagree=_known(_one(params, "dis"), "dis", list(index.disagreements)),
        disagree_min=_number(_one(params, "dis_min"), "dis_min"),
        ranges=tuple(ranges),
        sort=_known(_one(params, "sort"), "sort", index.sortable()),
        desc=_flag(_one(params, "desc"), "desc"),
        page=_whole(_one(params, "page"), "page", 1, 10**9),
        size=_whole(_one(params, "size"), "size", DEFAULT_SIZE, MAX_SIZE),
        by=_known(_one(params, "by"), "by", index.scores),
    )


def query_string(query: Query, **changes: object) -> str:
    """``query`` (with ``changes``) as a query string: only what differs from the default, in
    a fixed order, so one view has one link."""
    q = query.with_(**changes) if changes else query
    pairs: list[tuple[str, str]] = []
    for key, value in (("q", q.text), ("task", q.task), ("judge", q.judge)):
        if value:
            pairs.append((key, value))
    if q.failed:
        pairs.append(("failed", "1"))
    if q.missing:
        pairs.append(("missing", "1"))
    if q.disagree:
        pairs.append(("dis", q.disagree))
    if q.disagree_min is not None:
        pairs.append(("dis_min", _text(q.disagree_min)))
    for r in q.ranges:
        pairs += [("col", r.column), ("lo", _text(r.low)), ("hi", _text(r.high))]
    if q.sort:
        pairs.append(("sort", q.sort))
    if q.desc:
        pairs.append(("desc", "1"))
    if q.by:
        pairs.append(("by", q.by))
    if q.size != DEFAULT_SIZE:
        pairs.append(("size", str(q.size)))
    if q.page != 1:
        pairs.append(("page", str(q.page)))
    return urlencode(pairs)


def _text(value: float | None) -> str:
    return "" if value is None else repr(value).removesuffix(".0")


def mask(query: Query, index: RunIndex) -> np.ndarray:
    """The sessions every filter of ``query`` but the text keeps."""
    keep = np.ones(len(index), dtype=bool)
    with np.errstate(invalid="ignore"):
        for r in query.ranges:
            values = index.columns[r.column]
            keep &= ~np.isnan(values)
            if r.low is not None:
                keep &= values >= r.low
            if r.high is not None:
                keep &= values <= r.high
        if query.disagree:
            values = index.columns[query.disagree]
            keep &= ~np.isnan(values)
            if query.disagree_min is not None:
                keep &= values >= query.disagree_min
    if query.task:
        keep &= np.fromiter((t == query.task for t in index.tasks), bool, len(index))
    if query.judge:
        judged = index.judged_by.get(query.judge)
        keep &= judged if judged is not None else False
    if query.failed:
        failed = index.failed_by.get(query.judge) if query.judge else None
        keep &= (failed if failed is not None else index.columns["failed"]) > 0
    if query.missing:
        keep &= index.columns["missing"] > 0
    return keep


def select(query: Query, index: RunIndex, keep: np.ndarray | None = None) -> np.ndarray:
    """The rows ``query`` keeps, in its order (``keep`` narrows them further): sorted by its
    column (a disagreement filter sorts by its size when no column is named, the largest
    first), missing values last either way."""
    keep = mask(query, index) if keep is None else keep & mask(query, index)
    sort, desc = query.sort, query.desc
    if not sort and query.disagree:
        sort, desc = query.disagree, True
    if sort:
        order = index.order(sort, desc=desc)
        rows = order[keep[order]]
    else:
        rows = np.flatnonzero(keep)
    if query.text:
        needle = query.text.lower()
        text = index.text
        rows = rows[np.fromiter((needle in text[i] for i in rows), bool, len(rows))]
    return rows
