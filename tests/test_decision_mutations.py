"""``bench/decision_mutations.py``, the project's one-line mutants of the decision code: each
mutant's line is in its file exactly once and its tests exist (the script says STALE
otherwise), and a bounded subset (issue 51's mutants whose tests take seconds, at least one
per module) is applied in a copy of the repository, each killed by a test. Slow: the subset
starts a pytest per mutant (about a minute of processor time; 3 minutes on two
busy shared cores at nice 19)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "decision_mutations.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("decision_mutations", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_every_mutant_names_a_line_of_its_file_and_tests_that_exist() -> None:
    script = _script()
    whats = [m.what for m in script.MUTATIONS]
    assert len(set(whats)) == len(whats)  # --ci picks them by meaning
    assert set(script.CI_SUBSET) <= set(whats)
    for m in script.MUTATIONS:
        source = (ROOT / m.file).read_text(encoding="utf-8")
        assert source.count(m.line + "\n") == 1, m.what
        assert m.mutant != m.line, m.what
        for test in m.tests:
            assert (ROOT / test.split("::")[0]).is_file(), (m.what, test)
        assert script.module_of(m)
    # the modules issue 51 asked for are covered
    modules = {script.module_of(m) for m in script.MUTATIONS}
    assert {"decision layer", "headline", "nuggets", "labelling", "compare", "arena"} <= modules


@pytest.mark.slow
def test_the_ci_subset_is_killed_module_by_module(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--ci"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    applied = [line for line in lines if line[:1].isdigit()]
    assert len(applied) == len(_script().CI_SUBSET)
    assert all(": caught by tests/" in line for line in applied), done.stdout
    rates = lines[lines.index("kill rate per module:") + 1 :]
    for module in ("decision layer", "headline", "nuggets", "labelling", "compare", "arena"):
        assert any(line.strip().startswith(f"{module}: ") for line in rates), module
    size = len(applied)
    assert rates[-1].strip().startswith(f"all: {size} of {size} killed (100.0%)")
