"""Load the URGE dataset's CSV layout (one row = one session) into :class:`Session` records.

URGE (a field study of Perplexity in Chinese) stores each session's turns, response HTML and
gold labels in JSON or Python-literal cells; see ``../shared/urge/README.md`` for the columns.
A session is ``urge-<0-based data row>``; errors name the file, the 1-based data row (and the
physical line it starts on), the column and the session id. Rows are read one at a time
(:func:`iter_urge`), and every problem of a row, whatever raised it, is an error of that row:
with ``skip_invalid`` exactly that row is left out.

Beyond the rules every format shares (:mod:`genir_eval.ingest.validate`): the header names
each URGE column exactly once; JSON and Python-literal cells may not repeat a key within an
object (a repeated turn key would silently replace a turn); conversation turn keys carry
turn numbers 1 to n, each once; numbers used as keys are ASCII digits.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest.ahead import ahead, spare_cpus
from genir_eval.ingest.html import parse_response_html
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.markers import citation_number
from genir_eval.ingest.response import ParsedResponse
from genir_eval.ingest.result import LoadResult
from genir_eval.ingest.stream import (
    Lines,
    SessionStream,
    csv_problem,
    lift_csv_field_limit,
    unexpected,
)
from genir_eval.ingest.validate import validate_session
from genir_eval.kind_names import LINK_USEFULNESS
from genir_eval.records import Dissatisfaction, Gold, Link, Segment, Session, Statement, Turn
from genir_eval.unique_keys import RepeatedKey, literal, unique_keys

__all__ = ["URGE_COLUMNS", "iter_urge", "load_urge", "parse_cell"]

URGE_COLUMNS = (
    "conversation",
    "search intent",
    "task_type",
    "session-level satisfaction",
    "query-level satisfaction",
    LINK_USEFULNESS,
    "citation_usefulness",
    "useful_text_user_self",
    "useful_text_external_annotation",
    "dis_sat_reason",
    "response_html",
)
_USER = "用户"
_ASSISTANT = "AI助手"
# "回合3" -> 3; a sign before the digits is not part of a turn key ("回合-1" is no turn 1)
_TURN_KEY = re.compile(r"(?:[^0-9]*[^0-9+\-])?([0-9]{1,9})$")
# URGE's dis_sat_reason choices: 0 satisfied, 1 links, 2 errors in the reply, 3 not
# comprehensive, 4 language quality, 5 misunderstood intent, 6 not authoritative, 7 not timely.
_DISSATISFACTION_CHOICES = frozenset("01234567")
_DISSATISFACTION_KEYS = ("choices", "additional")
# Where the shared rules' fields live in an URGE row.
_FIELD_COLUMNS = {
    "gold.session_satisfaction": "session-level satisfaction",
    "gold.query_satisfaction": "query-level satisfaction",
    "gold.link_usefulness": LINK_USEFULNESS,
    "gold.citation_usefulness": "citation_usefulness",
    "gold.useful_spans_user": "useful_text_user_self",
    "gold.useful_spans_external": "useful_text_external_annotation",
    "gold.dissatisfaction": "dis_sat_reason",
}


class _CellError(Exception):
    """A problem with one cell; the row loop adds file, row and session id."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column = column
        self.message = message


