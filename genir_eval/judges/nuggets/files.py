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
(the same JSON values line by line). A nuggetizer entry's own key that genir-eval's layout
uses for itself (``version``, ``origin``, ...) is kept under ``nuggetizer`` in genir-eval's
layout, so a run's ``nuggets.jsonl`` always reads back; an entry naming a query (``qid``)
names its line's query or is refused: a nugget is only ever filed under its own query.

Importance is ``vital`` or ``okay`` (TREC 2024 RAG), or a **grade** as evaluations that
grade their nuggets publish it (a number, e.g. 1-4 with 4 the most important): the grade is
kept as given (on :attr:`Nugget.grade`, written back as read) and the nugget is ``vital``
when its grade reaches the file's vital mark, by a rule :func:`vital_mark` states: the mark
given (the judge's option ``vital_grade``), else the middle of the file's grades (1-4: 2.5,
so 3 and 4 are vital). One file grades its nuggets one way: words or numbers.

A bad line is an :class:`~genir_eval.errors.InputError` naming the file, the line and the
field: no id, an importance that is neither word nor finite number, a nugget id twice for
one query, a query given on two lines of a nuggetizer file, text that is not Unicode (a
lone surrogate, which no UTF-8 file can hold).
"""

from __future__ import annotations

import json
import math
import os
import re
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
    "vital_mark",
    "GivenNuggets",
    "read_given_nuggets",
    "UNGRADED",
    "VITAL_GRADE",
    "write_nugget_file",
    "write_nuggetizer_file",
]

NUGGET_FILE_VERSION = 1
_OWN_KEYS = ("version", "qid", "query", "nugget_id", "text", "importance", "origin")
_TREC_KEYS = ("qid", "query", "nuggets")
_TREC_NUGGET_KEYS = ("text", "importance")
#: Where genir-eval's layout keeps a nuggetizer entry's keys that it uses for itself.
_ENTRY_KEYS = "nuggetizer"
#: The key a run's nugget file records its vital mark under, on each graded line.
VITAL_GRADE = "vital_grade"
#: What :func:`vital_mark` says of a file whose importance is words.
UNGRADED = "importance given as vital/okay"
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Nugget:
    """One atomic fact a good answer to the query holds; ``origin`` says where it came from
    (the sources it was made from and by which judge, or a file people wrote)."""

    id: str
    text: str
    #: ``vital`` or ``okay``: as given, or derived from :attr:`grade` (:func:`vital_mark`)
    importance: str
    origin: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: the importance grade as the file gives it (``None``: the file says vital or okay)
    grade: float | int | None = None


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


def _importance(value: Any, at: _At) -> str | float | int:
    """A nugget's importance as given: ``vital``/``okay``, or a finite number (a numeric
    string such as ``"2"`` read as its number)."""
    if value in IMPORTANCE:
        return str(value)
    if isinstance(value, str):
        try:
            value = float(value) if "." in value or "e" in value.lower() else int(value)
        except ValueError:
            pass
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    raise _error(
        f"importance must be one of {', '.join(IMPORTANCE)} or a grade (a finite number), "
        f"got {value!r}",
        at,
        "importance",
    )


def _unicode(value: Any, at: _At, column: str) -> None:
    """Refuse text holding a lone UTF-16 surrogate (``"\\ud800"`` in JSON): it could not be
    written to the run's UTF-8 files."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise _error(
                "holds a lone UTF-16 surrogate (not Unicode text; UTF-8 cannot hold it)",
                at,
                column,
            )
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            _unicode(key, at, column)
            _unicode(inner, at, f"{column}.{key}" if column else str(key))
    elif isinstance(value, list):
        for inner in value:
            _unicode(inner, at, column)


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
        if "qid" in entry and str(entry["qid"]) != qid:
            raise _error(
                f"{here} names query {entry['qid']!r} on the line of query {qid!r}: a nugget "
                "is filed under its line's query only",
                at,
                "qid",
            )
        extra = {k: v for k, v in entry.items() if k not in _TREC_NUGGET_KEYS}
        nuggets.append(_graded(f"n{position}", text, importance, "nuggetizer file", extra))
    query = row.get("query")
    extra = {k: v for k, v in row.items() if k not in _TREC_KEYS}
    if not isinstance(query, str):
        raise _error("'query' must be a string", at, "query")
    return NuggetSet(qid, query, tuple(nuggets), extra, at[1])


