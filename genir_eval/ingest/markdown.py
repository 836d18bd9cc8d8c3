r"""A plain Markdown format for logs of your own RAG system.

One file holds one or more sessions; each turn is a query, the answer (any Markdown, with
numbered citations) and the answer's numbered source list::

    # Session: servers-101
    task_type: Factual QA
    intent: learn what servers are for
    ## Query: how do servers work?
    Servers host websites [1][2]. They store data [2].

    Sources:
    [1] Title one - https://a.example/x
    [2] https://b.example/y "Title two"

    ## Query: and how much do they cost?
    Prices vary with the provider [3].

    Sources:
    [3] [Title three](https://c.example/z)
        Plans start at 5 dollars a month. (an indented block: the source's text)

Grammar, line by line (headers must start their line):

* ``# Session: <id>`` starts a session. The header, and the id after it, may be left out:
  a file without headers is one session, and a missing id is ``<file stem>-<n>`` with ``n``
  the session's 1-based position in the file.
* Before the first query, ``task_type: ...``, ``intent: ...`` and ``language: ...`` lines set
  those session fields, each once (the language is otherwise detected); blank lines are
  ignored and anything else is an error.
* ``## Query: <text>`` starts a turn; the query is the rest of that line.
* A ``feedback: up`` (or ``down``; also ``thumbs up``, ``thumbs-down``, 👍/👎, ``+1``/``-1``)
  line right under the query is the user's thumbs up or down on that turn's answer (a
  ``feedback: thumbs ...`` that names no thumb is an error, not a comment); text after it (``feedback: down - the prices are outdated``)
  is their free-text feedback, and ``feedback: <text>`` alone gives text without a thumb.
  A turn has one feedback line.
* The lines up to ``Sources:`` (also ``References:``, ``## Sources``, ``**Sources:**``) or the
  next header are the answer. Citations are ``[1]``, ``[1][2]`` or ``[1, 2]``; they are
  removed from the response text along with the spaces before them (``websites [1].`` reads
  ``websites.``), and a group of adjacent citations closes a statement, as in the HTML
  parser (:mod:`genir_eval.ingest.response`). Code is left alone: brackets inside fenced code
  blocks and inline code spans are text, not citations, and so are brackets inside HTML
  comments and tags, inside a url, and reference links (``[text][1]``, ``[1]: url``)
  (:mod:`genir_eval.ingest.markers`),
  and a ``Sources:`` line inside a fenced block is answer text. Session and query headers
  always start a new session or turn, so a fence left open ends with its answer.
* Each source line is ``[n] <title> - <url>``, ``[n] <url> "<title>"``,
  ``[n] [<title>](<url>)`` or ``[n] <url>`` (empty title), optionally bulleted with ``-``.
  The turn's links are its source list in order; a cited number must be in that list.
* Under a source line, the passage the engine retrieved for that source (its ``text``, what
  citation support is judged against) may follow as an indented block (every line indented
  by four spaces or a tab; blank lines inside it are kept) or as a fenced block (a line
  opening with three or more backticks or tildes, closed by the same fence; everything in
  between is the text, header-like lines included). A fence left open is an error.

Every turn needs a non-empty query and answer, and the session the rules every format
shares (:mod:`genir_eval.ingest.validate`). Errors name the file and the line; a bad line
makes its whole session invalid, and with ``skip_invalid`` reading goes on at the next
``# Session`` header.
"""

from __future__ import annotations

import io
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from genir_eval.errors import InputError
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.markers import citation_number, marker_pieces
from genir_eval.ingest.response import Citation, build_response
from genir_eval.ingest.result import LoadResult
from genir_eval.ingest.stream import Lines, SeenIds, SessionStream, unexpected
from genir_eval.ingest.validate import field_turn, validate_session
from genir_eval.records import Gold, Link, Session, Turn, is_blank

__all__ = ["iter_markdown", "load_markdown", "parse_markdown"]

