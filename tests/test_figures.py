"""How a figure prints in text (``genir_eval.figures.number_text``), the one rule the kinds'
``genir-eval meta`` lines, the summary and the report share. Expected texts written by hand
from the rule: fixed decimals, no ``-0.000``, whole numbers as they are, a placeholder for none."""

from __future__ import annotations

import math

import pytest

from genir_eval.figures import number_text

CASES = [
    # value, digits, missing, expected
    (0.4591, 3, "-", "0.459"),
    (-0.4591, 3, "-", "-0.459"),
    (-0.0004, 3, "-", "0.000"),  # never -0.000
    (-0.004, 2, "-", "0.00"),
    (2.0, 2, "-", "2.00"),
    (12, 3, "-", "12"),
    (True, 3, "-", "True"),
    (None, 3, "-", "-"),
    (None, 3, "n/a", "n/a"),  # genir-eval meta's lines
    (None, 3, "–", "–"),  # the HTML report's
    (math.nan, 3, "n/a", "n/a"),
    (math.inf, 3, "-", "-"),
]


@pytest.mark.parametrize(("value", "digits", "missing", "expected"), CASES)
def test_number_text(value: object, digits: int, missing: str, expected: str) -> None:
    assert number_text(value, digits, missing) == expected
