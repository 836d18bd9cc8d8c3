"""The hostile-input corpus (``hostile_cases.py``): every case exits as its table row says,
with its message fragment, one line and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_cases import CASES, Case, outcome, run_case


@pytest.mark.parametrize("case", CASES, ids=[f"class{c.klass}-{c.name}" for c in CASES])
def test_hostile_case(case: Case, tmp_path: Path) -> None:
    code, out, err = run_case(case, tmp_path)
    assert outcome(case, code, out, err) is None


def test_corpus_covers_each_class_with_errors_and_loads() -> None:
    classes = {c.klass for c in CASES}
    assert classes == {1, 6, 8}
    # each class has cases that must be refused; the look-alike class also a pair that must
    # still load (refusing every id would pass the rest)
    assert all(any(c.klass == k and c.exit == 2 for c in CASES) for k in classes)
    assert any(c.klass == 8 and c.exit == 0 for c in CASES)
    assert len({c.name for c in CASES}) == len(CASES)
