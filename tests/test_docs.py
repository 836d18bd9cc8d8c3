"""The documentation keeps its promises: a short README, a reference generated from the
registries that lists exactly what the commands list, and every command shown to a user
valid as written (the README's tour is run for real)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))
SHARED = ROOT.parent / "shared"


def _reference_module():
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "docs/hooks/reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cli_json(*argv: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "genir_eval", *argv, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(done.stdout)


def _code_lines(text: str) -> list[str]:
    """Every line of the page's code: indented blocks and fenced blocks (not ```python or
    ```text ones), with shell continuations joined."""
    lines: list[str] = []
    fence: str | None = None
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("```"):
            fence = None if fence is not None else (stripped[3:].strip() or "sh")
        elif fence is not None:
            if fence in {"sh", "bash", "shell", "console"}:
                lines.append(stripped)
        elif raw.startswith("    "):
            lines.append(stripped)
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line
        else:
            joined.append(line)
    return joined


def _line_commands(line: str, program: str) -> list[list[str]]:
    """The argument lists of the ``program`` commands on one shell line, after any
    ``NAME=value`` environment settings and up to a comment, pipe or ``&&``."""
    found = []
    for part in re.split(r"\s(?:&&|\|\||\|)\s", line):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            continue
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words = words[1:]
        if words[:1] == [program] and len(words) > 1:
            found.append(words[1:])
    return found


def _commands(text: str, program: str) -> list[list[str]]:
    return [argv for line in _code_lines(text) for argv in _line_commands(line, program)]


def _pages() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in [README, *GUIDE]]


def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 400


def test_reference_lists_exactly_the_judges_and_measures_the_commands_list() -> None:
    pages = _reference_module().pages()
    judges = re.findall(r"^## `([^`]+)`$", pages["reference/judges.md"], re.M)
    assert sorted(judges) == sorted(j["name"] for j in _cli_json("judges"))
    measures = re.findall(r"^\| `([^`]+)` \|", pages["reference/measures.md"], re.M)
    assert sorted(measures) == sorted(m["name"] for m in _cli_json("measures"))
    commands = re.findall(r"^## `genir-eval ([^`]+)`$", pages["reference/commands.md"], re.M)
    assert {"run", "compare", "arena", "meta", "parse", "judges", "measures"} <= set(commands)


def test_reference_lists_every_option_of_every_judge() -> None:
    page = _reference_module().pages()["reference/judges.md"]
    for judge in _cli_json("judges"):
        section = page.split(f"## `{judge['name']}`", 1)[1].split("\n## ", 1)[0]
        for option in judge["options"]:
            assert f"| `{option['name']}` |" in section, (judge["name"], option["name"])


def test_every_genir_eval_command_shown_to_a_user_parses() -> None:
    """A renamed command or flag in the code fails here: each command of the README and the
    user guide is read by the real command-line parser."""
    seen = 0
    for name, text in _pages():
        for argv in _commands(text, "genir-eval"):
            if argv[0] in {"--help", "--version"} or "--help" in argv:
                continue
            try:
                build_parser(argv).parse_args(argv)
            except SystemExit as exit_:
                pytest.fail(f"{name}: `genir-eval {shlex.join(argv)}` is refused ({exit_.code})")
            seen += 1
    assert seen >= 15  # the pages show many commands; finding none means the reader broke


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix} {name}".strip()
                found[path] = {o for a in sub._actions for o in a.option_strings}
                found.update(_subcommands(sub, path))
    return found


def test_every_flag_named_inline_belongs_to_its_command() -> None:
    """Commands written in the text (`genir-eval compare ... --max-drop`) may leave out
    required arguments, but every flag they name is one their command has."""
    options = _subcommands(build_parser())
    seen = 0
    for name, text in _pages():
        for span in re.findall(r"`genir-eval ([^`]+)`", text):
            words = span.split()
            command = " ".join(words[:2]) if " ".join(words[:2]) in options else words[0]
            if command not in options:
                if not words[0].startswith("-") and not words[0].isupper():
                    pytest.fail(f"{name}: `genir-eval {span}`: no command {words[0]!r}")
                continue
            for flag in (w.split("=", 1)[0] for w in words if w.startswith("--")):
                flag = flag.rstrip(".,;:)")
                assert flag in options[command] or flag == "--help", (
                    f"{name}: `genir-eval {span}`: {flag} is not an option of {command}"
                )
                seen += 1
    assert seen >= 10


