"""The output and terminal classes of the fourth red team (``outputs_terminal_cases.py``,
issue 46 points 1 and 7): every case exits as its row says, with its message fragment, no
traceback, nothing raw it names on the streams, and what stood in the folder still there."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_cases import run_case
from outputs_terminal_cases import CASES, Case, outcome


@pytest.mark.parametrize("case", CASES, ids=[f"{c.klass}-{c.name}" for c in CASES])
def test_output_and_terminal_case(case: Case, tmp_path: Path) -> None:
    code, out, err = run_case(case, tmp_path)  # type: ignore[arg-type]
    assert outcome(case, tmp_path, code, out, err) is None


def test_each_class_has_refusals_and_a_command_that_still_works() -> None:
    assert {c.klass for c in CASES} == {"outputs", "terminal"}
    assert sum(c.klass == "outputs" for c in CASES) >= 10
    # the terminal class must also print (exit 0) what it escapes: refusing would pass
    assert any(c.klass == "terminal" and c.exit == 0 and c.never for c in CASES)
    assert len({c.name for c in CASES}) == len(CASES)
