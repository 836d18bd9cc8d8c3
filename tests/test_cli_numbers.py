"""Every number on the command line is checked as it is read, and a bad one (or any other
mistake on the command line) is one located line, exit code 2, before any work: not the
usage, not a traceback, not a refusal after the paid calls.

The flags are found in the parser itself, so a numeric flag added later is covered (and one
added with a bare ``type=int`` fails the first test).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from genir_eval.cli import build_parser, main
from genir_eval.settings import Setting, SettingType

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "scenarios" / "demo-offline.toml"


def _flags() -> Iterator[tuple[str, str, argparse.Action]]:
    top = build_parser()
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, parser in action.choices.items():
                for option in parser._actions:
                    if option.option_strings and option.nargs != 0:
                        yield command, option.option_strings[-1], option


FLAGS = list(_flags())
NUMERIC = [(c, f, a.type.setting) for c, f, a in FLAGS if isinstance(a.type, SettingType)]

# the first positional arguments each command needs before its flags are read
_POSITIONAL = {
    "run": [str(DEMO)],
    "compare": ["RUN_A", "RUN_B"],
    "meta": ["SESSIONS", "--judge", "spans"],
    "correlate": ["SESSIONS"],
}


def _bad_values(setting: Setting) -> list[str]:
    values = ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "x", "", " ", "1,5"]
    values += ["0x10", "١٢"]  # hexadecimal, Arabic-Indic digits: not numbers here
    values.append(
        repr(setting.minimum - 1) if not setting.integer else str(int(setting.minimum) - 1)
    )
    values.append(
        str(int(setting.maximum) * 10 + 10) if setting.integer else f"{setting.maximum * 10:g}"
    )
    if setting.above:
        values.append(str(int(setting.minimum)))
    if setting.below:
        values.append(str(int(setting.maximum)))
    if setting.integer:
        values += ["1.5", "1e3", str(10**400)]
    return values


CASES = [
    pytest.param(command, flag, value, id=f"{command}{flag}={value!r}")
    for command, flag, setting in NUMERIC
    for value in _bad_values(setting)
]


def test_every_numeric_flag_is_a_declared_setting() -> None:
    """A flag that takes a number takes it through genir_eval.settings (range, nan, inf)."""
    assert len(NUMERIC) >= 20
    loose = [
        f"genir-eval {command} {flag}"
        for command, flag, action in FLAGS
        if action.type in (int, float)
    ]
    assert not loose, f"numeric flags read with a bare int/float: {loose}"


@pytest.mark.parametrize(("command", "flag", "value"), CASES)
def test_a_bad_number_is_one_line_before_any_work(
    command: str, flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [command, *_POSITIONAL.get(command, []), f"{flag}={value}"]
    if command == "run":
        argv += ["--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"genir-eval: error: {command}: argument {flag}")
    assert "expected" in lines[0] and "usage:" not in err and "Traceback" not in err
    assert not out.exists()  # nothing was started


@pytest.mark.parametrize(
    "argv",
    [
        ["run"],
        ["run", str(DEMO), "--no-such-flag"],
        ["run", str(DEMO), "--executor", "cloud"],
        ["run", str(DEMO), "--rpm"],
        ["compare", "a"],
        ["meta", "SESSIONS"],
        ["cache", "show"],
        ["cache"],
        ["frobnicate"],
        [],
        ["parse", "x.csv", "--format", "xlsx"],
    ],
    ids=repr,
)
def test_any_command_line_mistake_is_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("genir-eval: error: ") and "--help` lists the options" in err


def test_help_and_version_still_print_and_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    assert "usage: genir-eval run" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("genir-eval ")
