"""Nuggets as an editable artefact: the records and the two JSONL layouts they are read from
and written to.

genir-eval's layout, one nugget a line (what a run writes to ``nuggets.jsonl`` in its folder,
for people to review, edit or replace)::

    {"version": 1, "qid": "2024-58819", "query": "...", "nugget_id": "n1",
     "text": "...", "importance": "vital", "origin": "..."}

The TREC layout of the ``nuggetizer`` package (Pradeep et al., arXiv 2411.09607), one query
a line, its nuggets in order, without ids::

    {"qid": "2024-58819", "query": "...", "nuggets": [{"text": "...", "importance": "vital"}]}

Both are read by :func:`read_nugget_file` (a line is told by its keys); a nuggetizer line's
nuggets get the ids ``n1``, ``n2``, ... by position, and every key either layout does not
name is kept (on the query for a nuggetizer line, on the nugget otherwise) and written back,
so a nuggetizer file read and written with :func:`write_nuggetizer_file` is the same file
(the same JSON values line by line). A bad line is an :class:`~genir_eval.errors.InputError`
naming the file, the line and the field: no id, an importance other than ``vital`` or
``okay``, a nugget id twice for one query, a query given on two lines of a nuggetizer file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.paths import output_file, why_missing
from genir_eval.records import NUGGET_IMPORTANCE as IMPORTANCE

__all__ = [
    "NUGGET_FILE_VERSION",
    "Nugget",
    "NuggetSet",
    "read_nugget_file",
    "nugget_rows",
    "write_nugget_file",
    "write_nuggetizer_file",
]

NUGGET_FILE_VERSION = 1
_OWN_KEYS = ("version", "qid", "query", "nugget_id", "text", "importance", "origin")
_TREC_KEYS = ("qid", "query", "nuggets")
_TREC_NUGGET_KEYS = ("text", "importance")


@dataclass(frozen=True)
class Nugget:
    """One atomic fact a good answer to the query holds; ``origin`` says where it came from
    (the sources it was made from and by which judge, or a file people wrote)."""

    id: str
    text: str
    importance: str
    origin: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NuggetSet:
    """A query's nuggets, in order (vital first once scored); ``extra`` keeps a
    nuggetizer line's other keys."""

    qid: str
    query: str
    nuggets: tuple[Nugget, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: the file line the query was first given on (0: not read from a file)
    line: int = 0

    @property
    def vital(self) -> tuple[Nugget, ...]:
        return tuple(n for n in self.nuggets if n.importance == "vital")


#: Where a line is: the file and the line number.
_At = tuple[str, int]


def _error(message: str, at: _At, column: str | None = None) -> InputError:
    return InputError(message, path=at[0], line=at[1], column=column)


def _text(value: Any, what: str, at: _At, column: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _error(f"{what} must be a non-empty string, got {value!r}", at, column)
    return value.strip()


def _importance(value: Any, at: _At) -> str:
    if value not in IMPORTANCE:
        raise _error(
            f"importance must be one of {', '.join(IMPORTANCE)}, got {value!r}", at, "importance"
        )
    return str(value)


def _qid(value: Any, at: _At) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return _text(value, "the query id 'qid'", at, "qid")


def _trec_line(row: Mapping[str, Any], at: _At) -> NuggetSet:
    qid = _qid(row.get("qid"), at)
    listed = row.get("nuggets")
    if not isinstance(listed, list):
        raise _error("'nuggets' must be a list", at, "nuggets")
    nuggets = []
    for position, entry in enumerate(listed, start=1):
        here = f"nugget {position}"
        if not isinstance(entry, Mapping):
            raise _error(f"{here} must be an object", at, "nuggets")
        text = _text(entry.get("text"), f"{here}: 'text'", at, "text")
        importance = _importance(entry.get("importance"), at)
        extra = {k: v for k, v in entry.items() if k not in _TREC_NUGGET_KEYS}
        nuggets.append(Nugget(f"n{position}", text, importance, "nuggetizer file", extra))
    query = row.get("query")
    extra = {k: v for k, v in row.items() if k not in _TREC_KEYS}
    if not isinstance(query, str):
        raise _error("'query' must be a string", at, "query")
    return NuggetSet(qid, query, tuple(nuggets), extra, at[1])


def _own_line(row: Mapping[str, Any], at: _At) -> tuple[str, str, Nugget]:
    if row.get("version") != NUGGET_FILE_VERSION:
        raise _error(
            f"unsupported version {row.get('version')!r} (expected {NUGGET_FILE_VERSION})",
            at,
            "version",
        )
    qid = _qid(row.get("qid"), at)
    nugget_id = row.get("nugget_id")
    if isinstance(nugget_id, int) and not isinstance(nugget_id, bool):
        nugget_id = str(nugget_id)
    nugget_id = _text(nugget_id, "the nugget id 'nugget_id'", at, "nugget_id")
    text = _text(row.get("text"), "'text'", at, "text")
    importance = _importance(row.get("importance"), at)
    origin = row.get("origin", "")
    query = row.get("query", "")
    if not isinstance(origin, str):
        raise _error("'origin' must be a string", at, "origin")
    if not isinstance(query, str):
        raise _error("'query' must be a string", at, "query")
    extra = {k: v for k, v in row.items() if k not in _OWN_KEYS}
    return qid, query, Nugget(nugget_id, text, importance, origin, extra)


def _rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    where = str(path)
    if not path.is_file():
        raise InputError(f"nugget file: {why_missing(path)}", path=where)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at byte {error.start + 1})",
            path=where,
        ) from None
    except OSError as error:
        raise InputError(f"cannot read it: {error.strerror or error}", path=where) from None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise InputError(f"not valid JSON: {error}", path=where, line=number) from None
        if not isinstance(row, dict):
            raise InputError("expected a JSON object", path=where, line=number)
        yield number, row


