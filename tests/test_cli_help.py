"""Every command-line option explains itself: help text, and its default where it takes a
value; the user guide's command table names every option of every command."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from genir_eval.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix} {name}".strip()
                yield path, sub
                yield from _commands(sub, path)


COMMANDS = dict(_commands(build_parser()))


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
    ]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_has_help_and_its_default(command: str) -> None:
    for action in _options(COMMANDS[command]):
        name = action.option_strings[-1] if action.option_strings else action.dest
        assert action.help, f"genir-eval {command} {name}: no help text"
        if action.option_strings and action.nargs != 0:
            assert "default" in action.help or "required" in action.help, (
                f"genir-eval {command} {name}: the help does not say its default"
            )


def test_guide_command_table_covers_every_option() -> None:
    section = (ROOT / "docs" / "guide" / "commands.md").read_text(encoding="utf-8")
    for command, parser in COMMANDS.items():
        assert f"genir-eval {command.split()[0]}" in section, f"{command} not in the table"
        for action in _options(parser):
            for option in action.option_strings:
                if option.startswith("--"):
                    assert re.search(rf"`[^`]*{re.escape(option)}\b", section), (
                        f"genir-eval {command} {option} is not in the user guide's command table"
                    )


def test_meta_help_names_an_existing_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["meta", "--help"])
    text = capsys.readouterr().out
    assert "--list-judges" not in text and "genir-eval judges" in text


def test_help_lists_the_commands_in_the_guides_order(capsys: pytest.CaptureFixture[str]) -> None:
    """`genir-eval --help` lists the commands as the guide's command table orders them, and
    says that `parse` reads a CrowdRAG folder too."""
    from genir_eval.cli import main

    assert main(["--help"]) == 0
    listed = re.findall(r"^    (\w+)\b", capsys.readouterr().out, flags=re.M)
    table = (ROOT / "docs" / "guide" / "commands.md").read_text(encoding="utf-8")
    documented = list(dict.fromkeys(re.findall(r"^\| `genir-eval (\w+)", table, flags=re.M)))
    if "serve" not in documented:  # in label's row
        documented.insert(documented.index("label") + 1, "serve")
    assert listed == documented
    assert "CrowdRAG" in build_parser().format_help()