def _graded(
    nugget_id: str, text: str, importance: str | float | int, origin: str, extra: dict[str, Any]
) -> Nugget:
    """A nugget as read: a grade is kept and its vital/okay settled by :func:`vital_mark`."""
    if isinstance(importance, str):
        return Nugget(nugget_id, text, importance, origin, extra)
    return Nugget(nugget_id, text, "okay", origin, extra, grade=importance)


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
    return qid, query, _graded(nugget_id, text, importance, origin, extra)


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
        _unicode(row, (where, number), "")
        yield number, row


def read_nugget_file(
    path: str | os.PathLike[str], *, vital_grade: float | None = None
) -> dict[str, NuggetSet]:
    """The nuggets of a file in either layout (see the module docstring), by query id, in
    the file's order; lines of both layouts may not be mixed. Graded nuggets are vital from
    ``vital_grade`` on (``None``: the middle of the file's grades, :func:`vital_mark`)."""
    where = Path(path)
    found = _read(where)
    mark, _ = vital_mark(found.values(), vital_grade)
    if mark is None:
        return found
    return {
        qid: replace(
            s,
            nuggets=tuple(
                n if n.grade is None else replace(n, importance=_vital(n.grade, mark))
                for n in s.nuggets
            ),
        )
        for qid, s in found.items()
    }


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _vital(grade: float, mark: float) -> str:
    return "vital" if grade >= mark else "okay"


def vital_mark(
    sets: Iterable[NuggetSet], vital_grade: float | None = None
) -> tuple[float | None, str]:
    """The grade from which a graded file's nuggets are vital, and the rule in words
    (``None`` and "importance given as vital/okay" for a file of words): ``vital_grade``
    when given, else the mark the file's lines record (``vital_grade``, as a run writes its
    ``nuggets.jsonl``, so the file read back splits as the run did), else the middle of the
    lowest and highest grade in the file."""
    graded = [n for s in sets for n in s.nuggets if n.grade is not None]
    if not graded:
        return None, UNGRADED
    grades = [float(n.grade) for n in graded if n.grade is not None]
    low, high = min(grades), max(grades)
    kept = {n.extra.get(VITAL_GRADE) for n in graded}
    written = next(iter(kept)) if len(kept) == 1 else None
    if vital_grade is None and isinstance(written, (int, float)) and _number(written):
        return float(written), (
            f"importance graded {low:g}-{high:g}; vital: grade >= {written:g} (the file's "
            f"{VITAL_GRADE}, as the run that wrote it used)"
        )
    if vital_grade is not None:
        return float(vital_grade), (
            f"importance graded {low:g}-{high:g}; vital: grade >= {vital_grade:g} (vital_grade)"
        )
    mark = (low + high) / 2
    return mark, (
        f"importance graded {low:g}-{high:g}; vital: grade >= {mark:g}, the middle of the "
        "file's grades (set vital_grade to change it)"
    )


def _read(where: Path) -> dict[str, NuggetSet]:
    found: dict[str, NuggetSet] = {}
    layout = None
    graded: tuple[bool, int] | None = None
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
                assigned = "answer_text" in row or any("assignment" in n.extra for n in got.nuggets)
                hint = (
                    " (this reads as the nuggetizer's assign output, one line per answer: give "
                    "its create output, each query's nuggets once)"
                    if assigned
                    else ""
                )
                raise InputError(
                    f"query {got.qid!r} is on line {found[got.qid].line} already{hint}",
                    path=str(where),
                    line=number,
                    column="qid",
                )
            graded = _one_way(got.nuggets, graded, (str(where), number))
            found[got.qid] = got
            continue
        qid, query, nugget = _own_line(row, (str(where), number))
        graded = _one_way((nugget,), graded, (str(where), number))
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


