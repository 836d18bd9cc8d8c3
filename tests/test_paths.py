"""A path that is a symbolic link looping on itself (or a folder on the way that is one), or a
link to nothing, given to any path argument or path setting: one located line, exit code 2,
no traceback and no run folder.

Before, ``Path.resolve()`` raised ``RuntimeError: Symlink loop`` for ``--out``, ``--cache``,
``--journal``, ``--prices``, ``compare RUN_A`` and ``--option template=``, and the readers
said "no such file" for a loop. The arguments and scenario keys are listed here; every form
of bad path is tried on each.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.paths import real_path, why_missing

ROOT = Path(__file__).resolve().parent
DEMO = ROOT.parent / "scenarios" / "demo-offline.toml"
SESSIONS = ROOT.parent / "fixtures" / "citation_sessions.jsonl"

#: a bad path, made in a folder: (name, maker returning the path to give)
FORMS: dict[str, Callable[[Path], Path]] = {}


def _form(name: str) -> Callable[[Callable[[Path], Path]], Callable[[Path], Path]]:
    def register(make: Callable[[Path], Path]) -> Callable[[Path], Path]:
        FORMS[name] = make
        return make

    return register


@_form("a link to itself")
def _self_loop(folder: Path) -> Path:
    link = folder / "loop"
    link.symlink_to("loop")
    return link


@_form("two links to each other")
def _pair_loop(folder: Path) -> Path:
    (folder / "a").symlink_to("b")
    (folder / "b").symlink_to("a")
    return folder / "a"


@_form("a file under a looping folder")
def _under_loop(folder: Path) -> Path:
    (folder / "loop").symlink_to("loop")
    return folder / "loop" / "x.sqlite"


# Arguments: (id, argv given the bad path and a fresh output folder, the forms that apply).
# An output folder or file that is a link to nothing is created where it points, as
# writing through a link does; a loop is refused everywhere.
ARGUMENTS: list[tuple[str, Callable[[Path, Path], list[str]]]] = [
    ("run SCENARIO", lambda p, out: ["run", str(p), "--out", str(out)]),
    ("run --out", lambda p, out: ["run", str(DEMO), "--out", str(p)]),
    ("run --cache", lambda p, out: ["run", str(DEMO), "--out", str(out), "--cache", str(p)]),
    ("run --journal", lambda p, out: ["run", str(DEMO), "--out", str(out), "--journal", str(p)]),
    ("run --prices", lambda p, out: ["run", str(DEMO), "--out", str(out), "--prices", str(p)]),
    ("parse INPUT", lambda p, out: ["parse", str(p), "-o", str(out / "s.jsonl")]),
    (
        "parse --sources",
        lambda p, out: ["parse", str(SESSIONS), "-o", str(out), "--sources", str(p)],
    ),
    ("parse -o", lambda p, out: ["parse", str(SESSIONS), "-o", str(p / "s.jsonl")]),
    ("correlate SESSIONS", lambda p, out: ["correlate", str(p)]),
    ("compare RUN_A", lambda p, out: ["compare", str(p), str(out)]),
    ("cache stats --cache", lambda p, out: ["cache", "stats", "--cache", str(p)]),
    ("cache show --cache", lambda p, out: ["cache", "show", "abc", "--cache", str(p)]),
    ("meta SESSIONS", lambda p, out: ["meta", str(p), "--judge", "spans"]),
    *[
        (
            f"meta {flag}",
            lambda p, out, flag=flag: ["meta", str(SESSIONS), "--judge", "spans", flag, str(p)],
        )
        for flag in ("--sources", "--cache", "--journal", "--prices")
    ],
    (
        "meta --paraphrase",
        lambda p, out: [
            "meta",
            str(SESSIONS),
            "--judge",
            "link_usefulness.dna",
            "--prompt-selection",
            "--paraphrase",
            str(p),
        ],
    ),
    (
        "meta --option template=",
        lambda p, out: ["meta", str(SESSIONS), "--judge", "spans", "--option", f"template={p}"],
    ),
]

# Scenario keys holding a path: (id, the TOML lines replacing the demo's)
SCENARIO_KEYS = [
    ("input.path", '[input]\npath = "{p}"\nformat = "urge"\n'),
    ("input.sources", '[input]\npath = "{demo}"\nformat = "urge"\nsources = "{p}"\n'),
    ("engine.cache", '[engine]\ncache = "{p}"\n'),
    ("engine.journal", '[engine]\njournal = "{p}"\ncache_mode = "off"\n'),
    ("engine.prices", '[engine]\nprices = "{p}"\n'),
    ("output.dir", '[output]\ndir = "{p}"\n'),
    ("judges.options.template", '[[judges]]\nname = "spans"\noptions = {{ template = "{p}" }}\n'),
]


def _one_located_line(err: str, path: Path) -> str:
    lines = [line for line in err.splitlines() if line.startswith("genir-eval: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    shown = str(path)
    assert shown in lines[0] or str(real_path(path)) in lines[0] or path.name in lines[0], err
    return lines[0]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize(("argument", "argv"), ARGUMENTS, ids=[a for a, _ in ARGUMENTS])
def test_a_looping_path_argument_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    form: str,
    argument: str,
    argv: Callable[[Path, Path], list[str]],
) -> None:
    bad = FORMS[form](tmp_path)
    out = tmp_path / "out"
    code = main(argv(bad, out))
    err = capsys.readouterr().err
    assert code == 2, err
    _one_located_line(err, bad)
    assert not (out / "run.json").exists()


def _scenario(tmp_path: Path, lines: str, bad: Path) -> Path:
    text = DEMO.read_text(encoding="utf-8")
    demo_input = DEMO.parent.parent / "fixtures" / "demo_sessions.csv"
    text = text.replace('"../fixtures/', f'"{DEMO.parent.parent}/fixtures/')
    text = text.replace('cache = "../.genir-cache/cache.sqlite"', f'cache = "{tmp_path}/c.sqlite"')
    section = lines.split("\n", 1)[0]
    body = lines.split("\n", 1)[1].format(p=bad, demo=demo_input)
    if section == "[[judges]]":
        text += f"\n{lines.format(p=bad, demo=demo_input)}"
    elif section in text:
        start = text.index(section)
        end = text.find("\n[", start + 1)
        end = len(text) if end < 0 else end
        kept = [
            line
            for line in text[start + len(section) + 1 : end].splitlines()
            if line.split("=")[0].strip()
            not in {k.split("=")[0].strip() for k in body.splitlines()}
        ]
        text = text[:start] + section + "\n" + body + "\n".join(kept) + "\n" + text[end:]
    else:
        text += f"\n{section}\n{body}"
    scenario = tmp_path / "s.toml"
    scenario.write_text(text, encoding="utf-8")
    return scenario


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize(("key", "lines"), SCENARIO_KEYS, ids=[k for k, _ in SCENARIO_KEYS])
def test_a_looping_path_setting_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str, key: str, lines: str
) -> None:
    bad = FORMS[form](tmp_path)
    scenario = _scenario(tmp_path, lines, bad)
    out = tmp_path / "out"
    argv = ["run", str(scenario), "--quiet"] + ([] if key == "output.dir" else ["--out", str(out)])
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    _one_located_line(err, bad)
    assert not (out / "run.json").exists()


@pytest.mark.parametrize("form", sorted(FORMS))
def test_why_missing_names_the_loop(tmp_path: Path, form: str) -> None:
    bad = FORMS[form](tmp_path)
    assert "a symbolic link that loops" in why_missing(bad)
    assert real_path(bad).is_absolute()  # resolving never raises


def test_why_missing_tells_the_other_cases_apart(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    assert why_missing(tmp_path / "absent") == "no such file"
    assert "a symbolic link to 'nowhere', which does not exist" in why_missing(
        tmp_path / "dangling"
    )
    assert why_missing(tmp_path / "file" / "under") == "no such file"
    assert why_missing(tmp_path / "folder") == "a folder, not a file"
    assert why_missing(tmp_path / "file", "folder") == "not a folder"
    assert os.path.lexists(tmp_path / "dangling")
