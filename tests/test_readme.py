"""The README's promises that code can check: its test command is what CI runs, and its
Python example is the one tests/test_api.py executes."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import genir_eval.runner

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = ROOT / "docs" / "guide"


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


def test_guide_python_example_is_the_tested_one() -> None:
    doc = genir_eval.runner.__doc__ or ""
    block = doc[doc.index("    import asyncio") : doc.index("Offline judges are deterministic")]
    example = textwrap.dedent(block).strip()
    page = (GUIDE / "python-api.md").read_text(encoding="utf-8")
    fenced = re.search(r"```python\n(.*?)```", page, re.S)
    assert fenced is not None
    assert fenced.group(1).strip() == example


def _allowed_keys(section: str | None, where: dict) -> list[str]:
    """The keys the scenario parser accepts in ``section``, read from the error it raises
    for an unknown key (so the list is the parser's own, never a copy)."""
    import copy

    from genir_eval.errors import ConfigError
    from genir_eval.runner.scenario import parse_scenario

    document = copy.deepcopy(where)
    try:
        parse_scenario(document, base_dir=ROOT)
    except ConfigError as error:
        message = str(error)
    else:  # pragma: no cover - the unknown key must be refused
        raise AssertionError(f"{section}: an unknown key was accepted")
    return [k.strip() for k in message.split("expected one of:", 1)[1].split(",")]


def test_guide_scenario_page_covers_every_key() -> None:
    section = (GUIDE / "scenarios.md").read_text(encoding="utf-8")
    base: dict = {"input": {"path": "fixtures/demo_sessions.csv"}, "judges": [{"name": "spans"}]}
    cases = {
        "": {**base, "zzz": 1},
        "input.": {**base, "input": {"path": "x.csv", "zzz": 1}},
        "llm.": {**base, "llm": {"zzz": 1}},
        "engine.": {**base, "engine": {"zzz": 1}},
        "judges[].": {**base, "judges": [{"name": "spans", "zzz": 1}]},
        "aggregate.": {**base, "aggregate": {"zzz": 1}},
        "aggregate.combine[].": {
            **base,
            "aggregate": {"combine": [{"name": "x", "scores": ["a", "b"], "zzz": 1}]},
        },
        "meta.": {**base, "meta": {"zzz": 1}},
        "output.": {**base, "output": {"zzz": 1}},
    }
    tables = {"input", "llm", "engine", "judges", "aggregate", "meta", "output"}
    for prefix, document in cases.items():
        for key in _allowed_keys(prefix, document):
            if not prefix and key in tables:
                continue
            if prefix == "aggregate." and key == "combine":
                continue
            assert f"`{prefix}{key}`" in section, f"scenario key {prefix}{key} is not documented"


def test_readme_quick_tour_shows_a_committed_screenshot_of_the_report() -> None:
    start = README.index("## A five-minute tour")
    tour = README[start : README.index("\n## ", start + 3)]
    images = re.findall(r"!\[[^\]]+\]\(([^)]+\.png)\)", tour)
    assert images == ["docs/report-urge.png"]
    png = (ROOT / images[0]).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000  # a page, not a blank
