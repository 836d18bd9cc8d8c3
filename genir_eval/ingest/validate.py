"""The rules every session obeys, whatever format it was read from.

Each reader builds :class:`~genir_eval.records.Session` records its own way, then hands every
one to :func:`validate_session`, so a CSV row, a JSONL line and a Markdown session that break
the same rule fail with the same message. The error's ``column`` is the canonical field
(``turns[1].statements[0].citations``, ``gold.link_usefulness[1]``); readers translate it to
their own location (a CSV column, a Markdown line) with :func:`field_turn`.

The rules, checked in this order:

* the session id is a non-empty string without control characters (line breaks, escapes,
  bidirectional controls such as U+202E);
  turns are numbered 1, 2, ... in order;
* every turn has a non-empty query and a response with text, and that text has at least one
  statement (a response without citations is one statement without citations); a session
  whose ``meta.topic`` names the query it answers may leave its queries empty (the topic's
  nuggets, given in a nugget file, carry the query: assignment needs no more);
* link ids are citation numbers (integers from 0 to 10^18 - 1), each listed once per turn,
  each with a url; every citation of a statement is one of the turn's link ids (no phantom
  links: a link that is cited must be judged and reported);
* segments lie within the response text and repeat it exactly;
* text holds no unpaired UTF-16 surrogate (it could not be written back as UTF-8);
* gold: satisfactions are finite numbers from 1 to 5, usefulness labels integers 0-3,
  thumbs up (1), down (0) or none, per-turn lists have one entry per turn, link usefulness only labels the turn's links,
  citation usefulness has one entry per statement and one label per citation of it (a
  statement citing nothing: none, or in a turn citing nothing at most one, the
  response-level value), useful spans are
  non-blank pieces of their turn's response text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from genir_eval.errors import InputError
from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS
from genir_eval.records import SUPPORT_LEVELS, Gold, Session, Turn

__all__ = [
    "MAX_LINK_ID",
    "validate_session",
    "field_turn",
    "short_repr",
    "id_as_read",
    "has_surrogate",
]

# Citation numbers are small in practice; the bound keeps ids within a signed 64-bit integer
# for every consumer of the JSONL output.
MAX_LINK_ID = 10**18 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
_TURN_FIELD = re.compile(r"turns\[(\d+)\]")
# control characters, line and paragraph separators, and the bidirectional controls (U+061C,
# U+200E-U+200F, U+202A-U+202E, U+2066-U+2069): an RLO in an id printed on a terminal
# reverses the rest of the line (Boucher & Anderson 2021, "Trojan Source")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


# Characters that show nothing and are not format characters (Cf): the combining grapheme
# joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors, the variation
# selectors (Unicode's Default_Ignorable_Code_Point property, less Cf)
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)


def id_as_read(session_id: str) -> str:
    """``session_id`` as a person reads it: in Unicode's composed form (NFC), without the
    characters that show nothing (format characters such as U+200B ZERO WIDTH SPACE and
    U+FEFF, variation selectors, ...), every kind of space a plain space, and no space at
    either end. Two ids that read the same are one id to whoever reads a report, so a file
    may not hold both (``"s1"`` and ``"s1\u200b"``, ``"café"`` composed and decomposed)."""
    if session_id.isascii():
        return session_id.strip()
    text = unicodedata.normalize("NFC", session_id)
    text = "".join(" " if c.isspace() else c for c in text if unicodedata.category(c) != "Cf")
    return _INVISIBLE.sub("", text).strip()


def field_turn(field: str | None) -> int | None:
    """The 1-based turn a canonical field path points into (``turns[2].query`` -> 3)."""
    match = _TURN_FIELD.match(field or "")
    return int(match.group(1)) + 1 if match else None


class _Problem(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def validate_session(session: Session, *, derived: bool = False) -> None:
    """Check ``session`` against the rules above.

    ``derived=True`` says the reader has already made sure of every turn's statement texts
    and segments (cut them out of the response text itself with
    :func:`~genir_eval.ingest.response.build_response`, or checked them as JSONL does), so
    only the statements' citations are checked here. Raises
    :class:`~genir_eval.errors.InputError` whose ``column`` is the offending field and
    whose message names the turn (``turn 2: statement 1 cites [5], which is not among
    the turn's links``); callers add the file and the row or line.
    """
    try:
        _check_session(session, derived)
    except _Problem as problem:
        raise InputError(problem.message, column=problem.field) from None


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds an unpaired UTF-16 surrogate (``"\\ud800"`` in JSON, or a file
    name's bytes that are not UTF-8): not Unicode text, it cannot be written as UTF-8."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _text(value: Any, field: str, what: str) -> str:
    if not isinstance(value, str):
        raise _Problem(field, f"{what} is not a string")
    if has_surrogate(value):
        raise _Problem(field, f"{what} holds an unpaired surrogate; it is not valid Unicode text")
    return value


def _check_session(session: Session, derived: bool) -> None:
    session_id = _text(session.session_id, "session_id", "the session id")
    if not session_id.strip():
        raise _Problem("session_id", "the session id is empty")
    if _CONTROL.search(session_id):
        # an id is printed in summaries and names rows of every output: a line break or a
        # terminal escape in it would split or rewrite what the user reads
        raise _Problem(
            "session_id", f"the session id {short_repr(session_id)} holds a control character"
        )
    for key in ("source", "language", "task_type", "intent"):
        value = getattr(session, key)
        if value is not None:
            _text(value, key, key)
    if not session.turns:
        raise _Problem("turns", "the session has no turns")
    topic = session.meta.get("topic") if isinstance(session.meta, Mapping) else None
    named = isinstance(topic, (str, int)) and not isinstance(topic, bool) and str(topic).strip()
    for position, turn in enumerate(session.turns, start=1):
        _check_turn(turn, position, f"turns[{position - 1}]", derived, query_given=not named)
    if session.gold is not None:
        _check_gold(session.gold, session.turns)


def _check_turn(
    turn: Turn, position: int, where: str, derived: bool, *, query_given: bool = True
) -> None:
    at = f"turn {position}"
    if turn.index != position:
        raise _Problem(f"{where}.index", f"{at}: turns are numbered 1, 2, ... (found {turn.index})")
    if not _text(turn.query, f"{where}.query", f"{at}: the query").strip() and query_given:
        raise _Problem(
            f"{where}.query",
            f"{at}: the query is empty (a session may leave it out only when its meta.topic "
            "names the query, whose nuggets a nugget file gives)",
        )
    text = _text(turn.response_text, f"{where}.response_text", f"{at}: the response")
    if not text.strip():
        raise _Problem(f"{where}.response_text", f"{at}: the response holds no text")
    links: dict[int, str] = {}
    for i, link in enumerate(turn.links):
        link_id = link.id
        if type(link_id) is not int or not 0 <= link_id <= MAX_LINK_ID:
            raise _Problem(
                f"{where}.links[{i}].id",
                f"{at}: link id {short_repr(link_id)} is not a citation number",
            )
        url = link.url
        if type(url) is not str or type(link.title) is not str or not (url + link.title).isascii():
            field = f"{where}.links[{i}]"
            _text(url, f"{field}.url", f"{at}: the url of link [{link_id}]")
            _text(link.title, f"{field}.title", f"{at}: the title of link [{link_id}]")
        if link.text is not None:
            _text(link.text, f"{where}.links[{i}].text", f"{at}: the source text of [{link_id}]")
        if not url.strip():
            raise _Problem(f"{where}.links[{i}].url", f"{at}: link [{link_id}] has no url")
        if link_id in links:
            first = links[link_id]
            detail = (
                f"urls {short_repr(first)} and {short_repr(url)}"
                if first != url
                else "twice the same url"
            )
            raise _Problem(
                f"{where}.links[{i}].id", f"{at}: link [{link_id}] is listed twice ({detail})"
            )
        links[link_id] = url
    if not turn.statements:
        raise _Problem(f"{where}.statements", f"{at}: the response has no statements")
    for j, statement in enumerate(turn.statements):
        if not derived:
            _text(statement.text, f"{where}.statements[{j}].text", f"{at}: statement {j + 1}")
        for cid in statement.citations:
            if cid not in links:
                raise _Problem(
                    f"{where}.statements[{j}].citations",
                    f"{at}: statement {j + 1} cites [{short_repr(cid)}], "
                    "which is not among the turn's links",
                )
    if derived:
        return
    for k, segment in enumerate(turn.segments):
        field = f"{where}.segments[{k}]"
        start, end = segment.start, segment.end
        if not _is_int(start) or not _is_int(end) or not 0 <= start <= end <= len(text):
            raise _Problem(
                f"{field}.start",
                f"{at}: segment {k + 1}'s offsets {short_repr(start)}-{short_repr(end)} are not "
                f"within the response (0-{len(text)})",
            )
        if segment.text != text[start:end]:
            raise _Problem(
                f"{field}.text", f"{at}: segment {k + 1}'s text differs from the response there"
            )


def _check_gold(gold: Gold, turns: tuple[Turn, ...]) -> None:
    n = len(turns)
    _satisfaction(gold.session_satisfaction, "gold.session_satisfaction", "session satisfaction")
    for i, value in enumerate(_per_turn(gold.query_satisfaction, "query_satisfaction", n)):
        _satisfaction(value, f"gold.query_satisfaction[{i}]", f"turn {i + 1}: query satisfaction")
    for i, labels in enumerate(_per_turn(gold.link_usefulness, LINK_USEFULNESS, n)):
        field = f"gold.link_usefulness[{i}]"
        if not isinstance(labels, Mapping):
            raise _Problem(field, f"turn {i + 1}: link usefulness is not a map of id -> label")
        ids = {link.id for link in turns[i].links}
        for link_id, label in labels.items():
            if link_id not in ids:
                raise _Problem(
                    field,
                    f"turn {i + 1}: gold link usefulness for [{short_repr(link_id)}], "
                    "which is not among the turn's links",
                )
            _label(label, field, f"turn {i + 1}: link usefulness of [{link_id}]")
    turn_cites = [any(s.citations for s in turn.statements) for turn in turns]
    for i, statements in enumerate(_per_turn(gold.citation_usefulness, "citation_usefulness", n)):
        field = f"gold.citation_usefulness[{i}]"
        expected = len(turns[i].statements)
        if len(statements) != expected:
            raise _Problem(
                field,
                f"turn {i + 1}: gold citation usefulness has {len(statements)} entries "
                f"for {expected} statement(s)",
            )
        for j, labels in enumerate(statements):
            for label in labels:
                _label(label, field, f"turn {i + 1}: citation usefulness")
            n_cited = len(turns[i].statements[j].citations)
            # One label per citation; in a turn citing nothing a statement may carry one
            # response-level value (URGE's turns without citations), which is the only
            # place the metrics read it.
            allowed = n_cited if n_cited or turn_cites[i] else min(len(labels), 1)
            if len(labels) != allowed:
                expected_labels = (
                    f"its {n_cited} citation(s), one label each"
                    if n_cited
                    else "a statement citing nothing in a turn that cites (none)"
                    if turn_cites[i]
                    else "a statement citing nothing (at most one response-level value)"
                )
                raise _Problem(
                    f"{field}[{j}]",
                    f"turn {i + 1}: gold citation usefulness of statement {j + 1} has "
                    f"{len(labels)} label(s) for {expected_labels}",
                )
    for i, statements in enumerate(_per_turn(gold.citation_support, CITATION_SUPPORT, n)):
        field = f"gold.citation_support[{i}]"
        expected = len(turns[i].statements)
        if len(statements) != expected:
            raise _Problem(
                field,
                f"turn {i + 1}: gold citation support has {len(statements)} entries "
                f"for {expected} statement(s)",
            )
        for j, verdicts in enumerate(statements):
            cited = turns[i].statements[j].citations
            for link_id, verdict in verdicts.items():
                if link_id not in cited:
                    raise _Problem(
                        f"{field}[{j}]",
                        f"turn {i + 1}: gold citation support for [{short_repr(link_id)}], "
                        f"which statement {j + 1} does not cite",
                    )
                if verdict not in SUPPORT_LEVELS:
                    raise _Problem(
                        f"{field}[{j}]",
                        f"turn {i + 1}: citation support {short_repr(verdict)} is not one of "
                        f"{', '.join(SUPPORT_LEVELS)}",
                    )
    for key in ("useful_spans_user", "useful_spans_external"):
        for i, spans in enumerate(_per_turn(getattr(gold, key), key, n)):
            if not all(isinstance(span, str) for span in spans):
                raise _Problem(f"gold.{key}[{i}]", f"turn {i + 1}: a useful span is not a string")
            _text("".join(spans), f"gold.{key}[{i}]", f"turn {i + 1}: a useful span")
            _spans_in_response(spans, turns[i].response_text, f"gold.{key}[{i}]", i + 1)
    for i, thumb in enumerate(_per_turn(gold.thumbs, "thumbs", n)):
        if thumb is not None and (not _is_int(thumb) or thumb not in (0, 1)):
            raise _Problem(
                f"gold.thumbs[{i}]", f"turn {i + 1}: thumbs {short_repr(thumb)} is not up or down"
            )
    for i, comment in enumerate(_per_turn(gold.feedback_text, "feedback_text", n)):
        if comment is not None:
            _text(comment, f"gold.feedback_text[{i}]", f"turn {i + 1}: the feedback text")
    if gold.dissatisfaction is not None:
        for choice in gold.dissatisfaction.choices:
            _text(choice, "gold.dissatisfaction.choices", "a dissatisfaction choice")
        _text(gold.dissatisfaction.additional, "gold.dissatisfaction.additional", "the reason")


def _spans_in_response(spans: tuple[str, ...], response: str, field: str, turn: int) -> None:
    """A useful span is a piece of its turn's response: one that is not could never match
    a text unit, and would count as a miss of every judge without a word."""
    for k, span in enumerate(spans):
        stripped = span.strip()
        if not stripped:
            raise _Problem(f"{field}[{k}]", f"turn {turn}: useful span {k + 1} is empty")
        if stripped not in response:
            raise _Problem(
                f"{field}[{k}]",
                f"turn {turn}: useful span {k + 1} {short_repr(stripped)} is not in the "
                "turn's response text",
            )


def _per_turn(values: Any, key: str, n_turns: int) -> tuple[Any, ...]:
    if values is None:
        return ()
    if len(values) != n_turns:
        raise _Problem(f"gold.{key}", f"gold {key} has {len(values)} entries for {n_turns} turn(s)")
    return tuple(values)


def _satisfaction(value: Any, field: str, what: str) -> None:
    if value is None:
        return
    if not _is_number(value) or not math.isfinite(value) or not 1 <= value <= 5:
        raise _Problem(field, f"{what} {short_repr(value)} is not a number from 1 to 5")


def _label(value: Any, field: str, what: str) -> None:
    if not _is_int(value) or not 0 <= value <= 3:
        raise _Problem(field, f"{what}: {short_repr(value)} is not an integer from 0 to 3")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def short_repr(value: Any) -> str:
    """``repr`` of a value, cut short: an error line stays one readable line."""
    if _is_int(value) and value.bit_length() > 64:
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