def _shorten(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_cell(text: str) -> Any:
    """The value a cell holds as JSON, or failing that as a Python literal (never ``eval``).

    An object (dict) that repeats a key is an error rather than a silent choice of one.
    """
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey:
        raise
    except ValueError:
        pass
    except RecursionError:
        raise ValueError("nested too deeply") from None
    try:
        return literal(text.strip())
    except RepeatedKey:
        raise
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as error:
        detail = " ".join(str(error).split())[:120]
        if detail.startswith("malformed node or string"):
            # ast names the node by its memory address; say what it means instead
            detail = "it is an expression, which is never evaluated, not a literal value"

        raise ValueError(f"neither JSON nor a Python literal ({detail})") from None


#: A file at least this large has its response HTML parsed in worker processes ahead of
#: the row loop (:mod:`genir_eval.ingest.ahead`); below it a pool's start-up (about 0.2 s)
#: would cost more than it saves.
AHEAD_MIN_BYTES = 8 << 20


def iter_urge(
    path: str | Path, *, skip_invalid: bool = False, workers: int | None = None
) -> SessionStream:
    """The sessions of an URGE-layout CSV, one row at a time.

    ``workers`` processes parse the response HTML of the rows ahead (``None``: one per
    spare CPU, at most two, for files of :data:`AHEAD_MIN_BYTES` or more; ``0``: none).
    The sessions and errors are the same with or without them.
    """
    path = Path(path)
    if workers is None:
        try:
            large = path.stat().st_size >= AHEAD_MIN_BYTES
        except OSError:
            large = False  # the open below names the problem
        workers = min(2, spare_cpus()) if large else 0
    return SessionStream(_items(path, workers), path=path, format="urge", skip_invalid=skip_invalid)


def load_urge(path: str | Path, *, skip_invalid: bool = False) -> LoadResult:
    """Read an URGE-layout CSV; with ``skip_invalid`` bad rows go to ``skipped`` instead."""
    stream = iter_urge(path, skip_invalid=skip_invalid)
    return LoadResult(sessions=list(stream), skipped=stream.skipped)


def _items(path: Path, workers: int = 0) -> Iterator[Session | InputError]:
    lift_csv_field_limit()
    where = str(path)
    with path.open("rb") as stream:
        lines = Lines(stream)
        rows = _checked_rows(lines)
        first = next(rows, None)
        if first is None:
            return
        _, start, cells, error, bad = first
        if error is not None or bad is not None:
            message = bad[1] if bad is not None else error
            raise InputError(f"cannot read the header: {message}", path=where, line=start)
        header = _header(cells, where, start)
        positions = {name: header.index(name) for name in URGE_COLUMNS}
        html_at = positions["response_html"]

        def html_cell(row: _Row) -> str | None:
            cells, error, bad = row[2], row[3], row[4]
            usable = error is None and bad is None and len(cells) == len(header)
            return cells[html_at] if usable else None

        for (number, start, cells, error, bad), responses in ahead(
            rows, html_cell, _parse_responses, workers=workers, preload=__name__
        ):
            session_id = f"urge-{number}"

            located = functools.partial(_located, where, session_id, number + 1, start)

            if bad is not None:
                yield located(bad[1], None, bad[0])
                continue
            if error is not None:
                yield located(f"malformed CSV: {error}", None)
                continue
            try:
                if len(cells) != len(header):
                    raise _CellError(
                        header[min(len(cells), len(header) - 1)],
                        f"the row has {len(cells)} cells for {len(header)} columns",
                    )
                session = _session(
                    session_id, {name: cells[i] for name, i in positions.items()}, responses
                )
                validate_session(session, derived=True)
            except _CellError as problem:
                yield located(problem.message, problem.column)
            except InputError as problem:
                yield located(problem.message, _column_of(problem.column))
            except Exception as problem:  # noqa: BLE001 - every problem of a row is located
                yield located(unexpected(problem), None)
            else:
                yield session


def _located(
    path: str,
    session_id: str,
    row: int,
    start: int,
    message: str,
    column: str | None,
    line: int | None = None,
) -> InputError:
    return InputError(
        f"session {session_id}: {message}",
        path=path,
        row=row,
        line=start if line is None else line,
        column=column,
    )


def _header(cells: list[str], where: str, line: int) -> list[str]:
    missing = [c for c in URGE_COLUMNS if c not in cells]
    if missing:
        raise InputError(
            f"missing URGE column(s): {', '.join(map(repr, missing))}",
            path=where,
            line=line,
            column=missing[0],
        )
    for name in URGE_COLUMNS:
        if cells.count(name) > 1:
            raise InputError(
                f"the header names column {name!r} {cells.count(name)} times",
                path=where,
                line=line,
                column=name,
            )
    return cells


def _column_of(field: str | None) -> str | None:
    """The CSV column holding a canonical field (:mod:`genir_eval.ingest.validate`)."""
    if field is None:
        return None
    if field.startswith("turns["):
        return "conversation" if field.endswith(".query") else "response_html"
    for prefix, column in _FIELD_COLUMNS.items():
        if field.startswith(prefix):
            return column
    return None


# (0-based data row, line it starts on, cells, csv error, first undecodable line in it)
_Row = tuple[int, int, list[str], "str | None", "tuple[int, str] | None"]


def _checked_rows(lines: Lines) -> Iterator[_Row]:
    """:func:`_rows` of ``lines``, each with the first line in it that was not UTF-8."""
    # strict: a quote left open at the end of the file is an error of its row, not a cell
    reader = csv.reader(lines, strict=True)
    for number, start, cells, error in _rows(reader):
        end = reader.line_num
        bad = lines.first_bad(start, end)
        lines.forget(end + 1)
        yield number, start, cells, error, bad


def _rows(reader: Any) -> Iterator[tuple[int, int, list[str], str | None]]:
    """(0-based data row, line the row starts on, cells, csv error) skipping blank lines.

    The header is the first row yielded (as data row -1). A row the csv module cannot read
    comes with its error, and reading goes on after it.
    """
    number = -1
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            stuck = reader.line_num < start
            yield number, start, [], csv_problem(error)
            number += 1
            if stuck:
                return
            start = reader.line_num + 1
            continue
        if cells and any(c.strip() for c in cells):
            yield number, start, cells, None
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


def _html_list(text: str) -> list[str]:
    """The response_html cell: one HTML string per turn."""
    htmls = _cell({"response_html": text}, "response_html")
    if not isinstance(htmls, list) or not all(isinstance(h, str) for h in htmls):
        raise _CellError("response_html", "expected a list of HTML strings, one per turn")
    return htmls


@dataclass(frozen=True)
class _Failed:
    """A response whose HTML was refused (the :class:`InputError`'s message)."""

    message: str


# A parsed response as sent back by a worker: plain tuples and the segments' offsets,
# which cross a process boundary several times faster than the records themselves.
_Packed = tuple[
    str, tuple[tuple[str, tuple[int, ...]], ...], tuple[tuple[int, str, str], ...], bytes
]


def _pack(parsed: ParsedResponse) -> _Packed:
    offsets = array("q")
    for segment in parsed.segments:
        offsets.append(segment.start)
        offsets.append(segment.end)
    return (
        parsed.response_text,
        tuple((s.text, s.citations) for s in parsed.statements),
        tuple((link.id, link.url, link.title) for link in parsed.links),
        offsets.tobytes(),
    )


def _unpack(packed: _Packed) -> ParsedResponse:
    text, statements, links, raw = packed
    offsets = array("q")
    offsets.frombytes(raw)
    pairs = zip(offsets[0::2], offsets[1::2], strict=True)
    return ParsedResponse(
        response_text=text,
        statements=tuple(Statement(body, cited) for body, cited in statements),
        links=tuple(Link(number, url, title) for number, url, title in links),
        segments=tuple(Segment(text[start:end], start, end) for start, end in pairs),
    )


def _parse_responses(cells: list[str | None]) -> list[Any]:
    """Worker side of :func:`ahead`: for each response_html cell, ``(problem with the
    cell, [])`` or ``(None, [packed response or _Failed, one per turn])``; ``None`` where
    the row is not to be read here (no cell, or a problem no rule foresaw, which the
    reader meets again itself)."""
    out: list[Any] = []
    for text in cells:
        if text is None:
            out.append(None)
            continue
        try:
            htmls = _html_list(text)
        except _CellError as problem:
            out.append((problem.message, []))
            continue
        except Exception:  # noqa: BLE001 - the reader meets it again and locates it
            out.append(None)
            continue
        turns: list[Any] = []
        try:
            for html in htmls:
                try:
                    turns.append(_pack(parse_response_html(html)))
                except InputError as error:
                    turns.append(_Failed(error.message))
        except Exception:  # noqa: BLE001 - as above
            out.append(None)
            continue
        out.append((None, turns))
    return out


def _session(session_id: str, row: Mapping[str, str], responses: Any = None) -> Session:
    """The session of one row; ``responses`` is what :func:`_parse_responses` made of its
    response_html cell in a worker (``None``: parse it here)."""
    conversation = _cell(row, "conversation")
    if not isinstance(conversation, dict) or not conversation:
        raise _CellError("conversation", "expected a non-empty object of turns")
    try:
        numbered: dict[int, tuple[str, Any]] = {}
        for key, exchange in conversation.items():
            turn_number = _turn_number(key)
            if turn_number in numbered:
                raise ValueError(
                    f"turn keys {numbered[turn_number][0]!r} and {key!r} both number turn "
                    f"{turn_number}"
                )
            numbered[turn_number] = (key, exchange)
    except ValueError as error:
        raise _CellError("conversation", str(error)) from None
    if sorted(numbered) != list(range(1, len(numbered) + 1)):
        found = ", ".join(map(str, sorted(numbered)[:10]))
        raise _CellError(
            "conversation", f"turn keys number turns {found}; expected 1 to {len(numbered)}"
        )
    ordered = [numbered[n] for n in sorted(numbered)]
    if responses is None:
        htmls: list[Any] = _html_list(row["response_html"])
    else:
        problem, htmls = responses
        if problem is not None:
            raise _CellError("response_html", problem)
    if len(htmls) != len(ordered):
        raise _CellError(
            "response_html",
            f"{len(htmls)} response(s) of HTML for {len(ordered)} turn(s) of conversation",
        )
    turns = []
    for index, ((key, exchange), html) in enumerate(zip(ordered, htmls, strict=True), start=1):
        if not isinstance(exchange, dict) or not isinstance(exchange.get(_USER), str):
            raise _CellError("conversation", f"turn {key!r} has no {_USER!r} text")
        if exchange.get(_ASSISTANT) is not None and not isinstance(exchange[_ASSISTANT], str):
            raise _CellError(
                "conversation",
                f"turn {key!r}: {_ASSISTANT!r} is {_shorten(exchange[_ASSISTANT])}, not text",
            )
        try:
            if isinstance(html, str):
                parsed = parse_response_html(html)
            elif isinstance(html, _Failed):
                raise InputError(html.message)
            else:
                parsed = _unpack(html)
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
            link_usefulness=_per_turn(row, LINK_USEFULNESS, n, _link_labels),
            citation_usefulness=_per_turn(row, "citation_usefulness", n, _citation_labels),
            useful_spans_user=_spans(row, "useful_text_user_self", n),
            useful_spans_external=_spans(row, "useful_text_external_annotation", n),
            dissatisfaction=_dissatisfaction(row),
        ),
    )


