r"""Numbered citation markers in plain text (``[1]``, ``[1][2]``, ``[1, 2]``), code left alone.

The Markdown format and JSONL turns that carry markers in ``response_text`` without
statements cite this way. A marker is a bracketed list of ASCII citation numbers not
followed by ``(`` (``[1](https://...)`` is a Markdown link) and not escaped (``\[1]``); the
spaces and tabs before it belong to it, so ``websites [1].`` reads ``websites.``.

Code is text, not citations: nothing inside a fenced code block (a line opening with three
or more backticks or tildes, up to the closing fence or the end of the text, as in
CommonMark) or an inline code span (a run of backticks up to the next run of the same
length in the same paragraph) is a marker, so ``items[1]`` in code stays ``items[1]``. Indented code blocks are
not recognised: indentation also continues list items, and a marker there is a citation.

Other Markdown that holds brackets is text too: an HTML comment or tag (``<!-- [1] -->``,
``<span title="[1]">``), a url the brackets sit inside (``https://x.example/a[1]b``; a
marker right after a url, ``https://x.example[1].``, still cites), the label of a reference
link (``[text][1]``) and a link reference definition (``[1]: https://...`` opening a line).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from genir_eval.errors import InputError
from genir_eval.ingest.response import Citation, Piece

__all__ = ["Marker", "find_markers", "marker_pieces", "citation_number", "MAX_ID_DIGITS"]

MAX_ID_DIGITS = 18
# The spaces before a marker are taken from the start of their run only (``(?<![ \t])``): a
# search that tried every space of a long run as a start, each time reading to the run's end,
# would be quadratic in the run's length.
_MARKER = re.compile(r"(?<![ \t])[ \t]*(?<!\\)\[([0-9]+(?:[ \t]*,[ \t]*[0-9]+)*)\](?!\()")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*(?=\n)")
_ID = re.compile(rf"[0-9]{{1,{MAX_ID_DIGITS}}}")
# Markdown whose brackets are text: HTML comments (an unclosed one runs to the end), HTML
# tags and autolinks, and bare urls (up to whitespace or a tag, trailing punctuation left out).
_LITERAL = re.compile(
    r"<!--.*?(?:-->|\Z)|<[A-Za-z/!?][^<>\n]*>|https?://[^\s<>]*[^\s<>.,;:!?'\")\]]",
    re.DOTALL | re.IGNORECASE,
)


def citation_number(text: str) -> int:
    """The citation number ``text`` spells in ASCII digits; :class:`InputError` otherwise.

    ``"²"`` or ``"٣"`` pass ``str.isdigit`` but are not citation numbers here, and a number
    of more than 18 digits (beyond any real citation, and Python's 4,300-digit limit for
    ``int``) is refused before it is converted.
    """
    stripped = text.strip()
    if _ID.fullmatch(stripped):
        return int(stripped)
    shown = stripped if len(stripped) <= 24 else f"{stripped[:12]}... ({len(stripped)} characters)"
    raise InputError(f"{shown!r} is not a citation number (ASCII digits, at most 18)")


@dataclass(frozen=True)
class Marker:
    """A citation marker: its span in the text (leading spaces included) and its ids."""

    start: int
    end: int
    ids: tuple[str, ...]


def _code_free_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the stretches of ``text`` outside fenced code blocks."""
    position = 0
    prose_start = 0
    fence: tuple[str, int] | None = None  # (fence character, length) while inside a block
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if fence is None:
            match = _FENCE.fullmatch(body)
            if match and not (match.group(2)[0] == "`" and "`" in match.group(3)):
                if position > prose_start:
                    yield prose_start, position
                fence = (match.group(2)[0], len(match.group(2)))
        else:
            stripped = body.strip()
            if (
                len(body) - len(body.lstrip(" ")) <= 3
                and len(stripped) >= fence[1]
                and stripped == fence[0] * len(stripped)
            ):
                fence = None
                prose_start = position + len(line)
        position += len(line)
    if fence is None and position > prose_start:
        yield prose_start, position


