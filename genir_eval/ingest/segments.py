"""Punctuation-delimited text units of a response (URGE's "useful text" units).

URGE annotators marked useful text by units cut after Chinese and Western commas, full stops,
colons, semicolons, question and exclamation marks, and at line breaks; a unit keeps its
trailing punctuation (``"服务器可以用于多种用途，"``) and a quote after the mark opens the next
unit. The Western marks are ambiguous inside numbers, urls and list numbering, and the URGE
units show how they were treated: ``"1. 开窗通风"``, ``"净利润为193.09亿美元，"`` and
``"具体日期为2000年8月3日. 在2003年，"`` are single units. So a Western full stop ends a unit
only before whitespace and a capital letter (an English sentence) and not after a
line-initial list number; a comma or colon never ends one between digits, nor a colon
before ``//``.
"""

from __future__ import annotations

import re

from genir_eval.records import Segment

__all__ = ["split_segments"]

_BOUNDARY = re.compile(
    r"""
    (?=[，。：；？！;!?,:.\n])  # every boundary starts with one of these: lets re skip ahead
    (?:(?:
        [，。：；？！;!?]                # always delimiters
      | ,(?!\d) | (?<!\d),             # not a thousands separator
      | :(?![\d/]) | (?<!\d):(?!/)     # not a time, not a url scheme
      | (?<!^\d)(?<!^\d\d)\.(?=\s+[A-Z"“'‘(\[])   # a sentence end, not "3. Title"
    )+
    | \n)
    """,
    re.VERBOSE | re.MULTILINE,
)


def split_segments(text: str) -> tuple[Segment, ...]:
    """Cut ``text`` into units with ``start``/``end`` offsets into ``text``.

    Units are stripped of surrounding whitespace (offsets point at the stripped text) and
    empty units are dropped, so ``text[s.start:s.end] == s.text`` for every segment.
    """
    segments: list[Segment] = []
    start = 0
    ends = [match.end() for match in _BOUNDARY.finditer(text)]
    ends.append(len(text))
    for end in ends:
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            first = start + len(piece) - len(piece.lstrip())
            segments.append(Segment(stripped, first, first + len(stripped)))
        start = end
    return tuple(segments)
