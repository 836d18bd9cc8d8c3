"""How a figure prints in text: one rule for every table and line that shows one (the kinds'
``genir-eval meta`` lines, the terminal summary, the judge-quality lines, the HTML report).
A base module, so every stage that prints a figure imports it from the same place."""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

__all__ = ["counted", "number_text", "value_text"]

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
