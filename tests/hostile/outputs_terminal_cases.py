"""The fourth red team's output and terminal classes (issue 46 points 1 and 7), as hostile
cases: each builds its files in an empty folder, runs a command, and says what the command
must do (exit code, a message fragment, what must never appear on its streams) and what must
still stand afterwards (a FIFO still a FIFO, a link's target unchanged, nothing written
outside the folder).

Classes: ``outputs`` (a device, FIFO, socket, link or link loop where a command writes; a
scenario name that leads out of ``runs/``), ``terminal`` (escape sequences and bidirectional
controls from a cache, a scenario name, a preference criterion reaching the streams raw;
HTML and backquotes in a system name breaking the Markdown).

``python tests/hostile/outputs_terminal_cases.py`` runs every case in a subprocess and prints
the failures and the counts per class (how the before/after counts of issue 46 were taken:
run it with PYTHONPATH at a checkout of the base commit for "before").
"""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hostile_cases import (
    _cache_with_run,
    _crowdrag,
    _preferences,
    _systems,
    run_case,
    session,
    write_jsonl,
)


@dataclass(frozen=True)
class Case:
    name: str
    klass: str
    build: Callable[[Path], list[str]]
    exit: int
    fragment: str
    never: tuple[str, ...] = ()
    #: what must hold of the folder afterwards: ``None`` when it does, else what is wrong
    after: Callable[[Path], str | None] = field(default=lambda d: None)


ESCAPES = "\x1b]0;owned\x07\x1b[2J"
RLO = "\u202e"
RAW = ("\x1b", "\x07", RLO)


# -- things standing where a command writes -------------------------------------------------


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _link_out(d: Path, path: Path) -> Path:
    (d / "precious.txt").write_text("keep me\n", encoding="utf-8")
    path.symlink_to(d / "precious.txt")
    return path


def _loop(path: Path) -> Path:
    path.symlink_to(path.name)
    return path


