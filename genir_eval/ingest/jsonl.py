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
* a turn whose ``response_text`` carries citation markers (``[1]``, ``[1][2]``, ``[1, 2]``
  outside code, as in the Markdown format: :mod:`genir_eval.ingest.markers`) and has no
  ``statements`` gets its statements from the markers, like a Markdown answer: the markers
  cite the turn's ``links`` and leave the text. Such a turn is refused, with a message
  saying why, when it has no ``links``, a marker cites an id ``links`` lacks, or it gives
  ``segments`` (their offsets would point into the text with the markers);
* strict JSON: an object may not repeat a key, ``NaN`` and ``Infinity`` are not numbers;
  ``meta`` nests at most 64 levels and holds valid Unicode text;
* then the rules every format shares (:mod:`genir_eval.ingest.validate`): no phantom citations,
  each link id once, gold only for the turn's links and statements, a non-empty response.
* citations and link ids are integers; a segment's offsets lie within ``response_text``
  and its ``text`` is ``response_text[start:end]``;
* gold: satisfactions are numbers from 1 to 5 (or null), link usefulness integers 0-3,
  citation usefulness integers 0-3, citation support ``"full"``, ``"partial"`` or ``"none"``
  per statement and cited link, thumbs ``"up"``/``"down"`` (or true/false, 1/0) or
  null, feedback texts strings or null, nugget assignments per turn a map of nugget id to
  ``"support"``, ``"partial_support"`` or ``"not_support"`` (or null: not labelled), and
  per-turn gold lists have one entry per turn;
* a link's ``text`` (its source passage) may be left out or null, else it is a string.

Unknown keys, at the top level or in nested objects, are accepted and ignored, so files
written by a newer minor version or carrying extra bookkeeping still load; but a key that is
a known one misspelt (``link_usefullness``, ``Session_ID``) is an error naming the key it
resembles, since its data would be lost without a word.

