"""The README's promises that code can check: its test command is what CI runs, and its
Python example is the one tests/test_api.py executes."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import genir_eval.runner

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _setup_commands() -> list[str]:
    section = README.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_readme_states_exactly_two_setup_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2
    assert commands[0].endswith("genir-eval run scenarios/demo-offline.toml")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = _setup_commands()[1]
    assert test_command in ci.splitlines()


def test_readme_python_example_is_the_tested_one() -> None:
    doc = genir_eval.runner.__doc__ or ""
    block = doc[doc.index("    import asyncio") : doc.index("Offline judges are deterministic")]
    example = textwrap.dedent(block).strip()
    fenced = re.search(r"```python\n(.*?)```", README, re.S)
    assert fenced is not None
    assert fenced.group(1).strip() == example