def read_nugget_file(path: str | os.PathLike[str]) -> dict[str, NuggetSet]:
    """The nuggets of a file in either layout (see the module docstring), by query id, in
    the file's order; lines of both layouts may not be mixed."""
    where = Path(path)
    found: dict[str, NuggetSet] = {}
    layout = None
    for number, row in _rows(where):
        this = "nuggetizer" if "nuggets" in row and "nugget_id" not in row else "genir-eval"
        if layout is not None and this != layout:
            raise InputError(
                f"a {this} line in a {layout} file: one file holds one layout",
                path=str(where),
                line=number,
            )
        layout = this
        if this == "nuggetizer":
            got = _trec_line(row, (str(where), number))
            if got.qid in found:
                raise InputError(
                    f"query {got.qid!r} is on line {found[got.qid].line} already",
                    path=str(where),
                    line=number,
                    column="qid",
                )
            found[got.qid] = got
            continue
        qid, query, nugget = _own_line(row, (str(where), number))
        known = found.get(qid)
        if known is None:
            found[qid] = NuggetSet(qid, query, (nugget,), line=number)
            continue
        if any(n.id == nugget.id for n in known.nuggets):
            raise InputError(
                f"nugget id {nugget.id!r} appears twice for query {qid!r}",
                path=str(where),
                line=number,
                column="nugget_id",
            )
        found[qid] = replace(known, nuggets=(*known.nuggets, nugget), query=known.query or query)
    return found


def nugget_rows(nugget_set: NuggetSet) -> list[dict[str, Any]]:
    """The lines of genir-eval's layout for one query."""
    return [
        {
            "version": NUGGET_FILE_VERSION,
            "qid": nugget_set.qid,
            "query": nugget_set.query,
            "nugget_id": n.id,
            "text": n.text,
            "importance": n.importance,
            "origin": n.origin,
            **dict(n.extra),
        }
        for n in nugget_set.nuggets
    ]


def _write_lines(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with output_file(path, "the nugget file") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def write_nugget_file(sets: Iterable[NuggetSet], path: str | os.PathLike[str]) -> Path:
    """Write ``sets`` in genir-eval's layout, one nugget a line."""
    return _write_lines(Path(path), (row for s in sets for row in nugget_rows(s)))


def write_nuggetizer_file(sets: Iterable[NuggetSet], path: str | os.PathLike[str]) -> Path:
    """Write ``sets`` in the nuggetizer layout, one query a line (ids are left out: a
    nugget's place is its id there)."""
    rows = (
        {
            "qid": s.qid,
            "query": s.query,
            "nuggets": [{"text": n.text, "importance": n.importance, **n.extra} for n in s.nuggets],
            **dict(s.extra),
        }
        for s in sets
    )
    return _write_lines(Path(path), rows)