Lines are read one at a time (:func:`iter_jsonl`); every problem of a line, whatever raised
it, is an error of that line, and with ``skip_invalid`` exactly that line is left out.
"""

from __future__ import annotations

import difflib
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from genir_eval.errors import InputError
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.markers import MAX_ID_DIGITS, find_markers, marker_pieces
from genir_eval.ingest.response import Citation, build_response
from genir_eval.ingest.result import LoadResult
from genir_eval.ingest.segments import split_segments
from genir_eval.ingest.stream import Lines, SeenIds, SessionStream, unexpected
from genir_eval.ingest.validate import short_repr, validate_session
from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS, NUGGET_GOLD
from genir_eval.paths import output_file
from genir_eval.records import (
    NUGGET_ASSIGNMENTS as NUGGET_LABELS,
)
from genir_eval.records import (
    SCHEMA_VERSION,
    SUPPORT_LEVELS,
    THUMBS_VALUE,
    Session,
    session_from_dict,
    session_to_dict,
)
from genir_eval.unique_keys import RepeatedKey, unique_keys

__all__ = ["iter_jsonl", "read_jsonl", "write_jsonl", "validate_session_dict"]

_MAX_META_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


class _FieldError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def write_jsonl(sessions: Iterable[Session], path_or_file: str | Path | IO[str] | IO[bytes]) -> int:
    """Write one canonical JSON object per session (UTF-8, not ASCII-escaped); returns count.

    Sessions are written as they come, so an iterator of sessions is never held in memory.
    A path is written in binary; a file object may be text or binary.
    """
    if isinstance(path_or_file, (str, Path)):
        with output_file(path_or_file, "the sessions file", binary=True) as stream:
            return _write(sessions, stream)
    if isinstance(path_or_file, io.TextIOBase):
        return _write_text(sessions, path_or_file)
    return _write(sessions, path_or_file)  # type: ignore[arg-type]


def session_line(session: Session) -> bytes:
    """One session's canonical JSONL line, UTF-8 bytes ending in a newline.

    orjson writes it; an object it refuses (an integer beyond 64 bits in ``meta``) goes
    through the json module instead, which writes the same JSON.
    """
    data = session_to_dict(session)
    try:
        return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (_ENCODE(data) + "\n").encode("utf-8")


def _write(sessions: Iterable[Session], stream: IO[bytes]) -> int:
    count = 0
    write = stream.write
    for session in sessions:
        write(session_line(session))
        count += 1
    return count


def _write_text(sessions: Iterable[Session], stream: IO[str]) -> int:
    count = 0
    for session in sessions:
        stream.write(session_line(session).decode("utf-8"))
        count += 1
    return count


def iter_jsonl(path: str | Path, *, skip_invalid: bool = False) -> SessionStream:
    """The sessions of a canonical JSONL file, validated, one line at a time."""
    path = Path(path)
    return SessionStream(_items(path), path=path, format="jsonl", skip_invalid=skip_invalid)


def read_jsonl(path: str | Path, *, skip_invalid: bool = False) -> LoadResult:
    """Read and validate a canonical JSONL file (blank lines are allowed)."""
    stream = iter_jsonl(path, skip_invalid=skip_invalid)
    return LoadResult(sessions=list(stream), skipped=stream.skipped)


def _items(path: Path) -> Iterator[Session | InputError]:
    where = str(path)
    seen = SeenIds()
    with path.open("rb") as stream:
        lines = Lines(stream)
        for line in lines:
            number = lines.number
            if number in lines.bad:
                yield InputError(lines.bad.pop(number), path=where, line=number)
                continue
            if not line.strip():
                continue
            try:
                session = _read_line(line)
                validate_session(session, derived=True)  # statements, segments: checked
                seen.check(session.session_id, number)
            except _FieldError as problem:
                yield InputError(problem.message, path=where, line=number, column=problem.field)
            except InputError as problem:
                yield InputError(problem.message, path=where, line=number, column=problem.column)
            except Exception as problem:  # noqa: BLE001 - every problem of a line is located
                yield InputError(unexpected(problem), path=where, line=number)
            else:
                yield session


def _read_line(line: str) -> Session:
    try:
        data = json.loads(line, object_pairs_hook=unique_keys, parse_constant=_no_constant)
    except RepeatedKey as error:
        message = f"key {short_repr(error.key)} appears twice in one object"
        raise _FieldError("(line)", message) from None
    except RecursionError:
        raise _FieldError("(line)", "the JSON is nested too deeply to read") from None
    except ValueError as error:
        detail = " ".join(str(error).split())[:160]
        raise _FieldError("(line)", f"not valid JSON: {detail}") from None
    _validate(data)
    data = dict(data)
    if data.get("meta") is not None:
        _check_meta(data["meta"])
    turns = []
    for position, turn in enumerate(data["turns"], start=1):
        turn = dict(turn)
        if "statements" not in turn:
            _derive_statements(turn, position)
        turn.setdefault("links", [])
        if "segments" not in turn:
            turn["segments"] = [
                {"text": s.text, "start": s.start, "end": s.end}
                for s in split_segments(turn["response_text"])
            ]
        turns.append(turn)
    data["turns"] = turns
    if "language" not in data:
        data["language"] = detect_language(
            " ".join(t["query"] + " " + t["response_text"] for t in data["turns"])
        )
    return session_from_dict(data)


def _derive_statements(turn: dict[str, Any], position: int) -> None:
    """Statements for a turn that gives none: from its citation markers, or the whole text."""
    text = turn["response_text"]
    markers = find_markers(text) if "[" in text else []
    if not markers:
        turn["statements"] = [{"text": text, "citations": []}]
        return
    where = f"turns[{position - 1}]"
    shown = text[markers[0].start : markers[0].end].strip()
    if not turn.get("links"):
        raise _FieldError(
            f"{where}.links",
            f"turn {position}: response_text cites {shown} but the turn has no links; "
            "give links (statements are then derived from the markers) or statements",
        )
    if "segments" in turn:
        raise _FieldError(
            f"{where}.segments",
            f"turn {position}: response_text cites {shown} and has no statements; statements "
            "are derived from the markers only without segments (the markers leave the text)",
        )
    links: dict[int, dict[str, Any]] = {}
    for link in turn["links"]:
        links.setdefault(link["id"], link)

    def resolve(link_id: int, at: int) -> Citation:
        link = links.get(link_id)
        if link is None:
            raise _FieldError(
                f"{where}.response_text",
                f"turn {position}: response_text cites [{link_id}], which is not among the "
                "turn's links (statements are derived from the markers)",
            )
        return Citation(link_id, link["url"], link["title"])

    try:
        parsed = build_response(marker_pieces(text, resolve, markers))
    except InputError as error:
        raise _FieldError(f"{where}.response_text", f"turn {position}: {error.message}") from None
    turn["response_text"] = parsed.response_text
    turn["statements"] = [
        {"text": s.text, "citations": list(s.citations)} for s in parsed.statements
    ]
    turn["segments"] = [{"text": s.text, "start": s.start, "end": s.end} for s in parsed.segments]


def _check_meta(value: Any) -> None:
    """``meta`` nests at most 64 levels and holds only text that can be written as UTF-8.

    Walked iteratively: its depth is untrusted.
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                raise _FieldError(
                    "meta", "holds an unpaired surrogate; it is not valid Unicode text"
                )
        elif isinstance(item, (dict, list)):
            if depth > _MAX_META_DEPTH:
                raise _FieldError("meta", f"nests deeper than {_MAX_META_DEPTH} levels")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def _no_constant(name: str) -> Any:
    raise _FieldError("(line)", f"not valid JSON: {name} is not a JSON number")


