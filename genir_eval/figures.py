"""How a figure prints in text: one rule for every table and line that shows one (the kinds'
``genir-eval meta`` lines, the terminal summary, the judge-quality lines, the HTML report).
A base module, so every stage that prints a figure imports it from the same place."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["number_text"]


def number_text(value: Any, digits: int = 3, missing: str = "-") -> str:
    """A figure with fixed decimals, never ``-0.000``; a whole number as it is; ``missing``
    (``-`` unless the caller's text says ``n/a`` or ``–``) for none or a non-finite float."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    if isinstance(value, int):  # bool too: True prints as True
        return str(value)
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text