_SESSION = re.compile(r"#\s*Session(?:\s*:(.*)|\s*)$", re.IGNORECASE)
_QUERY = re.compile(r"##\s*Query:(.*)$", re.IGNORECASE)
# "Sources:", "## References", "**Sources:**": each optional part opens with its own character
# (the pattern this replaces, ``\s*:?\s*\**\s*:?\s*``, split one run of spaces between
# adjacent optional runs in polynomially many ways)
_SOURCES = re.compile(
    r"(?:#{1,6}\s*)?(?:\*+\s*)?(?:sources|references)\s*(?::\s*)?(?:\*+\s*)?(?::\s*)?$",
    re.IGNORECASE,
)
_FIELD = re.compile(r"(task_type|intent|language)\s*:(.*)$", re.IGNORECASE)
_FEEDBACK = re.compile(r"feedback\s*:(.*)$", re.IGNORECASE)
# a thumb as people write it: up, thumbs up, thumbs-up, thumb down, 👍 (any skin tone), +1
_THUMB = re.compile(
    r"(?:thumbs?[\s_-]*)?(?P<word>up|down)\b|(?P<emoji>[👍👎])[\U0001F3FB-\U0001F3FF]?"
    r"|(?P<sign>[+-]1)\b",
    re.IGNORECASE,
)
_THUMB_VALUE = {"up": 1, "down": 0, "👍": 1, "👎": 0, "+1": 1, "-1": 0}
_SOURCE_LINE = re.compile(r"(?:[-*+]\s+)?\[([^\]]*)\]:?\s*(.*)$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_URL = r"[A-Za-z][A-Za-z0-9+.-]*://\S+"
_SOURCE_FORMS = (  # [t](url), url "t", t - url, url
    re.compile(rf"\[(?P<title>[^\]]*)\]\((?P<url>{_URL}?)\)$"),
    re.compile(rf"(?P<url>{_URL})\s+[\"“](?P<title>.*)[\"”]$"),
    # the spaces before the dash start after a non-space: linear on a title of many spaces
    re.compile(rf"(?P<title>.*?)(?<!\s)\s+[-–—]\s+(?P<url>{_URL})$"),
    re.compile(rf"(?P<url>{_URL})(?P<title>)$"),
)


@dataclass
class _TurnDraft:
    line: int
    query: str
    answer: list[tuple[int, str]] = field(default_factory=list)
    sources: dict[int, tuple[int, Link]] = field(default_factory=dict)  # id -> (line, link)
    in_sources: bool = False
    fence: str | None = None  # the opening fence while the answer is inside a code block
    texts: dict[int, list[str]] = field(default_factory=dict)  # source id -> its text lines
    source_fence: tuple[int, str] | None = None  # (line, marker) of an open fenced text

    @property
    def last_source(self) -> int | None:
        return next(reversed(self.sources), None)

    thumb: int | None = None
    feedback: str | None = None
    feedback_line: int | None = None


@dataclass
class _SessionDraft:
    line: int
    session_id: str | None
    fields: dict[str, str] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict)
    turns: list[_TurnDraft] = field(default_factory=list)
    error: InputError | None = None  # the first problem met; the session is then invalid

    @property
    def empty(self) -> bool:
        return not self.fields and not self.turns and self.error is None


def iter_markdown(path: str | Path, *, skip_invalid: bool = False) -> SessionStream:
    """The sessions of a Markdown log file, read one at a time (see the module's grammar)."""
    path = Path(path)
    return SessionStream(_file_items(path), path=path, format="markdown", skip_invalid=skip_invalid)


def load_markdown(path: str | Path, *, skip_invalid: bool = False) -> LoadResult:
    """Read a Markdown log file; with ``skip_invalid`` bad sessions go to ``skipped``."""
    stream = iter_markdown(path, skip_invalid=skip_invalid)
    return LoadResult(sessions=list(stream), skipped=stream.skipped)


def parse_markdown(
    text: str, *, name: str = "session", path: str | None = None, skip_invalid: bool = False
) -> LoadResult:
    """Parse Markdown log text; ``name`` stands in for the file stem in default ids."""
    stream = SessionStream(
        _items(io.StringIO(text), None, name, path),
        path=path or "<text>",
        format="markdown",
        skip_invalid=skip_invalid,
    )
    return LoadResult(sessions=list(stream), skipped=stream.skipped)


def _file_items(path: Path) -> Iterator[Session | InputError]:
    with path.open("rb") as stream:
        lines = Lines(stream)
        yield from _items(lines, lines, path.stem, str(path))


def _items(
    lines: Iterable[str], decoded: Lines | None, name: str, path: str | None
) -> Iterator[Session | InputError]:
    """Sessions (or the error that makes one invalid) as their last line is read."""
    seen = SeenIds()
    draft = _SessionDraft(line=1, session_id=None)
    position = 0  # sessions met so far, for default ids
    number = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        open_text = bool(draft.turns) and draft.turns[-1].source_fence is not None
        if not open_text and (match := _SESSION.match(line)):
            if not draft.empty or draft.session_id is not None:
                position += 1
                yield _finish(draft, f"{name}-{position}", path, decoded, seen, number - 1)
            draft = _SessionDraft(line=number, session_id=(match.group(1) or "").strip() or None)
            continue
        if draft.error is not None:
            continue  # the session is invalid already: look for the next header
        try:
            _scan_line(draft, line, number, path)
        except InputError as error:
            draft.error = error
        except Exception as error:  # noqa: BLE001 - every problem of a line is located
            draft.error = InputError(unexpected(error), path=path, line=number)
    if not draft.empty or draft.session_id is not None:
        position += 1
        yield _finish(draft, f"{name}-{position}", path, decoded, seen, number)