def _device(path: Path) -> Path:
    """A character device node like /dev/null's (made here; root can, others cannot: then
    a FIFO stands in, which the case's fragment allows)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        os.mkfifo(path)
    return path


def _socket(path: Path) -> Path:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()
    return path


def _still(kind: Callable[[int], bool], what: str) -> Callable[[Path], str | None]:
    def check(d: Path) -> str | None:
        target = d / "target"
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            return f"the {what} was removed"
        return None if kind(mode) else f"the {what} was replaced"

    return check


def _precious_kept(d: Path) -> str | None:
    if not (d / "target").is_symlink():
        return "the link was replaced"
    if (d / "precious.txt").read_text(encoding="utf-8") != "keep me\n":
        return "written through the link"
    return None


def _parse_to(make: Callable[[Path, Path], Path] | Callable[[Path], Path]) -> Callable:
    def build(d: Path) -> list[str]:
        write_jsonl(d / "s.jsonl", [session("s1")])
        target = d / "target"
        make(d, target) if make is _link_out else make(target)  # type: ignore[call-arg]
        return ["parse", str(d / "s.jsonl"), "-o", str(target)]

    return build


def _arena_out(make: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        make(d / "target")
        return [
            "arena",
            *_systems(d),
            "--out",
            str(d / "target"),
            "--provider",
            "offline",
            "--quiet",
        ]

    return build


def _scenario(d: Path, name: str, output: str | None = None) -> Path:
    write_jsonl(d / "s.jsonl", [session("s1"), session("s2")])
    lines = [
        "version = 1",
        f"name = {json.dumps(name)}",
        "[input]",
        f"path = {json.dumps(str(d / 's.jsonl'))}",
        'format = "jsonl"',
        "[llm]",
        'provider = "offline"',
        "[[judges]]",
        'name = "link_usefulness.dna"',
    ]
    if output is not None:
        lines += ["[output]", f"dir = {json.dumps(output)}"]
    path = d / "work" / "deep" / "scenario.toml"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _two_runs(d: Path) -> tuple[str, str]:
    from genir_eval.cli import main

    scenario = _scenario(d, "small")
    for run in ("runA", "runB"):
        assert (
            main(["run", str(scenario), "--out", str(d / run), "--quiet", "--cache", "none"]) == 0
        )
    return str(d / "runA"), str(d / "runB")


def _compare_html(make: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        runs = _two_runs(d)
        make(d / "target")
        return ["compare", *runs, "--html", str(d / "target")]

    return build


def _compare_html_link(d: Path) -> list[str]:
    runs = _two_runs(d)
    _link_out(d, d / "target")
    return ["compare", *runs, "--html", str(d / "target")]


def _pairwise_out_loop(d: Path) -> list[str]:
    runs = _two_runs(d)
    _loop(d / "target")
    return ["compare", *runs, "--pairwise", "--out", str(d / "target"), "--provider", "offline"]


def _named_run(name: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        return ["run", str(_scenario(d, name)), "--quiet", "--cache", "none"]

    return build


def _nothing_escaped(d: Path) -> str | None:
    # runs/<name> beside the scenario's folder: work/runs/../../escaped is d/escaped
    written = [p.name for p in (d, d.parent) if (p / "escaped").exists()]
    return f"written outside runs/: {written}" if written else None


def _planted_report_link(d: Path) -> list[str]:
    """A second run into a run folder whose report.html was replaced by a link."""
    from genir_eval.cli import main

    scenario = _scenario(d, "small")
    out = d / "run"
    assert main(["run", str(scenario), "--out", str(out), "--quiet", "--cache", "none"]) == 0
    (out / "report.html").unlink()
    _link_out(d, out / "report.html")
    return ["run", str(scenario), "--out", str(out), "--quiet", "--cache", "none"]


def _report_link_kept(d: Path) -> str | None:
    if not (d / "run" / "report.html").is_symlink():
        return "the link was replaced"
    if (d / "precious.txt").read_text(encoding="utf-8") != "keep me\n":
        return "written through the link"
    return None


def _crowdrag_planted_link(d: Path) -> list[str]:
    """A second CrowdRAG conversion into a folder whose answers.jsonl became a link."""
    from genir_eval.cli import main

    argv = _crowdrag(d)
    assert main(argv) == 0
    out = Path(argv[-1])
    (out / "answers.jsonl").unlink()
    _link_out(d, out / "answers.jsonl")
    return argv


def _converted_link_kept(d: Path) -> str | None:
    if not (d / "converted" / "answers.jsonl").is_symlink():
        return "the link was replaced"
    if (d / "precious.txt").read_text(encoding="utf-8") != "keep me\n":
        return "written through the link"
    return None


def _crowdrag_out_loop(d: Path) -> list[str]:
    argv = _crowdrag(d)
    _loop(d / "target")
    return [*argv[:-1], str(d / "target")]


def _run_cache_fifo(d: Path) -> list[str]:
    _fifo(d / "target")
    scenario = _scenario(d, "small")
    return ["run", str(scenario), "--out", str(d / "run"), "--quiet", "--cache", str(d / "target")]


# -- terminal and Markdown -------------------------------------------------------------------


def _arena_named(first: str, *extra: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        a, b = _systems(d)
        return [
            "arena",
            f"{first}={a}",
            f"plain={b}",
            "--out",
            str(d / "out"),
            "--provider",
            "offline",
            "--quiet",
            "--resamples",
            "50",
            *extra,
        ]

    return build


def _criterion(d: Path) -> list[str]:
    row = {"session_a": "s1", "session_b": "s2", "winner": "a", "criterion": f"c{ESCAPES}{RLO}"}
    return _preferences(d, [json.dumps(row)])


CASES: list[Case] = [
    # -- outputs
    Case(
        "parse-o-fifo", "outputs", _parse_to(_fifo), 2, "FIFO", after=_still(stat.S_ISFIFO, "FIFO")
    ),
    Case(
        "parse-o-link-out",
        "outputs",
        _parse_to(_link_out),
        2,
        "symbolic link",
        after=_precious_kept,
    ),
    Case(
        "parse-o-link-loop",
        "outputs",
        _parse_to(_loop),
        2,
        "loops",
        after=_still(stat.S_ISLNK, "link"),
    ),
    Case(
        "parse-o-device",
        "outputs",
        _parse_to(_device),
        2,
        "stands there",
        after=_still(lambda m: stat.S_ISCHR(m) or stat.S_ISFIFO(m), "device"),
    ),
    Case(
        "parse-o-socket",
        "outputs",
        _parse_to(_socket),
        2,
        "socket",
        after=_still(stat.S_ISSOCK, "socket"),
    ),
    Case("arena-out-link-loop", "outputs", _arena_out(_loop), 2, "loops"),
    Case(
        "arena-out-fifo",
        "outputs",
        _arena_out(_fifo),
        2,
        "FIFO",
        after=_still(stat.S_ISFIFO, "FIFO"),
    ),
    Case(
        "compare-html-fifo",
        "outputs",
        _compare_html(_fifo),
        2,
        "FIFO",
        after=_still(stat.S_ISFIFO, "FIFO"),
    ),
    Case("compare-html-socket", "outputs", _compare_html(_socket), 2, "socket"),
    Case(
        "compare-html-link-out",
        "outputs",
        _compare_html_link,
        2,
        "symbolic link",
        after=_precious_kept,
    ),
    Case("compare-pairwise-out-loop", "outputs", _pairwise_out_loop, 2, "loops"),
    Case(
        "scenario-name-escapes",
        "outputs",
        _named_run("../../escaped"),
        2,
        "name",
        after=_nothing_escaped,
    ),
    Case("scenario-name-dotdot", "outputs", _named_run(".."), 2, "name"),
    Case("scenario-name-separator", "outputs", _named_run("a/b"), 2, "path separator"),
    Case(
        "crowdrag-planted-link",
        "outputs",
        _crowdrag_planted_link,
        2,
        "symbolic link",
        after=_converted_link_kept,
    ),
    Case("crowdrag-output-loop", "outputs", _crowdrag_out_loop, 2, "loops"),
    Case(
        "run-cache-fifo",
        "outputs",
        _run_cache_fifo,
        2,
        "FIFO",
        after=_still(stat.S_ISFIFO, "FIFO"),
    ),
    Case(
        "run-report-planted-link",
        "outputs",
        _planted_report_link,
        2,
        "symbolic link",
        after=_report_link_kept,
    ),
    # -- terminal
    Case(
        "cache-stats-escapes",
        "terminal",
        lambda d: _cache_with_run(d, model=f"m{ESCAPES}", provider=f"{RLO}evil"),
        0,
        "\\x1b]0;owned\\x07",
        never=RAW,
    ),
    Case(
        "cache-stats-json-escapes",
        "terminal",
        lambda d: [*_cache_with_run(d, model=f"m{ESCAPES}{RLO}"), "--json"],
        0,
        "owned",
        never=RAW,
    ),
    Case("run-scenario-name-escape", "terminal", _named_run(f"x{ESCAPES}"), 2, "\\x1b", never=RAW),
    Case("run-scenario-name-rlo", "terminal", _named_run(f"{RLO}evil"), 2, "\\u202e", never=RAW),
    Case("meta-criterion-escapes", "terminal", _criterion, 0, "\\x1b]0;owned\\x07", never=RAW),
    Case(
        "arena-markdown-html-name",
        "terminal",
        _arena_named("<script>alert(1)</script>", "--format", "markdown"),
        0,
        "&lt;script&gt;",
        never=("<script",),
    ),
    Case(
        "arena-markdown-gate-backquote",
        "terminal",
        _arena_named(
            "a`</code><b>x</b>`",
            "--format",
            "markdown",
            "--min-win-rate",
            "0.1",
            "--baseline",
            "plain",
        ),
        0,
        "| `` a`</code><b>x</b>` `` |",
    ),
    Case(
        "arena-markdown-escape-name",
        "terminal",
        _arena_named(f"e{ESCAPES}", "--format", "markdown"),
        0,
        "\\x1b",
        never=RAW,
    ),
]


def outcome(case: Case, folder: Path, code: int, out: str, err: str) -> str | None:
    """What is wrong with a case's run, or ``None`` when it did what the case says."""
    if code == -1:
        return err
    if "Traceback" in err:
        return "traceback: " + err.strip().splitlines()[-1]
    if code != case.exit:
        return f"exit {code}, expected {case.exit}: {(err or out).strip()[-300:]!r}"
    where = err if case.exit else out + err
    if case.fragment not in where:
        return f"{case.fragment!r} not in {where.strip()[-300:]!r}"
    raw = [repr(s) for s in case.never if s in out + err]
    if raw:
        return f"raw {', '.join(raw)} on the streams"
    return case.after(folder)


if __name__ == "__main__":
    import sys
    import tempfile
    from collections import Counter

    timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    failed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for case in CASES:
        total[case.klass] += 1
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "case"
            folder.mkdir()
            try:
                code, out, err = run_case(case, folder, timeout=timeout)  # type: ignore[arg-type]
            except Exception as error:  # the code may not even build the case
                problem: str | None = f"building the case: {type(error).__name__}: {error}"
            else:
                problem = outcome(case, folder, code, out, err)
        if problem:
            failed[case.klass] += 1
            print(f"FAIL {case.klass} {case.name}: {problem}", flush=True)
        else:
            print(f"ok   {case.klass} {case.name}", flush=True)
    for klass in sorted(total):
        print(f"class {klass}: {failed[klass]} of {total[klass]} cases fail")