def _turn_number(key: str) -> int:
    match = _TURN_KEY.match(str(key))
    if match is None:
        raise ValueError(f"turn key {_shorten(key)} carries no turn number (ASCII digits)")
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
        try:
            number = citation_number(str(key))
        except InputError as error:
            raise _CellError("", f"link usefulness key: {error.message}") from None
        if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label <= 3:
            raise _CellError("", f"link usefulness {_shorten(label)} is not an integer from 0 to 3")
        if number in labels:
            raise _CellError("", f"link usefulness labels citation [{number}] twice")
        labels[number] = label
    return labels


def _citation_labels(value: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(s, list) for s in value):
        raise _CellError("", f"expected a list of statements' label lists, got {value!r}")
    for statement in value:
        for label in statement:
            if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label <= 3:
                raise _CellError("", f"citation usefulness {_shorten(label)} is not an integer 0-3")
    return tuple(tuple(s) for s in value)


def _spans(row: Mapping[str, str], column: str, n_turns: int) -> tuple[tuple[str, ...], ...] | None:
    value = _cell(row, column, required=False)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _CellError(column, "expected an object of turn number -> useful text units")
    per_turn: list[tuple[str, ...]] = [() for _ in range(n_turns)]
    listed: set[int] = set()
    for key, units in value.items():
        turn = _small_number(key)
        if turn is None or not 1 <= turn <= n_turns:
            raise _CellError(
                column, f"turn {_shorten(key)} is not a turn number from 1 to {n_turns}"
            )
        if turn in listed:
            raise _CellError(column, f"turn {turn} is listed twice")
        listed.add(turn)
        if isinstance(units, dict):
            numbers = {_small_number(k): k for k in units}
            if None in numbers or len(numbers) != len(units):
                raise _CellError(column, f"turn {turn}: unit keys are not distinct integers")
            ordered = [units[numbers[n]] for n in sorted(numbers)]  # type: ignore[type-var]
        elif isinstance(units, list):
            ordered = units
        else:
            raise _CellError(column, f"turn {key}: expected an object or list of text units")
        if not all(isinstance(u, str) for u in ordered):
            raise _CellError(column, f"turn {key}: a text unit is not a string")
        per_turn[turn - 1] = tuple(ordered)
    return tuple(per_turn)