def _scan_line(draft: _SessionDraft, line: str, number: int, path: str | None) -> None:
    stripped = line.strip()
    turn = draft.turns[-1] if draft.turns else None
    if turn is not None and turn.source_fence is not None:
        # inside a fenced source text everything is text, header-like lines included
        marker = turn.source_fence[1]
        if stripped.startswith(marker) and not stripped.strip(marker[0]):
            turn.source_fence = None
        else:
            turn.texts[turn.last_source or 0].append(line)
        return
    if match := _QUERY.match(line):
        draft.turns.append(_TurnDraft(line=number, query=match.group(1).strip()))
    elif turn is None:
        if not stripped:
            return
        if (field_match := _FIELD.match(stripped)) is None:
            raise InputError(
                "expected '## Query: ...' or a session field (task_type, intent, language)",
                path=path,
                line=number,
            )
        key = field_match.group(1).lower()
        if key in draft.field_lines:
            raise InputError(
                f"{key} is given twice (first on line {draft.field_lines[key]}); give it once",
                path=path,
                line=number,
            )
        draft.fields[key] = field_match.group(2).strip()
        draft.field_lines[key] = number
    elif turn.in_sources:
        _source_line(turn, line, number, path)
    elif turn.fence is not None:
        turn.answer.append((number, line))
        if (
            stripped
            and stripped == turn.fence[0] * len(stripped)
            and len(stripped) >= len(turn.fence)
        ):
            turn.fence = None
    elif _SOURCES.match(stripped):
        turn.in_sources = True
    elif (feedback := _FEEDBACK.match(stripped)) and not any(t.strip() for _, t in turn.answer):
        if turn.feedback_line is not None:
            raise InputError(
                f"a second feedback line for this turn (the first is on line "
                f"{turn.feedback_line}); give the thumb and comment on one line",
                path=path,
                line=number,
            )
        turn.feedback_line = number
        _add_feedback(turn, feedback.group(1), path, number)
    else:
        turn.answer.append((number, line))
        if fence := _FENCE.match(line):
            opening = fence.group(1)
            if not (opening[0] == "`" and "`" in line[fence.end() :]):
                turn.fence = opening


def _add_feedback(turn: _TurnDraft, text: str, path: str | None, number: int) -> None:
    """A thumb (``up``/``down``, ``thumbs up``, 👍/👎, ``+1``/``-1``) and, after it, free
    text; or free text alone. Text that starts like a thumb but is none (``thumbs
    sideways``) is refused rather than kept as a comment."""
    text = text.strip()
    thumb = _THUMB.match(text)
    if thumb is not None:
        found = thumb.group("word") or thumb.group("emoji") or thumb.group("sign")
        turn.thumb = _THUMB_VALUE[found.lower()]
        text = text[thumb.end() :]
    elif re.match(r"thumbs?\b", text, re.IGNORECASE):
        raise InputError(
            f"feedback: {text[:40]!r} is not a thumb: write up or down (thumbs up, 👍, +1), "
            "then any comment",
            path=path,
            line=number,
        )
    comment = text.strip().lstrip("-–—:,").strip()
    turn.feedback = comment or turn.feedback


def _finish(
    draft: _SessionDraft,
    default_id: str,
    path: str | None,
    decoded: Lines | None,
    seen: SeenIds,
    last: int,
) -> Session | InputError:
    """The session of ``draft`` (lines ``draft.line`` to ``last``), or why it is invalid."""
    if decoded is not None:
        bad = decoded.first_bad(draft.line, last)
        decoded.forget(last + 1)
        if bad is not None and (draft.error is None or (draft.error.line or 0) >= bad[0]):
            return InputError(bad[1], path=path, line=bad[0])
    if draft.error is not None:
        return draft.error
    for drafted in draft.turns:
        if drafted.source_fence is not None:
            line, marker = drafted.source_fence
            return InputError(
                f"the fenced source text opened here is not closed with {marker}",
                path=path,
                line=line,
            )
    try:
        session = _build(draft, default_id, path)
        try:
            validate_session(session, derived=True)
        except InputError as error:
            turn = field_turn(error.column)
            line = draft.turns[turn - 1].line if turn is not None else draft.line
            return InputError(error.message, path=path, line=line)
        try:
            seen.check(session.session_id, draft.line)
        except InputError as error:
            return InputError(error.message, path=path, line=draft.line)
        return session
    except InputError as error:
        return error
    except Exception as error:  # noqa: BLE001 - every problem of a session is located
        return InputError(unexpected(error), path=path, line=draft.line)


