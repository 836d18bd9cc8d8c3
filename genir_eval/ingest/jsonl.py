"""The canonical JSONL format: one :func:`~genir_eval.records.session_to_dict` object a line.

Reading validates every line before building records, and names file, line and field
(``turns[2].segments[0].end``) when something is off:

* required: ``session_id`` (non-empty string) and ``turns`` (non-empty list); each turn needs
  ``index`` (1-based and consecutive), ``query`` and ``response_text`` (strings);
* ``version`` may be left out (read as 1) but may not be newer than this package's
  :data:`~genir_eval.records.SCHEMA_VERSION`;
* a turn's ``statements``, ``links`` and ``segments`` may be left out for hand-written logs:
  the response is then one statement without citations, no links, and segments cut from
  ``response_text`` (:func:`~genir_eval.ingest.segments.split_segments`); a missing
  ``language`` is detected from the text;
* citations and link ids are integers; a segment's offsets lie within ``response_text``
  and its ``text`` is ``response_text[start:end]``;
* gold: satisfactions are numbers from 1 to 5 (or null), link usefulness integers 0-3,
  citation usefulness integers 0-3, and per-turn gold lists have one entry per turn.

Unknown keys, at the top level or in nested objects, are accepted and ignored, so files
written by a newer minor version or carrying extra bookkeeping still load.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from genir_eval.errors import InputError
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.result import LoadResult
from genir_eval.ingest.segments import split_segments
from genir_eval.records import SCHEMA_VERSION, Session, session_from_dict, session_to_dict

__all__ = ["read_jsonl", "write_jsonl", "validate_session_dict"]


class _FieldError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def write_jsonl(sessions: Iterable[Session], path_or_file: str | Path | IO[str]) -> int:
    """Write one canonical JSON object per session (UTF-8, not ASCII-escaped); returns count."""
    if isinstance(path_or_file, (str, Path)):
        with Path(path_or_file).open("w", encoding="utf-8", newline="\n") as stream:
            return _write(sessions, stream)
    return _write(sessions, path_or_file)


def _write(sessions: Iterable[Session], stream: IO[str]) -> int:
    count = 0
    for session in sessions:
        stream.write(json.dumps(session_to_dict(session), ensure_ascii=False) + "\n")
        count += 1
    return count


def read_jsonl(path: str | Path, *, skip_invalid: bool = False) -> LoadResult:
    """Read and validate a canonical JSONL file (blank lines are allowed)."""
    path = Path(path)
    result = LoadResult()
    seen: dict[str, int] = {}
    try:
        with path.open(encoding="utf-8-sig") as stream:
            for line_number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    session = _read_line(line)
                    if session.session_id in seen:
                        raise _FieldError(
                            "session_id",
                            f"duplicate session id {session.session_id!r} "
                            f"(first on line {seen[session.session_id]})",
                        )
                    seen[session.session_id] = line_number
                    result.sessions.append(session)
                except _FieldError as problem:
                    error = InputError(
                        problem.message, path=str(path), line=line_number, column=problem.field
                    )
                    if not skip_invalid:
                        raise error from None
                    result.skipped.append(error)
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text: {error}", path=str(path)) from None
    return result


def _read_line(line: str) -> Session:
    try:
        data = json.loads(line)
    except ValueError as error:
        raise _FieldError("(line)", f"not valid JSON: {error}") from None
    _validate(data)
    data = dict(data)
    if "language" not in data:
        data["language"] = detect_language(
            " ".join(t["query"] + " " + t["response_text"] for t in data["turns"])
        )
    turns = []
    for turn in data["turns"]:
        turn = dict(turn)
        turn.setdefault("statements", [{"text": turn["response_text"], "citations": []}])
        turn.setdefault("links", [])
        if "segments" not in turn:
            turn["segments"] = [
                {"text": s.text, "start": s.start, "end": s.end}
                for s in split_segments(turn["response_text"])
            ]
        turns.append(turn)
    data["turns"] = turns
    return session_from_dict(data)


def validate_session_dict(data: Any) -> None:
    """Check one decoded JSONL object; :class:`InputError` names the first bad field."""
    try:
        _validate(data)
    except _FieldError as problem:
        raise InputError(problem.message, column=problem.field) from None


def _validate(data: Any) -> None:
    if not isinstance(data, dict):
        raise _FieldError("(line)", "expected a JSON object")
    version = data.get("version", 1)
    if not _is_int(version) or not 1 <= version <= SCHEMA_VERSION:
        raise _FieldError(
            "version", f"version {version!r} is not one this genir-eval reads (1-{SCHEMA_VERSION})"
        )
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise _FieldError("session_id", "required: a non-empty string")
    for key in ("source", "language", "task_type", "intent"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise _FieldError(key, "expected a string or null")
    if "meta" in data and data["meta"] is not None and not isinstance(data["meta"], dict):
        raise _FieldError("meta", "expected an object")
    turns = data.get("turns")
    if not isinstance(turns, list) or not turns:
        raise _FieldError("turns", "required: a non-empty list of turns")
    for position, turn in enumerate(turns, start=1):
        _validate_turn(turn, position, f"turns[{position - 1}]")
    gold = data.get("gold")
    if gold is not None:
        _validate_gold(gold, len(turns))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise _FieldError(field, "expected a list")
    return value


def _object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _FieldError(field, "expected an object")
    return value


def _string(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise _FieldError(field, "required: a string")
    return value


def _validate_turn(turn: Any, position: int, where: str) -> None:
    turn = _object(turn, where)
    index = turn.get("index")
    if not _is_int(index) or index != position:
        raise _FieldError(
            f"{where}.index", f"turn indexes are 1-based and consecutive: expected {position}"
        )
    _string(turn.get("query"), f"{where}.query")
    text = _string(turn.get("response_text"), f"{where}.response_text")
    for i, statement in enumerate(_list(turn.get("statements", []), f"{where}.statements")):
        at = f"{where}.statements[{i}]"
        statement = _object(statement, at)
        _string(statement.get("text"), f"{at}.text")
        citations = _list(statement.get("citations", []), f"{at}.citations")
        if not all(_is_int(c) for c in citations):
            raise _FieldError(f"{at}.citations", "citations are integer link ids")
    for i, link in enumerate(_list(turn.get("links", []), f"{where}.links")):
        at = f"{where}.links[{i}]"
        link = _object(link, at)
        if not _is_int(link.get("id")):
            raise _FieldError(f"{at}.id", "required: an integer")
        _string(link.get("url"), f"{at}.url")
        _string(link.get("title"), f"{at}.title")
    for i, segment in enumerate(_list(turn.get("segments", []), f"{where}.segments")):
        at = f"{where}.segments[{i}]"
        segment = _object(segment, at)
        start: Any = segment.get("start")
        end: Any = segment.get("end")
        if not _is_int(start) or not _is_int(end) or not 0 <= start <= end <= len(text):
            raise _FieldError(
                f"{at}.start",
                f"offsets {start!r}-{end!r} are not within response_text (0-{len(text)})",
            )
        if _string(segment.get("text"), f"{at}.text") != text[start:end]:
            raise _FieldError(f"{at}.text", "differs from response_text[start:end]")


def _per_turn(gold: dict[str, Any], key: str, n_turns: int) -> Sequence[Any] | None:
    value = gold.get(key)
    if value is None:
        return None
    value = _list(value, f"gold.{key}")
    if len(value) != n_turns:
        raise _FieldError(f"gold.{key}", f"has {len(value)} entries for {n_turns} turn(s)")
    return value


def _validate_gold(gold: Any, n_turns: int) -> None:
    gold = _object(gold, "gold")
    satisfaction = gold.get("session_satisfaction")
    if satisfaction is not None and (not _is_number(satisfaction) or not 1 <= satisfaction <= 5):
        raise _FieldError("gold.session_satisfaction", f"{satisfaction!r} is not a number 1-5")
    for i, value in enumerate(_per_turn(gold, "query_satisfaction", n_turns) or ()):
        if value is not None and (not _is_number(value) or not 1 <= value <= 5):
            raise _FieldError(f"gold.query_satisfaction[{i}]", f"{value!r} is not a number 1-5")
    for i, labels in enumerate(_per_turn(gold, "link_usefulness", n_turns) or ()):
        at = f"gold.link_usefulness[{i}]"
        for key, label in _object(labels, at).items():
            if not str(key).isdigit():
                raise _FieldError(at, f"key {key!r} is not a citation number")
            if not _is_int(label) or not 0 <= label <= 3:
                raise _FieldError(f"{at}.{key}", f"{label!r} is not an integer 0-3")
    for i, statements in enumerate(_per_turn(gold, "citation_usefulness", n_turns) or ()):
        at = f"gold.citation_usefulness[{i}]"
        for j, labels in enumerate(_list(statements, at)):
            for label in _list(labels, f"{at}[{j}]"):
                if not _is_int(label) or not 0 <= label <= 3:
                    raise _FieldError(f"{at}[{j}]", f"{label!r} is not an integer 0-3")
    for key in ("useful_spans_user", "useful_spans_external"):
        for i, spans in enumerate(_per_turn(gold, key, n_turns) or ()):
            if not all(isinstance(s, str) for s in _list(spans, f"gold.{key}[{i}]")):
                raise _FieldError(f"gold.{key}[{i}]", "spans are strings")
    dissatisfaction = gold.get("dissatisfaction")
    if dissatisfaction is not None:
        dissatisfaction = _object(dissatisfaction, "gold.dissatisfaction")
        _list(dissatisfaction.get("choices", []), "gold.dissatisfaction.choices")
        _string(dissatisfaction.get("additional", ""), "gold.dissatisfaction.additional")
