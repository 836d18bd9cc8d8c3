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

Grammar, line by line (headers must start their line):

* ``# Session: <id>`` starts a session. The header, and the id after it, may be left out:
  a file without headers is one session, and a missing id is ``<file stem>-<n>`` with ``n``
  the session's 1-based position in the file.
* Before the first query, ``task_type: ...``, ``intent: ...`` and ``language: ...`` lines set
  those session fields (the language is otherwise detected); blank lines are ignored and
  anything else is an error.
* ``## Query: <text>`` starts a turn; the query is the rest of that line.
* The lines up to ``Sources:`` (also ``References:``, ``## Sources``, ``**Sources:**``) or the
  next header are the answer. Citations are ``[1]``, ``[1][2]`` or ``[1, 2]``; they are
  removed from the response text along with the spaces before them (``websites [1].`` reads
  ``websites.``), and a group of adjacent citations closes a statement, as in the HTML
  parser (:mod:`genir_eval.ingest.response`).
* Each source line is ``[n] <title> - <url>``, ``[n] <url> "<title>"``,
  ``[n] [<title>](<url>)`` or ``[n] <url>`` (empty title), optionally bulleted with ``-``.
  The turn's links are its source list in order; a cited number must be in that list.

Every turn needs a non-empty query and answer. Errors name the file and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from genir_eval.errors import InputError
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.response import Citation, Piece, build_response
from genir_eval.ingest.result import LoadResult
from genir_eval.records import Link, Session, Turn

__all__ = ["load_markdown", "parse_markdown"]

_SESSION = re.compile(r"#\s*Session(?:\s*:(.*)|\s*)$", re.IGNORECASE)
_QUERY = re.compile(r"##\s*Query:(.*)$", re.IGNORECASE)
_SOURCES = re.compile(
    r"(?:#{1,6}\s*)?\**\s*(?:sources|references)\s*:?\s*\**\s*:?\s*$", re.IGNORECASE
)
_FIELD = re.compile(r"(task_type|intent|language)\s*:(.*)$", re.IGNORECASE)
_SOURCE_LINE = re.compile(r"(?:[-*+]\s+)?\[(\d+)\]:?\s*(.*)$")
_CITATION = re.compile(r"[ \t]*\[(\d+(?:\s*,\s*\d+)*)\](?!\()")
_URL = r"[A-Za-z][A-Za-z0-9+.-]*://\S+"
_SOURCE_FORMS = (  # [t](url), url "t", t - url, url
    re.compile(rf"\[(?P<title>[^\]]*)\]\((?P<url>{_URL}?)\)$"),
    re.compile(rf"(?P<url>{_URL})\s+[\"“](?P<title>.*)[\"”]$"),
    re.compile(rf"(?P<title>.*?)\s+[-–—]\s+(?P<url>{_URL})$"),
    re.compile(rf"(?P<url>{_URL})(?P<title>)$"),
)


@dataclass
class _TurnDraft:
    line: int
    query: str
    answer: list[tuple[int, str]] = field(default_factory=list)
    sources: dict[int, tuple[int, Link]] = field(default_factory=dict)  # id -> (line, link)
    in_sources: bool = False


@dataclass
class _SessionDraft:
    line: int
    session_id: str | None
    fields: dict[str, str] = field(default_factory=dict)
    turns: list[_TurnDraft] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.fields and not self.turns


def load_markdown(path: str | Path, *, skip_invalid: bool = False) -> LoadResult:
    """Read a Markdown log file; with ``skip_invalid`` bad sessions go to ``skipped``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text: {error}", path=str(path)) from None
    return parse_markdown(text, name=path.stem, path=str(path), skip_invalid=skip_invalid)


def parse_markdown(
    text: str, *, name: str = "session", path: str | None = None, skip_invalid: bool = False
) -> LoadResult:
    """Parse Markdown log text; ``name`` stands in for the file stem in default ids."""
    result = LoadResult()
    drafts: list[_SessionDraft] = []
    try:
        drafts = _scan(text, path)
    except InputError as error:
        if not skip_invalid:
            raise
        result.skipped.append(error)
        return result
    seen: dict[str, int] = {}
    for number, draft in enumerate(drafts, start=1):
        try:
            session = _build(draft, f"{name}-{number}", path)
            if session.session_id in seen:
                raise InputError(
                    f"duplicate session id {session.session_id!r} "
                    f"(first on line {seen[session.session_id]})",
                    path=path,
                    line=draft.line,
                )
            seen[session.session_id] = draft.line
            result.sessions.append(session)
        except InputError as error:
            if not skip_invalid:
                raise
            result.skipped.append(error)
    return result


def _scan(text: str, path: str | None) -> list[_SessionDraft]:
    """Split the text into session and turn drafts; structural errors are fatal."""
    drafts: list[_SessionDraft] = [_SessionDraft(line=1, session_id=None)]
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        session = drafts[-1]
        turn = session.turns[-1] if session.turns else None
        if match := _SESSION.match(line):
            new = _SessionDraft(line=number, session_id=(match.group(1) or "").strip() or None)
            if session.empty and session.session_id is None:
                drafts[-1] = new
            else:
                drafts.append(new)
        elif match := _QUERY.match(line):
            session.turns.append(_TurnDraft(line=number, query=match.group(1).strip()))
        elif turn is None:
            if not stripped:
                continue
            if (field_match := _FIELD.match(stripped)) is None:
                raise InputError(
                    "expected '## Query: ...' or a session field (task_type, intent, language)",
                    path=path,
                    line=number,
                )
            session.fields[field_match.group(1).lower()] = field_match.group(2).strip()
        elif turn.in_sources:
            if stripped:
                _add_source(turn, stripped, number, path)
        elif _SOURCES.match(stripped):
            turn.in_sources = True
        else:
            turn.answer.append((number, line))
    return [d for d in drafts if not d.empty or d.session_id is not None]


def _add_source(turn: _TurnDraft, line: str, number: int, path: str | None) -> None:
    match = _SOURCE_LINE.match(line)
    if match is None:
        raise InputError(
            "expected a source line '[n] title - url' (or '## Query:' to start a turn)",
            path=path,
            line=number,
        )
    link_id, rest = int(match.group(1)), match.group(2).strip()
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
        pieces: list[Piece] = []
        for number, line in turn.answer:
            pieces.extend(_line_pieces(line, number, turn, path))
            pieces.append("\n")
        try:
            parsed = build_response(pieces)
        except InputError as error:
            raise InputError(f"turn {index}: {error.message}", path=path, line=turn.line) from None
        turns.append(
            Turn(
                index=index,
                query=turn.query,
                response_text=parsed.response_text,
                statements=parsed.statements,
                links=tuple(link for _, link in turn.sources.values()),
                segments=parsed.segments,
            )
        )
    all_text = " ".join(t.query + " " + t.response_text for t in turns)
    return Session(
        session_id=draft.session_id or default_id,
        turns=tuple(turns),
        source="markdown",
        language=draft.fields.get("language") or detect_language(all_text),
        task_type=draft.fields.get("task_type") or None,
        intent=draft.fields.get("intent") or None,
    )


def _line_pieces(line: str, number: int, turn: _TurnDraft, path: str | None) -> list[Piece]:
    pieces: list[Piece] = []
    position = 0
    for match in _CITATION.finditer(line):
        pieces.append(line[position : match.start()])
        for raw in match.group(1).split(","):
            link_id = int(raw)
            if link_id not in turn.sources:
                raise InputError(
                    f"citation [{link_id}] has no entry in the turn's Sources list",
                    path=path,
                    line=number,
                )
            link = turn.sources[link_id][1]
            pieces.append(Citation(link_id, link.url, link.title))
        position = match.end()
    pieces.append(line[position:])
    return pieces