_TEXT_FENCE = re.compile(r"(`{3,}|~{3,})")


def _source_line(turn: _TurnDraft, line: str, number: int, path: str | None) -> None:
    """One line of a Sources list: a source, or the text block under the last source."""
    stripped = line.strip()
    source = turn.last_source
    if source is not None:
        if line.startswith(("    ", "\t")):
            turn.texts.setdefault(source, []).append(line[4:] if line[0] == " " else line[1:])
            return
        if not stripped:
            if source in turn.texts:
                turn.texts[source].append("")
            return
        fence = _TEXT_FENCE.match(stripped)
        if fence is not None and source not in turn.texts:
            turn.source_fence = (number, fence.group(1))
            turn.texts[source] = []
            return
    if stripped:
        _add_source(turn, stripped, number, path)


def _with_text(link: Link, lines: list[str] | None) -> Link:
    text = "\n".join(lines or ()).strip()
    return link if is_blank(text) else replace(link, text=text)


def _add_source(turn: _TurnDraft, line: str, number: int, path: str | None) -> None:
    match = _SOURCE_LINE.match(line)
    if match is None:
        raise InputError(
            "expected a source line '[n] title - url' (or '## Query:' to start a turn)",
            path=path,
            line=number,
        )
    try:
        link_id = citation_number(match.group(1))
    except InputError as error:
        raise InputError(f"source {error.message}", path=path, line=number) from None
    rest = match.group(2).strip()
    for pattern in _SOURCE_FORMS:
        if form := pattern.match(rest):
            if link_id in turn.sources:
                first = turn.sources[link_id][0]
                raise InputError(
                    f"source [{link_id}] is listed twice (first on line {first})",
                    path=path,
                    line=number,
                )
            title = form.group("title").strip()
            turn.sources[link_id] = (number, Link(id=link_id, url=form.group("url"), title=title))
            return
    raise InputError(
        f"source [{link_id}] has no url; use '[n] title - https://...' or '[n] https://... \"title\"'",
        path=path,
        line=number,
    )


def _build(draft: _SessionDraft, default_id: str, path: str | None) -> Session:
    if not draft.turns:
        raise InputError("the session has no '## Query:' turn", path=path, line=draft.line)
    turns = []
    for index, turn in enumerate(draft.turns, start=1):
        if not turn.query:
            raise InputError("the query is empty", path=path, line=turn.line)
        text = "".join(line + "\n" for _, line in turn.answer)
        starts: list[int] = []
        offset = 0
        for _, line in turn.answer:
            starts.append(offset)
            offset += len(line) + 1

        def resolve(
            link_id: int, at: int, turn: _TurnDraft = turn, starts: list[int] = starts
        ) -> Citation:
            if link_id not in turn.sources:
                number = turn.answer[max(bisect_right(starts, at) - 1, 0)][0]
                raise InputError(
                    f"citation [{link_id}] has no entry in the turn's Sources list",
                    path=path,
                    line=number,
                )
            link = turn.sources[link_id][1]
            return Citation(link_id, link.url, link.title)

        try:
            parsed = build_response(marker_pieces(text, resolve))
        except InputError as error:
            if error.line is not None:
                raise
            raise InputError(f"turn {index}: {error.message}", path=path, line=turn.line) from None
        turns.append(
            Turn(
                index=index,
                query=turn.query,
                response_text=parsed.response_text,
                statements=parsed.statements,
                links=tuple(
                    _with_text(link, turn.texts.get(link.id)) for _, link in turn.sources.values()
                ),
                segments=parsed.segments,
            )
        )
    all_text = " ".join(t.query + " " + t.response_text for t in turns)
    gold = None
    if any(t.thumb is not None or t.feedback is not None for t in draft.turns):
        gold = Gold(
            thumbs=tuple(t.thumb for t in draft.turns),
            feedback_text=tuple(t.feedback for t in draft.turns),
        )
    return Session(
        session_id=draft.session_id or default_id,
        turns=tuple(turns),
        source="markdown",
        language=draft.fields.get("language") or detect_language(all_text),
        task_type=draft.fields.get("task_type") or None,
        intent=draft.fields.get("intent") or None,
        gold=gold,
    )
