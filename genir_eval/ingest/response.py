"""From a stream of text and citations to a response's records (shared by HTML and Markdown).

A parser walks its input and emits, in reading order, text strings, :data:`BREAK` at block
boundaries and :class:`Citation` markers; :func:`build_response` turns that stream into the
response text, its statements, links and segments.

Statement rule (checked against URGE's ``citation_usefulness``, which lists one entry per
statement): a statement is the text run closed by a group of adjacent citations (citations
with nothing but whitespace between them); punctuation right after the group
(``...软件[1][2]。``) ends that statement. Text after the last group is one more statement,
with no citations, only when it holds a letter or digit (otherwise it joins the last
statement); a response without any citation is a single statement with no citations.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from genir_eval.errors import InputError
from genir_eval.ingest.segments import split_segments
from genir_eval.records import Link, Segment, Statement

__all__ = ["ParsedResponse", "Citation", "BREAK", "Piece", "build_response"]

# Marks that close the statement before them when they follow a citation group.
_CLOSING_PUNCT = frozenset("，。：；？！、…,.;:!?）)]”’」』")


@dataclass(frozen=True)
class ParsedResponse:
    """What one response holds: its text and the records ingest builds from it."""

    response_text: str
    statements: tuple[Statement, ...]
    links: tuple[Link, ...]
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class Citation:
    """A citation marker met in the response: its number, and the cited url and title."""

    id: int
    url: str
    title: str


class _Break:
    """A block boundary: a line break unless whitespace is already there."""

    def __repr__(self) -> str:
        return "BREAK"


BREAK = _Break()
Piece = str | Citation | _Break


def build_response(pieces: Iterable[Piece]) -> ParsedResponse:
    """Join ``pieces`` into a :class:`ParsedResponse`.

    :data:`BREAK` becomes ``"\\n"`` only where text meets text with no whitespace between, so
    input that already carries its line breaks (URGE's HTML does) keeps them as they are.
    Raises :class:`~genir_eval.errors.InputError` when there is no text at all, or when one
    citation number points to two different urls.
    """
    chunks: list[str] = []
    cites: list[tuple[int, Citation]] = []  # (offset in the raw text, citation)
    length = 0
    pending_break = False
    last_char = ""
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if pending_break and last_char and not last_char.isspace() and not piece[0].isspace():
                chunks.append("\n")
                length += 1
            pending_break = False
            chunks.append(piece)
            length += len(piece)
            last_char = piece[-1]
        elif isinstance(piece, Citation):
            cites.append((length, piece))
        else:
            pending_break = True
    raw = "".join(chunks)
    text = raw.strip()
    if not text:
        raise InputError("the response holds no text")
    lead = len(raw) - len(raw.lstrip())
    cites = [(min(max(pos - lead, 0), len(text)), cite) for pos, cite in cites]
    return ParsedResponse(
        response_text=text,
        statements=_statements(text, cites),
        links=_links(cites),
        segments=split_segments(text),
    )


def _links(cites: list[tuple[int, Citation]]) -> tuple[Link, ...]:
    links: dict[int, Link] = {}
    for _, cite in cites:
        known = links.get(cite.id)
        if known is None:
            links[cite.id] = Link(id=cite.id, url=cite.url, title=cite.title)
        elif cite.url and known.url and cite.url != known.url:
            raise InputError(
                f"citation [{cite.id}] points to two urls: {known.url!r} and {cite.url!r}"
            )
    return tuple(links.values())


def _statements(text: str, cites: list[tuple[int, Citation]]) -> tuple[Statement, ...]:
    if not cites:
        return (Statement(text=text),)
    groups: list[tuple[int, int, list[int]]] = []  # (start, end, citation ids)
    for pos, cite in cites:
        if groups and not text[groups[-1][1] : pos].strip():
            first, _, ids = groups[-1]
            ids.append(cite.id)
            groups[-1] = (first, pos, ids)
        else:
            groups.append((pos, pos, [cite.id]))
    statements: list[Statement] = []
    start = 0
    for group_start, group_end, ids in groups:
        end = group_end
        while end < len(text) and text[end] in _CLOSING_PUNCT:
            end += 1
        body = (text[start:group_start] + text[group_end:end]).strip()
        statements.append(Statement(text=body, citations=tuple(ids)))
        start = end
    tail = text[start:].strip()
    if any(ch.isalnum() for ch in tail):
        statements.append(Statement(text=tail))
    elif tail:
        # with the whitespace before it, so the statement stays a cut of the text
        last = statements[-1]
        statements[-1] = Statement(text=last.text + text[start:].rstrip(), citations=last.citations)
    return tuple(statements)