def _one_way(
    nuggets: Iterable[Nugget], graded: tuple[bool, int] | None, at: _At
) -> tuple[bool, int] | None:
    """Refuse a line whose nuggets' importance is graded where the file's first said
    vital/okay, or the reverse; the file's way and the line it was first seen on."""
    for nugget in nuggets:
        this = nugget.grade is not None
        if graded is not None and this != graded[0]:
            raise _error(
                f"importance {_given_importance(nugget)!r} where line {graded[1]} "
                f"{'grades its nuggets' if graded[0] else 'says vital/okay'}: one file grades "
                "its nuggets one way",
                at,
                "importance",
            )
        graded = graded or (this, at[1])
    return graded


def _given_importance(nugget: Nugget) -> Any:
    return nugget.grade if nugget.grade is not None else nugget.importance


@dataclass(frozen=True)
class GivenNuggets:
    """A nugget file given to a run: its nugget sets, its vital mark (``None``: importance
    given as words) and what the run should say of it, a line each."""

    sets: dict[str, NuggetSet]
    mark: float | None
    notes: tuple[str, ...]


def read_given_nuggets(
    path: str, *, vital_grade: float | None = None, qids: set[str] | None = None
) -> GivenNuggets:
    """Read the nugget file a run is given: against the run's query ids (``None``:
    unknown) say in one line how many of its queries the input does not have (a
    collection's file serves the queries the input has), and refuse a file that shares no
    query with the input (a located error at its first query)."""
    sets = read_nugget_file(path, vital_grade=vital_grade)
    mark, rule = vital_mark(sets.values(), vital_grade)
    notes = [f"nugget file {path}: {rule}"] if rule != UNGRADED else []
    if qids is not None:
        unused = [q for q in sets if q not in qids]
        if unused and len(unused) == len(sets):
            first = next(iter(sets.values()))
            raise InputError(
                f"none of the file's {len(unused)} queries is in the run's input (e.g. "
                f"{first.qid!r}; a query id is the session id, or meta.topic, with "
                "#<turn> in a session of several turns)",
                path=path,
                line=first.line or None,
                column="qid",
            )
        without = sorted(q for q in qids if q not in sets)
        notes.append(
            f"nugget file {path}: {len(sets) - len(unused)} of its {len(sets)} queries used; "
            f"{len(unused)} not in the run's input"
            + (f" (e.g. {', '.join(repr(q) for q in unused[:3])})" if unused else "")
            + (f"; {len(without)} of the input's queries have no nuggets" if without else "")
        )
    return GivenNuggets(sets, mark, tuple(notes))


def nugget_rows(nugget_set: NuggetSet) -> list[dict[str, Any]]:
    """The lines of genir-eval's layout for one query: a nugget's extra keys that the layout
    uses for itself go under ``nuggetizer`` (they never replace the line's own)."""
    rows = []
    for n in nugget_set.nuggets:
        own: dict[str, Any] = {
            "version": NUGGET_FILE_VERSION,
            "qid": nugget_set.qid,
            "query": nugget_set.query,
            "nugget_id": n.id,
            "text": n.text,
            "importance": _given_importance(n),
            "origin": n.origin,
        }
        kept = {k: v for k, v in n.extra.items() if k not in _OWN_KEYS}
        clashing = {k: v for k, v in n.extra.items() if k in _OWN_KEYS}
        if clashing:
            kept[_ENTRY_KEYS] = {**dict(kept.get(_ENTRY_KEYS) or {}), **clashing}
        rows.append({**own, **kept})
    return rows


def _entry(nugget: Nugget) -> dict[str, Any]:
    """A nugget as a nuggetizer entry: the keys kept under ``nuggetizer`` back in place."""
    extra = dict(nugget.extra)
    nested = extra.pop(_ENTRY_KEYS, None)
    if isinstance(nested, Mapping):
        extra.update(nested)
    elif nested is not None:
        extra[_ENTRY_KEYS] = nested
    return {"text": nugget.text, "importance": _given_importance(nugget), **extra}


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
            "nuggets": [_entry(n) for n in s.nuggets],
            **dict(s.extra),
        }
        for s in sets
    )
    return _write_lines(Path(path), rows)