def _small_number(key: Any) -> int | None:
    """``key`` as a number when it spells one in at most 9 ASCII digits, else ``None``."""
    text = str(key).strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def _dissatisfaction(row: Mapping[str, str]) -> Dissatisfaction | None:
    column = "dis_sat_reason"
    value = _cell(row, column, required=False)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _CellError(column, "expected an object with 'choices' and 'additional'")
    unknown = [key for key in value if key not in _DISSATISFACTION_KEYS]
    if unknown:
        raise _CellError(
            column,
            f"unknown key {_shorten(unknown[0])} (the keys are 'choices' and 'additional')",
        )
    choices = value.get("choices")
    if choices is None:
        choices = []
    if not isinstance(choices, (list, tuple)):
        raise _CellError(column, "'choices' is not a list")
    read: list[str] = []
    for choice in choices:
        # URGE writes the choices as digit strings ('2'); integers are read too
        text = str(choice) if type(choice) is int else choice
        if not isinstance(text, str) or text.strip() not in _DISSATISFACTION_CHOICES:
            raise _CellError(column, f"choice {_shorten(choice)} is not one of URGE's reasons 0-7")
        if text.strip() in read:
            raise _CellError(column, f"choice {text.strip()!r} is listed twice")
        read.append(text.strip())
    additional = value.get("additional")
    if additional is None:
        additional = ""
    if not isinstance(additional, str):
        raise _CellError(column, f"'additional' is {_shorten(additional)}, not text")
    return Dissatisfaction(choices=tuple(read), additional=additional)
