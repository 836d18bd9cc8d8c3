"""The command line imports only what the command being run needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Modules a command that neither judges nor reports must not pay for.
HEAVY = ("matplotlib", "scipy", "genir_eval.runner", "genir_eval.judges", "genir_eval.report")

PROBE = """
import json, sys
from genir_eval.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit_:
    code = exit_.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _imported(*argv: str) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("--version",),
        ("parse", "--help"),
        ("run", "--help"),
        ("compare", "--help"),
    ],
)
def test_help_and_version_import_no_heavy_module(argv):
    code, modules = _imported(*argv)
    assert code == 0
    assert not [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_parse_imports_neither_plots_nor_runner(tmp_path):
    out = tmp_path / "sessions.jsonl"
    code, modules = _imported("parse", str(ROOT / "fixtures" / "demo_sessions.md"), "-o", str(out))
    assert code == 0 and out.stat().st_size > 0
    heavy = ("matplotlib", "genir_eval.runner", "genir_eval.judges", "genir_eval.report")
    assert not [m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy)]


def test_every_command_is_listed_and_an_unknown_one_is_refused():
    listed = subprocess.run(
        [sys.executable, "-m", "genir_eval", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    for name in ("parse", "correlate", "cache", "run", "compare", "meta"):
        assert name in listed.stdout
    unknown = subprocess.run(
        [sys.executable, "-m", "genir_eval", "frobnicate"], capture_output=True, text=True, cwd=ROOT
    )
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
