"""Load the URGE dataset's CSV layout (one row = one session) into :class:`Session` records.

URGE (a field study of Perplexity in Chinese) stores each session's turns, response HTML and
gold labels in JSON or Python-literal cells; see ``../shared/urge/README.md`` for the columns.
A session is ``urge-<0-based data row>``; errors name the file, the 1-based data row (and the
physical line it starts on), the column and the session id.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest.html import parse_response_html
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.result import LoadResult
from genir_eval.records import Dissatisfaction, Gold, Session, Turn

__all__ = ["URGE_COLUMNS", "load_urge", "parse_cell"]

URGE_COLUMNS = (
    "conversation",
    "search intent",
    "task_type",
    "session-level satisfaction",
    "query-level satisfaction",
    "link_usefulness",
    "citation_usefulness",
    "useful_text_user_self",
    "useful_text_external_annotation",
    "dis_sat_reason",
    "response_html",
)
_USER = "用户"
_ASSISTANT = "AI助手"
_TURN_KEY = re.compile(r"\D*(\d+)$")  # "回合3" -> 3


class _CellError(Exception):
    """A problem with one cell; the row loop adds file, row and session id."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column = column
        self.message = message


def parse_cell(text: str) -> Any:
    """The value a cell holds as JSON, or failing that as a Python literal (never ``eval``)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as error:
        raise ValueError(f"neither JSON nor a Python literal ({error})") from None


def load_urge(path: str | Path, *, skip_invalid: bool = False) -> LoadResult:
    """Read an URGE-layout CSV; with ``skip_invalid`` bad rows go to ``skipped`` instead."""
    path = Path(path)
    result = LoadResult()
    # Response HTML cells exceed the csv module's default 128 KiB field limit.
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))
    try:
        with path.open(encoding="utf-8-sig", newline="") as stream:
            reader = csv.reader(stream)
            header = next(reader, None)
            if header is None:
                raise InputError("the file is empty; expected an URGE CSV header", path=str(path))
            missing = [c for c in URGE_COLUMNS if c not in header]
            if missing:
                raise InputError(
                    f"missing URGE column(s): {', '.join(map(repr, missing))}",
                    path=str(path),
                    line=1,
                    column=missing[0],
                )
            positions = {name: header.index(name) for name in URGE_COLUMNS}
            for number, line, cells in _rows(reader):
                session_id = f"urge-{number}"
                try:
                    if len(cells) != len(header):
                        raise _CellError(
                            header[min(len(cells), len(header) - 1)],
                            f"the row has {len(cells)} cells for {len(header)} columns",
                        )
                    row = {name: cells[i] for name, i in positions.items()}
                    result.sessions.append(_session(session_id, row))
                except _CellError as problem:
                    error = InputError(
                        f"session {session_id}: {problem.message}",
                        path=str(path),
                        row=number + 1,
                        line=line,
                        column=problem.column,
                    )
                    if not skip_invalid:
                        raise error from None
                    result.skipped.append(error)
    except csv.Error as error:
        raise InputError(f"malformed CSV: {error}", path=str(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text: {error}", path=str(path)) from None
    return result


def _rows(reader: Any) -> Iterator[tuple[int, int, list[str]]]:
    """(0-based data row, line the row starts on, cells), skipping blank lines."""
    number = 0
    start = reader.line_num + 1
    for cells in reader:
        if cells:
            yield number, start, cells
            number += 1
        start = reader.line_num + 1


def _cell(row: Mapping[str, str], column: str, *, required: bool = True) -> Any:
    text = row[column]
    if not text.strip():
        if required:
            raise _CellError(column, "the cell is empty")
        return None
    try:
        return parse_cell(text)
    except ValueError as error:
        raise _CellError(column, f"cannot read the cell: {error}") from None


def _session(session_id: str, row: Mapping[str, str]) -> Session:
    conversation = _cell(row, "conversation")
    if not isinstance(conversation, dict) or not conversation:
        raise _CellError("conversation", "expected a non-empty object of turns")
    try:
        ordered = sorted(conversation.items(), key=lambda kv: _turn_number(kv[0]))
    except ValueError as error:
        raise _CellError("conversation", str(error)) from None
    htmls = _cell(row, "response_html")
    if not isinstance(htmls, list) or not all(isinstance(h, str) for h in htmls):
        raise _CellError("response_html", "expected a list of HTML strings, one per turn")
    if len(htmls) != len(ordered):
        raise _CellError(
            "response_html",
            f"{len(htmls)} response(s) of HTML for {len(ordered)} turn(s) of conversation",
        )
    turns = []
    for index, ((key, exchange), html) in enumerate(zip(ordered, htmls, strict=True), start=1):
        if not isinstance(exchange, dict) or not isinstance(exchange.get(_USER), str):
            raise _CellError("conversation", f"turn {key!r} has no {_USER!r} text")
        try:
            parsed = parse_response_html(html)
        except InputError as error:
            raise _CellError("response_html", f"turn {index}: {error.message}") from None
        turns.append(
            Turn(
                index=index,
                query=exchange[_USER],
                response_text=parsed.response_text,
                statements=parsed.statements,
                links=parsed.links,
                segments=parsed.segments,
            )
        )
    n = len(turns)
    text = " ".join(t.query + " " + t.response_text for t in turns)
    return Session(
        session_id=session_id,
        turns=tuple(turns),
        source="urge",
        language=detect_language(text),
        task_type=row["task_type"].strip() or None,
        intent=row["search intent"].strip() or None,
        gold=Gold(
            session_satisfaction=_satisfaction(
                _cell(row, "session-level satisfaction", required=False),
                "session-level satisfaction",
            ),
            query_satisfaction=_per_turn(
                row, "query-level satisfaction", n, lambda v: _satisfaction(v, "")
            ),
            link_usefulness=_per_turn(row, "link_usefulness", n, _link_labels),
            citation_usefulness=_per_turn(row, "citation_usefulness", n, _citation_labels),
            useful_spans_user=_spans(row, "useful_text_user_self", n),
            useful_spans_external=_spans(row, "useful_text_external_annotation", n),
            dissatisfaction=_dissatisfaction(row),
        ),
    )


def _turn_number(key: str) -> int:
    match = _TURN_KEY.match(str(key))
    if match is None:
        raise ValueError(f"turn key {key!r} carries no turn number")
    return int(match.group(1))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _satisfaction(value: Any, column: str) -> float | None:
    if value is None:
        return None
    if not _is_number(value) or not 1 <= value <= 5:
        raise _CellError(column, f"satisfaction {value!r} is not a number from 1 to 5")
    return value


def _per_turn(
    row: Mapping[str, str], column: str, n_turns: int, convert: Callable[[Any], Any]
) -> tuple[Any, ...] | None:
    value = _cell(row, column, required=False)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != n_turns:
        length = len(value) if isinstance(value, list) else "no"
        raise _CellError(column, f"expected a list of {n_turns} turn(s), found {length} entries")
    converted = []
    for index, item in enumerate(value, start=1):
        try:
            converted.append(convert(item))
        except _CellError as error:
            raise _CellError(column, f"turn {index}: {error.message}") from None
    return tuple(converted)


def _link_labels(value: Any) -> dict[int, int]:
    if isinstance(value, str):
        try:
            value = parse_cell(value) if value.strip() else {}
        except ValueError as error:
            raise _CellError("", f"cannot read a turn's labels: {error}") from None
    if not isinstance(value, dict):
        raise _CellError("", f"expected an object of citation number -> 0-3, got {value!r}")
    labels = {}
    for key, label in value.items():
        if not str(key).strip().isdigit():
            raise _CellError("", f"citation number {key!r} is not an integer")
        if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label <= 3:
            raise _CellError("", f"link usefulness {label!r} is not an integer from 0 to 3")
        labels[int(key)] = label
    return labels


def _citation_labels(value: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(s, list) for s in value):
        raise _CellError("", f"expected a list of statements' label lists, got {value!r}")
    for statement in value:
        for label in statement:
            if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label <= 3:
                raise _CellError("", f"citation usefulness {label!r} is not an integer 0-3")
    return tuple(tuple(s) for s in value)


def _spans(row: Mapping[str, str], column: str, n_turns: int) -> tuple[tuple[str, ...], ...] | None:
    value = _cell(row, column, required=False)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _CellError(column, "expected an object of turn number -> useful text units")
    per_turn: list[tuple[str, ...]] = [() for _ in range(n_turns)]
    for key, units in value.items():
        if not str(key).isdigit() or not 1 <= int(key) <= n_turns:
            raise _CellError(column, f"turn {key!r} is not a turn number from 1 to {n_turns}")
        if isinstance(units, dict):
            try:
                ordered = [units[k] for k in sorted(units, key=int)]
            except ValueError:
                raise _CellError(column, f"turn {key}: unit keys are not integers") from None
        elif isinstance(units, list):
            ordered = units
        else:
            raise _CellError(column, f"turn {key}: expected an object or list of text units")
        if not all(isinstance(u, str) for u in ordered):
            raise _CellError(column, f"turn {key}: a text unit is not a string")
        per_turn[int(key) - 1] = tuple(ordered)
    return tuple(per_turn)


def _dissatisfaction(row: Mapping[str, str]) -> Dissatisfaction | None:
    column = "dis_sat_reason"
    value = _cell(row, column, required=False)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _CellError(column, "expected an object with 'choices' and 'additional'")
    choices = value.get("choices") or []
    if not isinstance(choices, list):
        raise _CellError(column, "'choices' is not a list")
    additional = value.get("additional") or ""
    return Dissatisfaction(choices=tuple(str(c) for c in choices), additional=str(additional))