def _bench_commands(text: str) -> list[list[str]]:
    found = _commands(text, "python")
    for span in re.findall(r"`((?:nice -n \d+ )?python3? bench/[^`]+)`", text):
        words = shlex.split(span.replace("nice -n 10 ", ""), comments=True)
        found.append(words[1:])
    return [argv for argv in found if argv and argv[0].startswith("bench/")]


def _help(script: Path, *sub: str) -> str:
    return subprocess.run(
        [sys.executable, str(script), *sub, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout


@pytest.mark.slow
def test_every_bench_command_shown_names_a_real_script_and_real_flags() -> None:
    """The benchmark commands of the README, the guide and the benchmarks page: the script
    exists and every flag is one its --help lists."""
    helps: dict[str, str] = {}
    seen = 0
    pages = [*_pages(), ("docs/benchmarks.md", (ROOT / "docs/benchmarks.md").read_text("utf-8"))]
    for name, text in pages:
        for argv in _bench_commands(text):
            script = ROOT / argv[0]
            assert script.is_file(), f"{name}: {argv[0]} does not exist"
            flags = [a.split("=", 1)[0] for a in argv[1:] if a.startswith("--")]
            seen += 1
            if "argparse" not in script.read_text(encoding="utf-8"):
                # a script without options: running it with --help would run it
                assert not flags, f"{name}: {argv[0]} takes no options, the page gives {flags}"
                continue
            if argv[0] not in helps:
                helps[argv[0]] = _help(script)
            top = helps[argv[0]]
            sub = argv[1] if len(argv) > 1 and re.search(rf"[{{,]{argv[1]}[,}}]", top) else None
            if sub is not None:  # a subcommand's flags are in its own --help
                key = f"{argv[0]} {sub}"
                if key not in helps:
                    helps[key] = _help(script, sub)
                argv = [key, *argv[2:]]
            for flag in flags:
                assert re.search(rf"{re.escape(flag)}\b", helps[argv[0]]), (
                    f"{name}: `python {shlex.join(argv)}`: {flag} is not an option of {argv[0]}"
                )
    assert seen >= 10


@pytest.mark.slow
def test_the_readme_tour_runs_as_written(tmp_path: Path, shared: Any) -> None:
    """The tour's commands, in order, in a copy of the repository beside ../shared: each
    exits 0, except those that need a key (they are read by the parser test above)."""
    shared(SHARED / "urge", "the URGE sample the tour reads")
    shared(SHARED / "crowdrag", "the CrowdRAG topics the tour reads")
    repo = tmp_path / "repo"
    for folder in ("scenarios", "fixtures"):
        shutil.copytree(ROOT / folder, repo / folder)
    (tmp_path / "shared").symlink_to(SHARED)
    text = README.read_text(encoding="utf-8")
    tour_text = text[text.index("## A five-minute tour") :]
    tour_text = tour_text[: tour_text.index("\n## ", 3)]
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    ran = 0
    tour = [
        argv
        for line in _code_lines(tour_text)
        if "API_KEY=" not in line  # needs a key: read by the parser test above
        for argv in _line_commands(line, "genir-eval")
    ]
    for argv in tour:
        argv = [os.path.join(*p.split("/")) if "*" not in p else p for p in argv]
        expanded: list[str] = []
        for arg in argv:
            matches = sorted(str(p.relative_to(repo)) for p in repo.glob(arg)) if "*" in arg else []
            expanded += matches or [arg]
        done = subprocess.run(
            [sys.executable, "-m", "genir_eval", *expanded],
            capture_output=True,
            text=True,
            cwd=repo,
            env=environment,
            timeout=900,
        )
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
        ran += 1
    assert ran >= 8
    assert (repo / "runs" / "arena" / "report.html").is_file()
    assert (repo / "runs" / "candidate" / "report.html").is_file()