def find_markers(text: str) -> list[Marker]:
    """The citation markers of ``text`` in order, skipping code blocks and code spans."""
    markers: list[Marker] = []
    for start, end in _code_free_spans(text):
        chunk = text[start:end]
        if "[" not in chunk:
            continue
        code: list[tuple[int, int]] = []
        if "`" in chunk:
            # A code span closes with the next run of as many backticks in the same
            # paragraph (a blank line ends it), as in CommonMark; an unmatched run is text.
            breaks = [m.start() for m in _BLANK_LINE.finditer(chunk)]
            runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(chunk)]
            following: list[int | None] = [None] * len(runs)
            last_of_kind: dict[tuple[int, int], int] = {}
            for k in range(len(runs) - 1, -1, -1):
                kind = (bisect_right(breaks, runs[k][0]), runs[k][1] - runs[k][0])
                following[k] = last_of_kind.get(kind)
                last_of_kind[kind] = k
            i = 0
            while i < len(runs):
                closing = following[i]
                if closing is None:
                    i += 1
                    continue
                code.append((runs[i][0], runs[closing][1]))
                i = closing + 1
        spans = iter(code)
        current = next(spans, None)
        literal = _literal_spans(chunk) if ("<" in chunk or "://" in chunk) else []
        last_end = -1  # where the last marker accepted in this chunk ends
        for match in _MARKER.finditer(chunk):
            while current is not None and current[1] <= match.start():
                current = next(spans, None)
            # a marker overlapping a code span is code (its spaces may precede the span)
            bracket = match.start(1) - 1
            if current is not None and current[0] <= bracket < current[1]:
                continue
            if current is not None and match.start() < current[0] < match.end():
                continue
            if literal and _inside(literal, bracket, match.end()):
                continue
            if _link_syntax(chunk, bracket, match.end(), last_end):
                continue
            ids = tuple(part.strip() for part in match.group(1).split(","))
            markers.append(Marker(start + match.start(), start + match.end(), ids))
            last_end = match.end()
    return markers


def _literal_spans(chunk: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_url) of the HTML comments, tags and bare urls of ``chunk``."""
    return [
        (m.start(), m.end(), m.group().startswith(("h", "H"))) for m in _LITERAL.finditer(chunk)
    ]


def _inside(literal: list[tuple[int, int, bool]], bracket: int, end: int) -> bool:
    """Whether the marker from ``bracket`` to ``end`` lies in a comment or tag, or inside a
    url that goes on after it. The spans are in order and do not overlap, so only the last
    one starting at or before ``bracket`` can hold it (a binary search: a text of many
    markers and many tags stays linear)."""
    k = bisect_right(literal, bracket, key=lambda span: span[0]) - 1
    if k < 0:
        return False
    first, last, is_url = literal[k]
    return first <= bracket < last and (not is_url or end < last)


def _link_syntax(chunk: str, bracket: int, end: int, last_end: int) -> bool:
    """Whether the bracket at ``bracket`` is a reference link's label (``[text][1]``, right
    after a closing bracket that ends no marker) or opens a link reference definition
    (``[1]: url`` at the start of a line)."""
    if bracket > 0 and chunk[bracket - 1] == "]" and bracket != last_end:
        return True
    if not chunk.startswith(":", end):
        return False
    # at most three spaces between the line's start and the bracket: read back from the
    # bracket, never from the chunk's start (a search from there, once a marker, was quadratic)
    indent = 0
    while indent < 4 and bracket - indent > 0 and chunk[bracket - indent - 1] == " ":
        indent += 1
    return indent <= 3 and (bracket == indent or chunk[bracket - indent - 1] == "\n")


def marker_pieces(
    text: str, resolve: Callable[[int, int], Citation], markers: list[Marker] | None = None
) -> list[Piece]:
    """``text`` as pieces for :func:`~genir_eval.ingest.response.build_response`.

    Each marker becomes its citations; ``resolve(link_id, offset)`` returns the citation a
    number stands for (or raises :class:`InputError` naming what is wrong, ``offset`` being
    where the marker starts, for locating it).
    """
    pieces: list[Piece] = []
    position = 0
    for marker in find_markers(text) if markers is None else markers:
        pieces.append(text[position : marker.start])
        for raw in marker.ids:
            pieces.append(resolve(citation_number(raw), marker.start))
        position = marker.end
    pieces.append(text[position:])
    return pieces
