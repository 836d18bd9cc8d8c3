"""How a figure prints in text: one rule for every table and line that shows one (the kinds'
``genir-eval meta`` lines, the terminal summary, the judge-quality lines, the HTML report).
A base module, so every stage that prints a figure imports it from the same place."""

from __future__ import annotations

import html
import json
import math
import numbers
import re
from typing import Any

__all__ = [
    "counted",
    "number_text",
    "value_text",
    "UNSAFE",
    "shown",
    "terminal_safe",
    "markdown_text",
    "code_span",
]

#: A value that is not a number is shown at most this long (a list of a hundred unit
#: indices, a judge's whole reply object).
VALUE_CHARS = 80


def number_text(value: Any, digits: int = 3, missing: str = "-") -> str:
    """A figure with fixed decimals, never ``-0.000``; a whole number as it is; ``missing``
    (``-`` unless the caller's text says ``n/a`` or ``–``) for none or a non-finite float.
    Any other value (a judge's list of useful units, a word, an object) is shown as it is,
    by :func:`value_text`: a table of labels may hold values that are not numbers."""
    if value is None or (isinstance(value, numbers.Real) and not math.isfinite(value)):
        return missing
    if isinstance(value, numbers.Integral):  # bool too: True prints as True
        return str(value)
    if not isinstance(value, numbers.Real):
        return value_text(value)
    text = f"{float(value):.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def value_text(value: Any) -> str:
    """A value that is not a number, on one line and at most :data:`VALUE_CHARS` long: text
    as it is, a list or an object as compact JSON (``[0, 2, 5]``), anything else by ``str``."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
        except (TypeError, ValueError):  # a circular structure
            text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def counted(n: Any, noun: str, *, grouped: bool = False) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 session``, ``2 sessions``, ``0
    pairs`` (``grouped``: thousands separated, ``1,234 turns``). A noun whose plural is not
    its singular plus ``s`` is given as ``singular/plural`` (``query/queries``)."""
    singular, _, plural = noun.partition("/")
    plural = plural or f"{singular}s"
    number = f"{n:,}" if grouped and isinstance(n, int) else f"{n}"
    return f"{number} {singular if n == 1 else plural}"


# How text that comes from data is shown on a terminal and in Markdown.
#
# How text that comes from data is shown: on a terminal and in Markdown.
#
# A scenario's name, a system's, a session id, a preference criterion, a model's reply kept in
# a cache: any of them may hold an escape sequence (``ESC ]0;title BEL`` retitles the terminal,
# ``ESC [2J`` clears it), a carriage return that overwrites what was printed, or a
# bidirectional control (U+202E turns ``evil‮gnp.exe`` into ``evilexe.png`` on screen). Every
# such string goes through :func:`shown` (one line: every control character escaped) or
# :func:`terminal_safe` (line feeds and tabs kept) before it is printed; the command line's
# standard streams apply :func:`terminal_safe` to everything written through them, whether
# they are a terminal or a pipe (a CI log, ``| less -R``, a pull-request comment), so a
# string a command forgets still reaches the reader escaped.
#
# Markdown (``compare`` and ``arena --format markdown``, pull-request comments) is HTML to the
# page that renders it: :func:`markdown_text` escapes HTML and Markdown's punctuation, and
# :func:`code_span` puts a name in a code span fenced by more backquotes than any run inside
# it, so a name with a backquote stays inside its span.

#: What a terminal must not receive raw: the C0 controls (escape, carriage return, bell,
#: backspace, line breaks), DEL and the C1 controls, the line and paragraph separators, and
#: the bidirectional controls (the embeddings and overrides U+202A-U+202E, the isolates
#: U+2066-U+2069, the marks U+200E U+200F U+061C).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_UNSAFE_IN_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


def shown(text: str) -> str:
    """``text`` on one line, each character :data:`UNSAFE` names written as its Python
    escape (``\\x1b``, ``\\n``, ``\\u202e``): a name printed as what it holds."""
    return UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def terminal_safe(text: str) -> str:
    """``text`` with every character :data:`UNSAFE` names but line feed and tab written as
    ``\\uXXXX``: inside a JSON string the same character, so a JSON document printed through
    it is still the same document."""
    return _UNSAFE_IN_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# Markdown's punctuation that can start or end markup (CommonMark's escapable characters
# that change what a line means), escaped with a backslash
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown text on one line: control characters escaped
    (:func:`shown`), HTML escaped (``<b>`` shows as ``<b>``, never as markup), Markdown's
    punctuation backslash-escaped (so it is no emphasis, link, code span or table cell
    border)."""
    escaped = html.escape(shown(text), quote=False)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", escaped)


def code_span(text: str, *, in_table: bool = True) -> str:
    """``text`` as a Markdown code span, shown literally: controls escaped (:func:`shown`),
    fenced by one backquote more than the longest run of backquotes inside it (CommonMark
    6.1), padded with a space when it starts or ends with a backquote; a pipe is escaped
    when the span sits in a table cell (GitHub's tables split cells on it even in a span).
    HTML inside a code span is not markup."""
    body = shown(text)
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or not body.strip():
        body = f" {body} "
    if in_table:
        body = body.replace("|", "\\|")
    return f"{fence}{body}{fence}"