def validate_session_dict(data: Any) -> None:
    """Check one decoded JSONL object; :class:`InputError` names the first bad field."""
    try:
        _validate(data)
    except _FieldError as problem:
        raise InputError(problem.message, column=problem.field) from None


_KEYS = {
    "": ("version", "session_id", "source", "language", "task_type", "intent", "turns", "gold")
    + ("meta",),
    "turn": ("index", "query", "response_text", "statements", "links", "segments"),
    "statement": ("text", "citations"),
    "link": ("id", "url", "title", "text"),
    "segment": ("text", "start", "end"),
    "gold": (
        "session_satisfaction",
        "query_satisfaction",
        LINK_USEFULNESS,
        "citation_usefulness",
        "useful_spans_user",
        "useful_spans_external",
        "dissatisfaction",
        CITATION_SUPPORT,
        "thumbs",
        "feedback_text",
        NUGGET_GOLD,
    ),
    "dissatisfaction": ("choices", "additional"),
}


def _no_misspelt_key(obj: dict[str, Any], kind: str, where: str) -> None:
    """Refuse an unknown key that is a known one misspelt (``link_usefullness``,
    ``Session_ID``): it would be ignored and its data lost without a word. Other unknown
    keys are accepted (newer files, bookkeeping; ``meta`` is the place for it)."""
    known = _KEYS[kind]
    for key in obj:
        if key in known or not isinstance(key, str):
            continue
        folded = key.strip().lower().replace("-", "_").replace(" ", "_")
        close = [k for k in known if k == folded] or difflib.get_close_matches(
            folded, known, n=1, cutoff=0.8
        )
        if close:
            field = f"{where}.{key}" if where else key
            raise _FieldError(
                field,
                f"unknown key {short_repr(key)}: did you mean {close[0]!r}? (a misspelt key "
                "would be ignored and its data lost)",
            )


