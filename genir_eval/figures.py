"""How a figure prints in text: one rule for every table and line that shows one (the kinds'
``genir-eval meta`` lines, the terminal summary, the judge-quality lines, the HTML report).
A base module, so every stage that prints a figure imports it from the same place."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["counted", "number_text"]


def number_text(value: Any, digits: int = 3, missing: str = "-") -> str:
    """A figure with fixed decimals, never ``-0.000``; a whole number as it is; ``missing``
    (``-`` unless the caller's text says ``n/a`` or ``–``) for none or a non-finite float."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    if isinstance(value, int):  # bool too: True prints as True
        return str(value)
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def counted(n: Any, noun: str, *, grouped: bool = False) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 session``, ``2 sessions``, ``0
    pairs`` (``grouped``: thousands separated, ``1,234 turns``). A noun whose plural is not
    its singular plus ``s`` is given as ``singular/plural`` (``query/queries``)."""
    singular, _, plural = noun.partition("/")
    plural = plural or f"{singular}s"
    number = f"{n:,}" if grouped and isinstance(n, int) else f"{n}"
    return f"{number} {singular if n == 1 else plural}"
