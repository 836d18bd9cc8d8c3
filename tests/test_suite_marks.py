"""The default selection and what CI runs: ``python -m pytest`` leaves out the slow and heavy
marks named in pyproject.toml's addopts, each of them registered; ``.ci/run`` selects them
again (an empty mark expression after those addopts), so CI runs every test; ``-m MARK`` runs
one mark."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_RUN = ROOT / ".ci" / "run"

#: The marks the default selection leaves out, as the README and docs/contributing.md name them.
HEAVY = ["slow", "browser", "ray", "realtime", "fuzz"]


def _mark_expression(addopts: list[str]) -> str:
    [at] = [i for i, word in enumerate(addopts) if word == "-m"]
    return addopts[at + 1]


def _left_out(expression: str) -> list[str]:
    """The marks of ``not a and not b ...``; any other shape of expression is refused."""
    parts = expression.split(" and ")
    found = [re.fullmatch(r"not (\w+)", part.strip()) for part in parts]
    assert all(found), f"the default mark expression is not 'not a and not b ...': {expression}"
    return [match.group(1) for match in found if match]


def _registered(config: pytest.Config) -> set[str]:
    return {line.split(":", 1)[0].strip() for line in config.getini("markers")}


def test_the_default_leaves_out_exactly_the_heavy_marks_and_each_is_registered(
    pytestconfig: pytest.Config,
) -> None:
    addopts = pytestconfig.getini("addopts")
    assert _left_out(_mark_expression(addopts)) == HEAVY
    assert set(HEAVY) <= _registered(pytestconfig)
    assert "--strict-markers" in addopts  # a misspelt mark fails instead of running by default


def _ci_exports() -> dict[str, str]:
    """The variables .ci/run exports, as bash evaluates its ``export`` lines in an
    environment without them."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_ADDOPTS"}}
    script = 'eval "$(grep -E "^export " "$1")"; printf "%s" "${PYTEST_ADDOPTS-}"'
    done = subprocess.run(
        ["bash", "-c", script, "bash", str(CI_RUN)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return {"PYTEST_ADDOPTS": done.stdout}


def _collected(project: Path, env: dict[str, str], *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing selected
    return {line.split("::")[1] for line in done.stdout.splitlines() if "::" in line}


def test_ci_runs_every_mark_and_a_plain_run_only_the_default(
    pytestconfig: pytest.Config, tmp_path: Path
) -> None:
    # a project with this one's addopts and marks, and one test per heavy mark
    ini = ["[pytest]", f"addopts = {shlex.join(pytestconfig.getini('addopts'))}", "markers ="]
    ini += [f"    {line}" for line in pytestconfig.getini("markers")]
    (tmp_path / "pytest.ini").write_text("\n".join(ini) + "\n", encoding="utf-8")
    tests = ["import pytest", "", "def test_plain():", "    pass"]
    for mark in HEAVY:
        tests += ["", f"@pytest.mark.{mark}", f"def test_{mark}():", "    pass"]
    (tmp_path / "test_marks.py").write_text("\n".join(tests) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"

    assert _collected(tmp_path, env) == {"test_plain"}
    everything = {"test_plain", *(f"test_{mark}" for mark in HEAVY)}
    assert _collected(tmp_path, {**env, **_ci_exports()}) == everything
    assert _collected(tmp_path, env, "-m", "slow") == {"test_slow"}


def test_ci_exports_the_selection_before_its_test_command() -> None:
    lines = CI_RUN.read_text(encoding="utf-8").splitlines()
    [export] = [i for i, line in enumerate(lines) if line.startswith("export PYTEST_ADDOPTS=")]
    [command] = [i for i, line in enumerate(lines) if "python -m pytest" in line]
    assert export < command


def test_the_readme_and_the_contributing_page_say_how_to_run_each_mark() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    page = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    for text in (setup, page):
        assert '`python -m pytest -m ""`' in text
        for mark in HEAVY:
            assert f"`{mark}`" in text or f"-m {mark}`" in text, mark
