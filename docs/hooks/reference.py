"""The documentation's reference pages, generated from genir-eval's own registries when the
site is built (``mkdocs build``), so they cannot drift from the code: every judge with its
options (``genir-eval judges --json``), every measure with its parameters, range and
direction (``genir-eval measures --json``), every scenario key (the scenario reader's own
list of what it accepts) and every command's options (the command-line parser).

``pages()`` returns ``{path: markdown}``; the MkDocs hook ``on_files`` adds them to the site
as generated files, and ``tests/test_docs.py`` compares them with the registries."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _cell(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text.replace("|", "\\|").replace("\n", " ")


def command_json(*argv: str) -> Any:
    """What ``genir-eval ARGV --json`` prints, read back (run in this process)."""
    import contextlib
    import io

    from genir_eval.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--json"])
    if code != 0:
        raise RuntimeError(f"genir-eval {' '.join(argv)} --json exited {code}")
    return json.loads(out.getvalue())


def judges_page() -> str:
    lines = [
        "# Judges",
        "",
        "Every judge a scenario can name (`[[judges]] name = ...`), generated from",
        "`genir-eval judges --json`. Options go in the judge's `options` table or",
        "`--option KEY=VALUE`.",
        "",
    ]
    for judge in command_json("judges"):
        lines += [f"## `{judge['name']}`", "", f"Kind: `{judge['kind']}`. {judge['summary']}", ""]
        options = judge.get("options") or []
        if not options:
            lines += ["No options.", ""]
            continue
        extra = sorted({k for o in options for k in o} - {"name", "default", "help"})
        header = ["option", "default", *extra, "what it does"]
        lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        for option in options:
            cells = [f"`{option['name']}`", f"`{_cell(option.get('default'))}`"]
            cells += [_cell(option[k]) if k in option else "" for k in extra]
            cells.append(_cell(option.get("help", "")))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def measures_page() -> str:
    lines = [
        "# Measures",
        "",
        "Every measure `aggregate.measures` can name, generated from `genir-eval measures",
        "--json`. A measure prints with its parameters and parses back",
        "(`sDCG-URGE(br=1.35, bq=1.05)`).",
        "",
        "| measure | printed | level | parameters | range | direction | what it is |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in command_json("measures"):
        params = ", ".join(f"{k}={_cell(v)}" for k, v in (m.get("parameters") or {}).items())
        direction = "higher is better" if m.get("higher_is_better") else "lower is better"
        lines.append(
            f"| `{m['name']}` | `{_cell(m['printed'])}` | {m['level']} | {params or '–'} | "
            f"{_cell(m['range'])} | {direction} | {_cell(m['summary'])} |"
        )
    return "\n".join(lines) + "\n"


def scenario_keys() -> dict[str, list[str]]:
    """Each scenario table's keys, as the scenario reader lists them when it refuses an
    unknown one (so the list is the reader's own, never a copy)."""
    from genir_eval.errors import ConfigError
    from genir_eval.runner.scenario import parse_scenario

    base: dict = {"input": {"path": "fixtures/demo_sessions.csv"}, "judges": [{"name": "spans"}]}
    probes = {
        "": {**base, "zzz": 1},
        "input": {**base, "input": {"path": "x.csv", "zzz": 1}},
        "llm": {**base, "llm": {"zzz": 1}},
        "engine": {**base, "engine": {"zzz": 1}},
        "judges[]": {**base, "judges": [{"name": "spans", "zzz": 1}]},
        "aggregate": {**base, "aggregate": {"zzz": 1}},
        "aggregate.combine[]": {
            **base,
            "aggregate": {"combine": [{"name": "x", "scores": ["a", "b"], "zzz": 1}]},
        },
        "meta": {**base, "meta": {"zzz": 1}},
        "output": {**base, "output": {"zzz": 1}},
    }
    keys: dict[str, list[str]] = {}
    for table, document in probes.items():
        try:
            parse_scenario(copy.deepcopy(document), base_dir=ROOT)
        except ConfigError as error:
            listed = str(error).split("expected one of:", 1)[1]
            keys[table] = [k.strip() for k in listed.split(",")]
        else:  # pragma: no cover - an unknown key must be refused
            raise AssertionError(f"scenario table {table or '(top)'}: an unknown key was accepted")
    return keys


def scenario_page() -> str:
    lines = [
        "# Scenario keys",
        "",
        "Every key a scenario file (TOML) accepts, table by table, as the scenario reader lists",
        "them; the user guide's scenario page says what each does. Unknown keys are errors.",
        "",
    ]
    for table, keys in scenario_keys().items():
        title = f"`[{table}]`" if table and not table.endswith("[]") else f"`{table or 'top level'}`"
        if table.endswith("[]"):
            title = f"`[[{table[:-2]}]]`"
        lines += [f"## {title}", ""]
        prefix = f"{table}." if table else ""
        lines += [f"- `{prefix}{key}`" for key in keys]
        lines.append("")
    return "\n".join(lines)


def _commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix} {name}".strip()
                found.append((path, sub))
                found += _commands(sub, path)
    return found


def commands_page() -> str:
    from genir_eval.cli import build_parser

    lines = [
        "# Commands",
        "",
        "Every command and option, generated from the command-line parser (the same text as",
        "`genir-eval COMMAND --help`).",
        "",
    ]
    for path, parser in _commands(build_parser()):
        lines += [f"## `genir-eval {path}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def pages() -> dict[str, str]:
    return {
        "reference/judges.md": judges_page(),
        "reference/measures.md": measures_page(),
        "reference/scenario.md": scenario_page(),
        "reference/commands.md": commands_page(),
    }


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated reference pages to the site."""
    from mkdocs.structure.files import File

    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files