def _validate(data: Any) -> None:
    if not isinstance(data, dict):
        raise _FieldError("(line)", "expected a JSON object")
    _no_misspelt_key(data, "", "")
    version = data.get("version", 1)
    if not _is_int(version) or not 1 <= version <= SCHEMA_VERSION:
        raise _FieldError(
            "version",
            f"version {short_repr(version)} is not one this genir-eval reads (1-{SCHEMA_VERSION})",
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
    """Types and offsets of one turn; the shared rules come after (validate_session)."""
    turn = _object(turn, where)
    _no_misspelt_key(turn, "turn", where)
    index = turn.get("index")
    if not _is_int(index) or index != position:
        raise _FieldError(
            f"{where}.index", f"turn indexes are 1-based and consecutive: expected {position}"
        )
    _string(turn.get("query"), f"{where}.query")
    text = _string(turn.get("response_text"), f"{where}.response_text")
    statements = _list(turn.get("statements", []), f"{where}.statements")
    for i, statement in enumerate(statements):
        if type(statement) is not dict or type(statement.get("text")) is not str:
            at = f"{where}.statements[{i}]"
            _string(_object(statement, at).get("text"), f"{at}.text")
        if len(statement) > 2:
            _no_misspelt_key(statement, "statement", f"{where}.statements[{i}]")
        citations = statement.get("citations", [])
        if type(citations) is not list or not all(type(c) is int for c in citations):
            at = f"{where}.statements[{i}].citations"
            _list(citations, at)
            raise _FieldError(at, "citations are integer link ids")
    joined = "".join(s["text"] for s in statements)
    if not joined.isascii() and _SURROGATE.search(joined):
        raise _FieldError(
            f"{where}.statements", "a statement holds an unpaired surrogate; it is not valid text"
        )
    if "statements" in turn:
        _statements_cover(statements, text, position, where)
    for i, link in enumerate(_list(turn.get("links", []), f"{where}.links")):
        at = f"{where}.links[{i}]"
        link = _object(link, at)
        _no_misspelt_key(link, "link", at)
        if not _is_int(link.get("id")):
            raise _FieldError(f"{at}.id", "required: an integer")
        _string(link.get("url"), f"{at}.url")
        _string(link.get("title"), f"{at}.title")
        if link.get("text") is not None:
            _string(link["text"], f"{at}.text")
    length = len(text)
    previous_end = 0
    for i, segment in enumerate(_list(turn.get("segments", []), f"{where}.segments")):
        if type(segment) is not dict:
            raise _FieldError(f"{where}.segments[{i}]", "expected an object")
        if len(segment) > 3:
            _no_misspelt_key(segment, "segment", f"{where}.segments[{i}]")
        start: Any = segment.get("start")
        end: Any = segment.get("end")
        if type(start) is not int or type(end) is not int or not 0 <= start <= end <= length:
            raise _FieldError(
                f"{where}.segments[{i}].start",
                f"offsets {short_repr(start)}-{short_repr(end)} are not within "
                f"response_text (0-{length})",
            )
        # Units are in reading order and apart: an overlapping or repeated unit would be
        # judged and counted twice.
        if start < previous_end:
            raise _FieldError(
                f"{where}.segments[{i}].start",
                f"offsets {start}-{end} overlap or precede the segment before it "
                f"(which ends at {previous_end}); segments are in text order and do not overlap",
            )
        if not text[start:end].strip():
            raise _FieldError(f"{where}.segments[{i}].text", "the segment holds no text")
        previous_end = end
        if segment.get("text") != text[start:end]:
            at = f"{where}.segments[{i}].text"
            _string(segment.get("text"), at)
            raise _FieldError(at, "differs from response_text[start:end]")


def _statements_cover(
    statements: list[dict[str, Any]], text: str, position: int, where: str
) -> None:
    """The statements are the response cut in order: each is found after the one before it,
    and no words or numbers are left between, before or after them (they would belong to no
    statement, so no metric would see them, nor any citation they carry).

    Citation markers (``[1]``, ``[1, 2]``) are matched on neither side, so a response that
    keeps its markers while its statements drop them (or the other way round) reads the
    same; what may lie between statements is whitespace, punctuation, symbols and list
    numbering (``1.``, ``2)``): a statement ``"Paris is the capital"`` cut from
    ``"Paris [1] is the capital."`` is whole.
    """
    bare = _MARKERS.sub("", text)
    at = 0
    for i, statement in enumerate(statements):
        piece = _MARKERS.sub("", statement["text"])
        if not piece.strip():
            raise _FieldError(
                f"{where}.statements[{i}].text", f"turn {position}: statement {i + 1} is empty"
            )
        found = bare.find(piece, at)
        if found < 0:
            found = bare.find(piece.strip(), at)
            piece = piece.strip()
        if found < 0:
            after = f" after statement {i}" if i else ""
            raise _FieldError(
                f"{where}.statements[{i}].text",
                f"turn {position}: statement {i + 1} {short_repr(statement['text'])} is not "
                f"in response_text{after}; statements are the response cut in order",
            )
        _no_gap(bare[at:found], f"{where}.statements[{i}].text", position, i)
        at = found + len(piece)
    _no_gap(bare[at:], f"{where}.statements", position, len(statements))


# Citation markers, matched on neither side of a statement (their spaces taken from the start
# of the run only, as in :mod:`~genir_eval.ingest.markers`: linear on long runs of spaces);
# list numbering at a line start.
_MARKERS = re.compile(r"(?<![ \t])[ \t]*(?<!\\)\[[0-9]+(?:[ \t]*,[ \t]*[0-9]+)*\](?!\()")
_LIST_NUMBER = re.compile(r"(?m)^[ \t]*[0-9]{1,9}[.)](?=\s|$)")


def _no_gap(between: str, field: str, position: int, before: int) -> None:
    rest = _LIST_NUMBER.sub("", between)
    if any(unicodedata.category(c)[0] in "LN" for c in rest):
        where = f"after statement {before}" if before else "before statement 1"
        raise _FieldError(
            field,
            f"turn {position}: response_text holds {short_repr(between.strip())} {where}, "
            "in no statement; statements are the response cut in order, leaving no words out",
        )


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
    _no_misspelt_key(gold, "gold", "gold")
    satisfaction = gold.get("session_satisfaction")
    if satisfaction is not None and (not _is_number(satisfaction) or not 1 <= satisfaction <= 5):
        raise _FieldError(
            "gold.session_satisfaction", f"{short_repr(satisfaction)} is not a number 1-5"
        )
    for i, value in enumerate(_per_turn(gold, "query_satisfaction", n_turns) or ()):
        if value is not None and (not _is_number(value) or not 1 <= value <= 5):
            raise _FieldError(
                f"gold.query_satisfaction[{i}]", f"{short_repr(value)} is not a number 1-5"
            )
    for i, labels in enumerate(_per_turn(gold, LINK_USEFULNESS, n_turns) or ()):
        at = f"gold.link_usefulness[{i}]"
        for key, label in _object(labels, at).items():
            if not (key.isascii() and key.isdigit() and len(key) <= MAX_ID_DIGITS):
                raise _FieldError(at, f"key {short_repr(key)} is not a citation number")
            if not _is_int(label) or not 0 <= label <= 3:
                raise _FieldError(f"{at}.{key}", f"{short_repr(label)} is not an integer 0-3")
    for i, statements in enumerate(_per_turn(gold, "citation_usefulness", n_turns) or ()):
        at = f"gold.citation_usefulness[{i}]"
        for j, labels in enumerate(_list(statements, at)):
            for label in _list(labels, f"{at}[{j}]"):
                if not _is_int(label) or not 0 <= label <= 3:
                    raise _FieldError(f"{at}[{j}]", f"{short_repr(label)} is not an integer 0-3")
    for key in ("useful_spans_user", "useful_spans_external"):
        for i, spans in enumerate(_per_turn(gold, key, n_turns) or ()):
            if not all(isinstance(s, str) for s in _list(spans, f"gold.{key}[{i}]")):
                raise _FieldError(f"gold.{key}[{i}]", "spans are strings")
    for i, statements in enumerate(_per_turn(gold, CITATION_SUPPORT, n_turns) or ()):
        at = f"gold.citation_support[{i}]"
        for j, verdicts in enumerate(_list(statements, at)):
            for key, verdict in _object(verdicts, f"{at}[{j}]").items():
                if not (key.isascii() and key.isdigit() and len(key) <= MAX_ID_DIGITS):
                    raise _FieldError(
                        f"{at}[{j}]", f"key {short_repr(key)} is not a citation number"
                    )
                if verdict not in SUPPORT_LEVELS:
                    raise _FieldError(
                        f"{at}[{j}].{key}",
                        f"{short_repr(verdict)} is not one of {', '.join(SUPPORT_LEVELS)}",
                    )
    for i, labels in enumerate(_per_turn(gold, NUGGET_GOLD, n_turns) or ()):
        if labels is None:
            continue  # a turn nobody labelled
        at = f"gold.{NUGGET_GOLD}[{i}]"
        for key, verdict in _object(labels, at).items():
            if not key.strip():
                raise _FieldError(at, "a nugget id is empty")
            if verdict not in NUGGET_LABELS:
                raise _FieldError(
                    f"{at}.{key}",
                    f"{short_repr(verdict)} is not one of {', '.join(NUGGET_LABELS)}",
                )
    for i, thumb in enumerate(_per_turn(gold, "thumbs", n_turns) or ()):
        key = thumb.strip().lower() if isinstance(thumb, str) else thumb
        known = isinstance(key, (str, bool, int)) and key in THUMBS_VALUE
        if thumb is not None and not known:
            raise _FieldError(
                f"gold.thumbs[{i}]", f"{short_repr(thumb)} is not up, down (or true/false, 1/0)"
            )
    for i, text in enumerate(_per_turn(gold, "feedback_text", n_turns) or ()):
        if text is not None:
            _string(text, f"gold.feedback_text[{i}]")
    dissatisfaction = gold.get("dissatisfaction")
    if dissatisfaction is not None:
        dissatisfaction = _object(dissatisfaction, "gold.dissatisfaction")
        _no_misspelt_key(dissatisfaction, "dissatisfaction", "gold.dissatisfaction")
        choices = _list(dissatisfaction.get("choices", []), "gold.dissatisfaction.choices")
        if not all(isinstance(c, str) for c in choices):
            raise _FieldError("gold.dissatisfaction.choices", "choices are strings")
        _string(dissatisfaction.get("additional", ""), "gold.dissatisfaction.additional")
