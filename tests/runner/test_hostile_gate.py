"""A hostile-input corpus for the gate, people's preferences, outputs and paid calls.

Each case is what an attacker or a careless user does, at the command line, and what
genir-eval must answer: the exit code and the words (issue 32's classes 2, 3, 4, 5 and 8;
issue 34's gate in one voice, filed as class 2 here). ``CASES`` is the table: class, name,
what is done, the expected exit code, words expected in the output and words that must not
be there, and what must hold of the files afterwards. The runs are small and offline
(``satisfaction.urs`` over JSONL logs, or rows written directly with ``write_run``); the
paid calls go to :class:`~genir_eval.testing.FakeLLMServer` over real sockets.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli import main
from genir_eval.rundir.folder import SessionRow, TurnRow, file_digest, write_run
from genir_eval.rundir.status import run_status
from genir_eval.runner.testing import assert_run
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]


# -- the material ------------------------------------------------------------------------------


def _session(sid: str, n_links: int, turns: int = 1) -> dict[str, Any]:
    lines = [f"point {k} about topic {sid}" for k in range(n_links)]
    return {
        "version": 1,
        "session_id": sid,
        "language": "en",
        "turns": [
            {
                "index": t,
                "query": f"what is {sid} ({t})",
                "response_text": "\n".join(f"{line} [{i}]" for i, line in enumerate(lines, 1)),
                "links": [
                    {"id": i, "url": f"https://e.org/{sid}/{i}", "title": f"t{i}", "text": f"{i}"}
                    for i in range(1, n_links + 1)
                ],
            }
            for t in range(1, turns + 1)
        ],
    }


def _logs(path: Path, links: list[int]) -> Path:
    path.write_text(
        "".join(json.dumps(_session(f"s{i}", n)) + "\n" for i, n in enumerate(links)),
        encoding="utf-8",
    )
    return path


def _scenario(folder: Path, name: str, logs: str, extra_input: str = "", out: str = "") -> Path:
    scenario = folder / f"{name}.toml"
    output = f'\n[output]\ndir = "{out}"\n' if out else ""
    scenario.write_text(
        f'version = 1\nname = "{name}"\n\n[input]\npath = "{logs}"\n{extra_input}\n'
        f'[[judges]]\nname = "satisfaction.urs"\n{output}',
        encoding="utf-8",
    )
    return scenario


def _run(scenario: Path, out: Path, *extra: str) -> int:
    return main(["run", str(scenario), "--out", str(out), "--quiet", "--cache", "none", *extra])


def _scores_run(folder: Path, scores: dict[str, float], info: dict[str, Any] | None = None) -> Path:
    sessions = [SessionRow(s, n_turns=1, scores={"sdcg_urge": v}) for s, v in scores.items()]
    turns = [TurnRow(s, 1, scores={"sdcg_urge": v}) for s, v in scores.items()]
    base = {"version": 1, "scenario": {"name": folder.name, "meta": {"headline": "sdcg_urge"}}}
    return write_run(
        folder, links=[], turns=turns, sessions=sessions, meta=None, info={**base, **(info or {})}
    )


BASE = {f"s{i:02d}": 0.5 + 0.01 * i for i in range(12)}


def _failed_run(folder: Path, *, permanent: bool = False) -> Path:
    """A run recorded as failed as a run records it: judge j misses 3 of 10 labels (over the
    5% allowed), or (``permanent``) its engine had a permanent provider error; its scores
    are the base run's."""
    scores = dict(BASE)
    missing = 0 if permanent else 3
    failures = [{"judge": "j", "session_id": "s1", "turn": 1, "reason": "timeout"}] * missing
    counts = {"j": {"labels": 10, "missing": missing}}
    engines = [
        {"provider": "openai", "model": "m", "failures": {"permanent": 1 if permanent else 0}}
    ]
    info = {
        "judges": [{"id": "j", **counts["j"]}],
        "failures": failures,
        "failures_total": missing,
        "engines": engines,
        "status": run_status(counts, failures, engines, max_missing=0.05, allow_permanent=False),
    }
    assert info["status"]["ok"] is False
    return _scores_run(folder, scores, info)


def _edit_status(run: Path, **claims: Any) -> Path:
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    info["status"].update({"ok": True, "reasons": [], **claims})
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return run


@dataclass
class World:
    """What the cases act on, made once (each case copies what it changes)."""

    folder: Path
    base: Path  # 12 sessions scored 0.5
    worse: Path  # the same sessions, each 0.2 lower: a regression
    small_a: Path  # 7 sessions
    small_b: Path  # the same 7, lower on each but with one rise: p = 0.0625, CI below zero
    logs_a: Path
    logs_b: Path
    real_a: Path  # genir-eval run over logs_a
    real_b: Path  # genir-eval run over logs_b
    citations_failed: Path  # demo-citations run failed: 1 of 17 labels missing, 1% allowed


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    folder = tmp_path_factory.mktemp("hostile-gate")
    base = BASE
    small = {f"s{i}": 0.6 for i in range(7)}
    # five drops of 0.3 and two rises of 0.05 (sum -1.4): the sign patterns whose sum is at
    # least 1.4 from zero are the five drops' two signs times any signs of the rises, so the
    # exact randomisation p is 8/128 = 0.0625; a bootstrap mean is at least 0 only with 6 or
    # more rises of 7 draws (probability 0.003) and its 97.5th percentile is -0.1 (4 rises)
    small_b = {k: v - (0.3 if i < 5 else -0.05) for i, (k, v) in enumerate(small.items())}
    logs_a = _logs(folder / "sys-a.jsonl", [4] * 8)
    logs_b = _logs(folder / "sys-b.jsonl", [1] * 8)
    made = {}
    for name, logs in (("a", logs_a), ("b", logs_b)):
        scenario = _scenario(folder, f"real-{name}", logs.name)
        out = folder / f"run-{name}"
        assert _run(scenario, out) == 0
        made[name] = out
    citations_failed = folder / "citations-failed"
    scenario = ROOT / "scenarios" / "demo-citations.toml"
    assert _run(scenario, citations_failed, "--max-missing", "0.01") == 3
    return World(
        citations_failed=citations_failed,
        folder=folder,
        base=_scores_run(folder / "base", base),
        worse=_scores_run(folder / "worse", {k: v - 0.2 for k, v in base.items()}),
        small_a=_scores_run(folder / "small-a", small),
        small_b=_scores_run(folder / "small-b", small_b),
        logs_a=logs_a,
        logs_b=logs_b,
        real_a=made["a"],
        real_b=made["b"],
    )


# -- how a case runs ---------------------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str


class Act:
    """What a case may do: run a command in-process, in a subprocess whose output pipe is
    closed before it starts, or on a terminal (a pseudo-terminal)."""

    def __init__(
        self,
        capsys: pytest.CaptureFixture[str],
        tmp: Path,
        world: World,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        self.capsys, self.tmp, self.world = capsys, tmp, world
        self.monkeypatch = monkeypatch

    def cli(self, *args: str | Path) -> Result:
        self.capsys.readouterr()
        code = main([str(a) for a in args])
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def closed_pipe(self, *args: str | Path) -> Result:
        """The command with its standard output a pipe nobody reads any more (``| head -c
        0``): the read end is closed before the command starts, so its first write fails."""
        read, write = os.pipe()
        os.close(read)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "genir_eval", *map(str, args)],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
                timeout=300,
            )
        finally:
            os.close(write)
        return Result(done.returncode, "", done.stderr)

    def closed_stdout(self, *args: str | Path) -> Result:
        """The command with no standard output at all (``>&-``)."""
        done = subprocess.run(
            [sys.executable, "-m", "genir_eval", *map(str, args)],
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=300,
            preexec_fn=lambda: os.close(1),  # noqa: PLW1509 - only closes a descriptor
        )
        return Result(done.returncode, "", done.stderr)

    def terminal(self, *args: str | Path) -> Result:
        """The command with a terminal as its standard output; returns what the terminal
        received (as text, escapes and all)."""
        leader, follower = pty.openpty()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "genir_eval", *map(str, args)],
                stdout=follower,
                stderr=subprocess.PIPE,
                text=True,
            )
            os.close(follower)
            received = b""
            with contextlib.suppress(OSError):  # EIO once the command closed the terminal
                while chunk := os.read(leader, 65536):
                    received += chunk
            _, err = process.communicate(timeout=300)
        finally:
            os.close(leader)
        return Result(process.returncode, received.decode("utf-8", "replace"), err)


@dataclass(frozen=True)
class Case:
    klass: int
    name: str
    act: Callable[[Act], Result]
    code: int
    says: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    then: Callable[[Act], None] | None = None


def _copy(act: Act, run: Path, name: str) -> Path:
    import shutil

    target = act.tmp / name
    shutil.copytree(run, target)
    return target


# -- class 2: the gate trusts what it verifies ------------------------------------------------


def _edited_failed(act: Act, **claims: Any) -> Path:
    return _edit_status(
        _failed_run(act.tmp / "failed", permanent="allow_permanent" in claims), **claims
    )


def _assert_run_result(run: Path, **options: Any) -> Result:
    try:
        mean = assert_run(run, metric="sdcg_urge", at_least=0.0, **options)
    except AssertionError as error:
        return Result(1, "", str(error))
    return Result(0, f"mean {mean}", "")


def _rewrite_logs(act: Act) -> Result:
    a, b = _copy(act, act.world.real_a, "a"), _copy(act, act.world.real_b, "b")
    logs = act.tmp / "moved-logs.jsonl"
    original = act.world.logs_b.read_bytes()
    info = json.loads((b / "run.json").read_text(encoding="utf-8"))
    # the run's logs, rewritten after the run at the path run.json names: a copy with the
    # same answers as A (every pair would tie) put where B's logs were
    logs.write_bytes(act.world.logs_a.read_bytes())
    info["input"]["path"] = str(logs)
    (b / "run.json").write_text(json.dumps(info), encoding="utf-8")
    assert original != logs.read_bytes()
    return act.cli("compare", a, b, "--pairwise", "--quiet")


def _labels_inflated(act: Act) -> Path:
    """The failed run's label count edited from 17 to 1,000 (1 missing: 0.1%, under the 1%
    it ran with), its status to ok: consistent with itself, so only the count gives it away."""
    run = _copy(act, act.world.citations_failed, "inflated")
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for judge in info["judges"]:
        judge["labels"] = 1000
    info["status"].update({"ok": True, "reasons": []})
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return run


GATE: list[Case] = [
    Case(
        2,
        "failed run edited to a label count that dilutes its missing labels",
        lambda act: act.cli(
            "compare",
            *[_labels_inflated(act)] * 2,
            "--metric",
            "citation_precision",
            "--min-sessions",
            "0",
            "--max-missing",
            "0.01",
        ),  # fmt: skip
        2,
        ("run.json says judge citation_support gave 1000 labels", "evidence.jsonl holds 17"),
        ("PASS",),
    ),
    Case(
        2,
        "failed run edited to max_missing 1.0 passes compare",
        lambda act: act.cli("compare", act.world.base, _edited_failed(act, max_missing=1.0)),
        2,
        ("a failed run", "3 of 10 labels missing"),
        ("PASS",),
    ),
    Case(
        2,
        "failed run edited to allow_permanent passes compare",
        lambda act: act.cli("compare", act.world.base, _edited_failed(act, allow_permanent=True)),
        2,
        ("a failed run", "permanent error"),
        ("PASS",),
    ),
    Case(
        2,
        "failed run edited to max_missing 1.0 passes assert_run",
        lambda act: _assert_run_result(_edited_failed(act, max_missing=1.0)),
        1,
        ("failed (judge j: 3 of 10 labels missing",),
    ),
    Case(
        2,
        "failed run edited to allow_permanent passes assert_run",
        lambda act: _assert_run_result(_edited_failed(act, allow_permanent=True)),
        1,
        ("permanent error",),
    ),
    Case(
        2,
        "the command line's threshold is the gate's: --max-missing 0.5 accepts the run",
        lambda act: act.cli(
            "compare", act.world.base, _edited_failed(act, max_missing=1.0), "--max-missing", "0.5"
        ),
        0,
        ("PASS",),
    ),
    Case(
        2,
        "compare --pairwise reads logs rewritten after the run",
        _rewrite_logs,
        2,
        ("changed after the run", "input.sha256"),
        ("PASS",),
    ),
    Case(
        2,
        "a regression's exit code through a closed pipe",
        lambda act: act.closed_pipe("compare", act.world.base, act.world.worse),
        1,
        ("FAIL: sdcg_urge",),
        ("Traceback", "BrokenPipe"),
    ),
    Case(
        2,
        "a regression's exit code through a closed pipe (markdown)",
        lambda act: act.closed_pipe(
            "compare", act.world.base, act.world.worse, "--format", "markdown"
        ),
        1,
        (),
        ("Traceback", "BrokenPipe"),
    ),
    Case(
        2,
        "a regression's exit code through a closed pipe (json)",
        lambda act: act.closed_pipe("compare", act.world.base, act.world.worse, "--json"),
        1,
        (),
        ("Traceback", "BrokenPipe"),
    ),
    Case(
        2,
        "a regression's exit code with standard output closed (>&-)",
        lambda act: act.closed_stdout("compare", act.world.base, act.world.worse),
        1,
        ("FAIL: sdcg_urge",),
        ("Traceback",),
    ),
    Case(
        2,
        "a pass through a closed pipe stays a pass",
        lambda act: act.closed_pipe("compare", act.world.base, act.world.base),
        0,
        (),
        ("Traceback", "Exception ignored"),
    ),
    Case(
        2,
        "a failed run through a closed pipe stays exit 3 (meta)",
        lambda act: act.closed_pipe(
            "meta",
            ROOT / "fixtures" / "citation_sessions.jsonl",
            "--judge",
            "citation_support",
            "--provider",
            "offline",
            "--journal",
            "none",
            "--cache-mode",
            "off",
            "--max-missing",
            "0.01",
        ),
        3,
        (),
        ("Traceback", "BrokenPipe"),
    ),
    Case(
        2,
        "7 sessions, interval below zero, p 0.0625: no bare PASS",
        lambda act: act.cli("compare", act.world.small_a, act.world.small_b),
        4,
        ("TOO FEW TO DECIDE", "fewer than --min-sessions 10", "excludes zero on the worse side"),
        ("\nPASS",),
    ),
    Case(
        2,
        "--min-sessions 0: the pass prints the interval's reason beside it",
        lambda act: act.cli("compare", act.world.small_a, act.world.small_b, "--min-sessions", "0"),
        0,
        ("PASS", "note:", "excludes zero on the worse side", "p = 0.0625", "rule: REGRESSION"),
    ),
    Case(
        2,
        "compare --pairwise over 8 queries: no bare PASS",
        lambda act: act.cli("compare", act.world.real_a, act.world.real_a, "--pairwise", "--quiet"),
        4,
        ("TOO FEW TO DECIDE (exit 4)", "rests on 8 queries, fewer than --min-sessions 10"),
        ("\nPASS",),
    ),
    Case(
        2,
        "the verdict rule is in --help",
        lambda act: act.cli("compare", "--help"),
        0,
        ("TOO FEW TO DECIDE (exit 4)", "--min-sessions"),
    ),
]


# -- class 3: people's preferences silently ignored -------------------------------------------


def _preferences(act: Act, rows: list[dict[str, Any]]) -> Path:
    path = act.tmp / "preferences.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


RUN_ROW = {"session_a": "s0", "session_b": "s1", "winner": "a"}
ARENA_ROW = {"session": "s0", "turn": 1, "system_a": "sys-a", "system_b": "sys-b", "winner": "a"}


def _run_with_preferences(act: Act, rows: list[dict[str, Any]]) -> Result:
    _preferences(act, rows)
    logs = _logs(act.tmp / "logs.jsonl", [2, 3, 4])
    scenario = _scenario(act.tmp, "prefs", logs.name, 'preferences = "preferences.jsonl"\n')
    return act.cli("run", scenario, "--out", act.tmp / "out", "--quiet", "--cache", "none")


def _meta_with_preferences(act: Act, rows: list[dict[str, Any]]) -> Result:
    path = _preferences(act, rows)
    logs = _logs(act.tmp / "logs.jsonl", [2, 3, 4])
    return act.cli(
        "meta", logs, "--judge", "satisfaction.urs", "--provider", "offline",
        "--journal", "none", "--cache-mode", "off", "--preferences", path,
    )  # fmt: skip


def _arena(act: Act, *extra: str | Path) -> Result:
    return act.cli(
        "arena", act.world.logs_a, act.world.logs_b, "--out", act.tmp / "arena",
        "--provider", "offline", "--quiet", "--resamples", "0", *extra,
    )  # fmt: skip


PREFERENCES: list[Case] = [
    Case(
        3,
        "arena-form rows given to [input] preferences",
        lambda act: _run_with_preferences(act, [RUN_ROW, ARENA_ROW]),
        2,
        ("preferences.jsonl, line 2, column 'session_a'",),
    ),
    Case(
        3,
        "run rows naming no session of the run",
        lambda act: _run_with_preferences(act, [RUN_ROW, {**RUN_ROW, "session_b": "s9"}]),
        2,
        ("preferences.jsonl, line 2, column 'session_b'", "'s9'"),
    ),
    Case(
        3,
        "run rows naming a turn the session does not have",
        lambda act: _run_with_preferences(act, [{**RUN_ROW, "turn": 3}]),
        2,
        ("preferences.jsonl, line 1, column 'turn'",),
    ),
    Case(
        3,
        "run rows that all name the run's sessions are used",
        lambda act: _run_with_preferences(act, [RUN_ROW, {**RUN_ROW, "session_b": "s2"}]),
        0,
        then=lambda act: _meta_has_preferences(act.tmp / "out"),
    ),
    Case(
        3,
        "arena-form rows given to meta --preferences",
        lambda act: _meta_with_preferences(act, [ARENA_ROW]),
        2,
        ("preferences.jsonl, line 1, column 'session_a'",),
    ),
    Case(
        3,
        "meta --preferences rows naming no session",
        lambda act: _meta_with_preferences(act, [{**RUN_ROW, "session_a": "nobody"}]),
        2,
        ("line 1, column 'session_a'", "'nobody'"),
    ),
    Case(
        3,
        "run-form rows given to arena --gold",
        lambda act: _arena(act, "--gold", _preferences(act, [ARENA_ROW, RUN_ROW])),
        2,
        ("preferences.jsonl, line 2, column 'system_a'",),
        then=lambda act: _no_folder_left(act.tmp / "arena"),
    ),
    Case(
        3,
        "arena --gold rows naming a system the arena does not have",
        lambda act: _arena(act, "--gold", _preferences(act, [{**ARENA_ROW, "system_b": "sys-c"}])),
        2,
        ("line 1, column 'system_b'", "'sys-c'"),
    ),
    Case(
        3,
        "arena --gold rows naming a session no system answered",
        lambda act: _arena(act, "--gold", _preferences(act, [{**ARENA_ROW, "session": "zz"}])),
        2,
        ("line 1, column 'session'", "'zz'"),
    ),
    Case(
        3,
        "a misspelt --gold-criterion",
        lambda act: _arena(
            act,
            "--gold",
            _preferences(act, [{**ARENA_ROW, "criterion": "quality_overall"}]),
            "--gold-criterion",
            "quality_overal",
        ),
        2,
        ("--gold-criterion", "did you mean 'quality_overall'"),
    ),
    Case(
        3,
        "arena --gold rows of another criterion are counted aloud",
        lambda act: _arena(
            act,
            "--gold",
            _preferences(
                act,
                [ARENA_ROW, {**ARENA_ROW, "criterion": "coverage_deep"}],
            ),
        ),
        0,
        ("agreement with people", "1 rows of other criteria than 'quality_overall' not compared"),
    ),
]


def _meta_has_preferences(out: Path) -> None:
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert meta["preferences"]["overall"]["rows"] == 2
    assert meta["preferences"]["overall"]["unknown"] == 0


def _no_folder_left(folder: Path) -> None:
    assert not folder.exists(), sorted(p.name for p in folder.iterdir())


# -- class 4: existing data overwritten or deleted --------------------------------------------


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: file_digest(p) for p in sorted(folder.iterdir()) if p.is_file()}


@contextlib.contextmanager
def _unchanged(folder: Path) -> Iterator[None]:
    before = _digests(folder)
    yield
    assert _digests(folder) == before


def _arena_into_run(act: Act) -> Result:
    run = _copy(act, act.world.real_a, "run-a")
    before = _digests(run)
    result = act.cli(
        "arena", act.world.logs_a, act.world.logs_b, "--out", run, "--provider", "offline",
        "--quiet",
    )  # fmt: skip
    assert _digests(run) == before
    return result


def _pairwise_into_run(act: Act) -> Result:
    run = _copy(act, act.world.real_a, "run-a")
    before = _digests(run)
    result = act.cli(
        "compare", act.world.real_a, act.world.real_b, "--pairwise", "--quiet", "--out", run
    )
    assert _digests(run) == before
    return result


def _run_into_users_folder(act: Act) -> Result:
    home = act.tmp / "home"
    home.mkdir()
    mine = {"meta.json": "my notes", "report.html": "<p>mine</p>", "citations.csv": "a,b"}
    for name, text in mine.items():
        (home / name).write_text(text, encoding="utf-8")
    logs = _logs(home / "logs.jsonl", [2, 3])
    scenario = home / "s.toml"
    scenario.write_text(
        f'version = 1\nname = "s"\n[input]\npath = "{logs.name}"\n[[judges]]\n'
        'name = "satisfaction.urs"\n[meta]\nenabled = false\n'
        '[output]\ndir = "."\nreport = false\ncsv = false\n',
        encoding="utf-8",
    )
    result = act.cli("run", scenario, "--quiet", "--cache", "none")
    for name, text in mine.items():
        assert (home / name).read_text(encoding="utf-8") == text
    return result


def _crowdrag(folder: Path, systems: list[tuple[str, str]]) -> Path:
    folder.mkdir(parents=True)
    answers = [
        {"response": f"r{i}", "topic": "t1", "query": "what do servers do", "style": style,
         "writer": writer, "text": f"Servers host sites [0]. Answer {i}."}
        for i, (writer, style) in enumerate(systems)
    ]  # fmt: skip
    (folder / "responses.jsonl").write_text(
        "".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8"
    )
    passages = [{"index": 0, "id": "doc-a#0", "text": "Servers host websites."}]
    (folder / "sources.jsonl").write_text(
        json.dumps({"topic": "t1", "query": "q", "references": passages}) + "\n", encoding="utf-8"
    )
    dimensions = ("correctness_topical", "coherence_logical", "coherence_stylistic")
    dimensions += ("coverage_broad", "coverage_deep", "consistency_internal", "quality_overall")
    gold = {f"{d}_gold": "a" for d in dimensions}
    (folder / "ratings.jsonl").write_text(
        json.dumps({"query_id": "t1", "response_a": "r0", "response_b": "r1", **gold}) + "\n",
        encoding="utf-8",
    )
    return folder


def _crowdrag_reused(act: Act) -> Result:
    out = act.tmp / "converted"
    first = _crowdrag(act.tmp / "one", [("llm", "bullet"), ("human", "essay")])
    second = _crowdrag(act.tmp / "two", [("llm", "news"), ("human", "news")])
    assert act.cli("parse", first, "--format", "crowdrag", "--output", out).code == 0
    return act.cli("parse", second, "--format", "crowdrag", "--output", out)


def _dead_pid() -> int:
    """The id of a process that has ended (a killed writer's, in its files' names)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _killed_arena_store(act: Act) -> Result:
    out = act.tmp / "arena"
    assert _arena(act).code == 0
    stale = out / f".arena-answers.sqlite.{_dead_pid()}.0a1b2c.part"
    stale.write_bytes(b"x" * 4096)  # what a killed arena's answer store left
    result = _arena(act)
    assert not stale.exists()
    return result


def _killed_conversion(act: Act) -> Result:
    out = act.tmp / "converted"
    first = _crowdrag(act.tmp / "one", [("llm", "bullet"), ("human", "essay")])
    assert act.cli("parse", first, "--format", "crowdrag", "--output", out).code == 0
    stale = [
        out / f".answers.jsonl.{_dead_pid()}.abcd1234.tmp",
        out / "systems" / f".llm-bullet.jsonl.{_dead_pid()}.abcd1234.tmp",
    ]
    for path in stale:
        path.write_text("half", encoding="utf-8")
    result = act.cli("parse", first, "--format", "crowdrag", "--output", out)
    assert not any(path.exists() for path in stale)
    return result


OUTPUTS: list[Case] = [
    Case(
        4,
        "arena --out pointed at a run folder",
        _arena_into_run,
        2,
        ("--out", "`genir-eval run`", "choose another folder"),
        then=lambda act: _compare_still_reads(act, act.tmp / "run-a"),
    ),
    Case(
        4,
        "compare --pairwise --out pointed at a run folder",
        _pairwise_into_run,
        2,
        ("`genir-eval run`", "choose another folder"),
        then=lambda act: _compare_still_reads(act, act.tmp / "run-a"),
    ),
    Case(
        4,
        'output.dir = "." with outputs off, in a folder of the user\'s files',
        _run_into_users_folder,
        2,
        ("files genir-eval did not write here", "choose another folder"),
    ),
    Case(
        4,
        "a reused CrowdRAG output keeps an earlier dataset's systems",
        _crowdrag_reused,
        0,
        then=lambda act: _only_systems(act.tmp / "converted", {"llm-news", "human-news"}),
    ),
    Case(
        4,
        "parse --format crowdrag into a folder of the user's files",
        lambda act: _crowdrag_into_users_folder(act),
        2,
        ("files genir-eval did not write here",),
    ),
    Case(
        4,
        "a killed arena's answer store is removed by the next arena",
        _killed_arena_store,
        0,
    ),
    Case(
        4,
        "a killed conversion's .tmp is removed by the next one",
        _killed_conversion,
        0,
    ),
    Case(
        4,
        "compare --pairwise --out pointed at an arena's folder",
        lambda act: _pairwise_into_arena(act),
        2,
        ("`genir-eval arena`", "choose another folder"),
    ),
    Case(
        4,
        "an arena into its own folder resumes (not refused)",
        lambda act: (_arena(act), _arena(act))[1],
        0,
    ),
]


def _pairwise_into_arena(act: Act) -> Result:
    assert _arena(act).code == 0
    before = _digests(act.tmp / "arena")
    result = act.cli(
        "compare", act.world.real_a, act.world.real_b, "--pairwise", "--quiet",
        "--out", act.tmp / "arena",
    )  # fmt: skip
    assert _digests(act.tmp / "arena") == before
    return result


def _compare_still_reads(act: Act, run: Path) -> None:
    assert act.cli("compare", run, run, "--min-sessions", "0").code == 0


def _only_systems(out: Path, names: set[str]) -> None:
    assert {p.stem for p in (out / "systems").glob("*.jsonl")} == names


def _crowdrag_into_users_folder(act: Act) -> Result:
    out = act.tmp / "mine"
    out.mkdir()
    (out / "preferences.txt").write_text("mine", encoding="utf-8")
    data = _crowdrag(act.tmp / "one", [("llm", "bullet"), ("human", "essay")])
    result = act.cli("parse", data, "--format", "crowdrag", "--output", out)
    assert sorted(p.name for p in out.iterdir()) == ["preferences.txt"]
    return result


# -- class 5: paid calls repeated -------------------------------------------------------------


class _NegativeUsage(FakeLLMServer):
    """A server whose replies report negative token counts."""

    def _success(self, protocol: Any, request: Any, text: str, scripted: Any = None) -> bytes:
        body = json.loads(super()._success(protocol, request, text, scripted))
        body["usage"] = {"prompt_tokens": -300_000, "completion_tokens": -300_000}
        return json.dumps(body).encode()


class _PositiveLogprob(FakeLLMServer):
    """A server whose replies give their first token a log-probability of +0.5."""

    def _success(self, protocol: Any, request: Any, text: str, scripted: Any = None) -> bytes:
        body = json.loads(super()._success(protocol, request, text, scripted))
        body["choices"][0]["logprobs"]["content"][0]["logprob"] = 0.5
        return json.dumps(body).encode()


def _verdict_reply(request: Any) -> str:
    criteria = {name: 1 for name in ("correctness", "coverage", "grounding", "clarity")}
    return json.dumps({"overall": 1, "criteria": criteria, "reason": "first is better"})


def _judged_twice(act: Act, server: FakeLLMServer, command: list[str | Path]) -> list[Result]:
    act.monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
    engine = ["--provider", "openai", "--base-url", server.openai_base_url, "--model", "fake-model"]
    return [act.cli(*command, *engine) for _ in range(2)]


def _arena_files(act: Act, names: list[str]) -> list[str]:
    files = []
    for i, name in enumerate(names):
        path = _logs(act.tmp / f"system{i}.jsonl", [1 + i] * 2)
        files.append(f"{name}={path}")
    return files


def _negative_usage(act: Act) -> Result:
    out = act.tmp / "arena"
    command: list[str | Path] = ["arena", *_arena_files(act, ["a", "b"]), "--out", out]
    command += ["--quiet", "--resamples", "0", "--journal", "none", "--cache", act.tmp / "c.db"]
    with _NegativeUsage(reply=_verdict_reply) as server:
        first, second = _judged_twice(act, server, command)
    document = json.loads((out / "arena.json").read_text(encoding="utf-8"))
    [engine] = document["engines"]
    # the second arena paid nothing: every reply came from the cache, none refused there
    assert engine["calls"] == 0 and engine["cache_hits"] == 4, engine
    assert engine["input_tokens"] >= 0 and engine["output_tokens"] >= 0, engine
    return Result(max(first.code, second.code), first.out + second.out, first.err + second.err)


def _positive_logprob(act: Act) -> Result:
    out = act.tmp / "arena"
    command: list[str | Path] = ["arena", *_arena_files(act, ["a", "b"]), "--out", out]
    command += ["--quiet", "--resamples", "0", "--journal", "none", "--cache", act.tmp / "c.db"]
    command += ["--option", "logprobs=true"]
    with _PositiveLogprob(reply=_verdict_reply) as server:
        first, second = _judged_twice(act, server, command)
    # a reply whose log-probability is no log-probability is malformed: retried, then the
    # judgment is missing with that reason; it is never cached, so no later run reads a row
    # the cache refuses (the class: paid for again on every run, silently)
    document = json.loads((out / "arena.json").read_text(encoding="utf-8"))
    [engine] = document["engines"]
    assert engine["cache_hits"] == 0, engine
    assert document["pairs"]["missing"] > 0, document["pairs"]
    with sqlite3.connect(act.tmp / "c.db") as db:
        rows = db.execute("SELECT logprobs FROM cache").fetchall()
    assert all(r[0] is None or "0.5" not in r[0] for r in rows), rows
    return Result(0, first.out + second.out, first.err + second.err)


def _collision_resume(act: Act) -> Result:
    # "x>y" against "z" and "x" against "y>z" were one journal item ("x>y>z")
    files = _arena_files(act, ["x>y", "z", "x", "y>z"])
    out = act.tmp / "arena"
    with FakeLLMServer(reply=_verdict_reply) as server:
        command: list[str | Path] = ["arena", *files, "--out", out, "--quiet", "--resamples", "0"]
        command += ["--cache-mode", "off"]
        _judged_twice(act, server, command)
        document = json.loads((out / "arena.json").read_text(encoding="utf-8"))
    [engine] = document["engines"]
    # resumed from the journal: none of the 2 sessions x 6 pairs x 2 orders paid twice
    assert engine["calls"] == 0, engine
    assert document["pairs"]["judged"] == 12 and document["pairs"]["missing"] == 0
    return Result(0, "", "")


PAID: list[Case] = [
    Case(5, "replies with negative token counts are cached and refused", _negative_usage, 0),
    Case(5, "system names holding '>' collide in the journal", _collision_resume, 0),
    Case(
        5,
        "replies with a log-probability above 0 are not cached to be refused",
        _positive_logprob,
        0,
    ),
]


# -- class 8: the rest ------------------------------------------------------------------------


def _credentials_in_url(act: Act) -> Result:
    logs = _logs(act.tmp / "logs.jsonl", [2])
    scenario = _scenario(act.tmp, "s", logs.name)
    with FakeLLMServer() as server:
        url = server.openai_base_url.replace("http://", "http://alice:s3cr3t-pw@")
        result = act.cli(
            "run", scenario, "--out", act.tmp / "out", "--quiet", "--cache", "none",
            "--provider", "openai", "--base-url", url, "--model", "fake-model",
            "--max-attempts", "1",
        )  # fmt: skip
        seen = set(server.stats.auth_values)
    # Basic base64("alice:s3cr3t-pw"): the credentials reached the server
    assert "Basic YWxpY2U6czNjcjN0LXB3" in seen, seen
    written = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in (act.tmp / "out").iterdir()
        if p.is_file() and not p.name.endswith(".sqlite")
    )
    assert "s3cr3t-pw" not in written and "YWxpY2U6czNjcjN0LXB3" not in written
    return result


def _escape_in_system_name(act: Act) -> Result:
    evil = "evil\x1b]0;owned\x07\x1b[2J"
    return act.terminal(
        "arena", f"{evil}={act.world.logs_a}", f"plain={act.world.logs_b}",
        "--out", act.tmp / "arena", "--provider", "offline", "--quiet", "--resamples", "0",
    )  # fmt: skip


def _arena_report(act: Act) -> Result:
    result = _arena(act)
    page = (act.tmp / "arena" / "report.html").read_text(encoding="utf-8")
    assert "http-equiv='Content-Security-Policy'" in page and "default-src 'none'" in page
    return result


REST: list[Case] = [
    Case(
        8,
        "a base_url with credentials over the aiohttp client",
        _credentials_in_url,
        3,
        never=("s3cr3t-pw",),
    ),  # fmt: skip
    Case(
        8,
        "terminal escape sequences in an arena system name",
        _escape_in_system_name,
        0,
        ("evil\\x1b]0;owned\\x07\\x1b[2J",),
        ("\x1b", "\x07"),
    ),
    Case(8, "the arena report has a Content-Security-Policy", _arena_report, 0),
]


CASES = GATE + PREFERENCES + OUTPUTS + PAID + REST


#: The cases that take seconds (genir-eval started in subprocesses through a closed pipe or
#: standard output, a paid run's replies judged again): marked slow, run by .ci/run.
SLOW_CASES = {
    "replies with a log-probability above 0 are not cached to be refused",
    "terminal escape sequences in an arena system name",
    "a failed run through a closed pipe stays exit 3 (meta)",
    "a regression's exit code with standard output closed (>&-)",
    "a pass through a closed pipe stays a pass",
    "a regression's exit code through a closed pipe (json)",
    "a regression's exit code through a closed pipe",
    "a regression's exit code through a closed pipe (markdown)",
}


def _case_param(case: Case) -> object:
    marks = [pytest.mark.slow] if case.name in SLOW_CASES else []
    return pytest.param(case, id=f"class{case.klass}-{case.name}", marks=marks)


def test_every_slow_case_names_a_case() -> None:
    assert SLOW_CASES <= {case.name for case in CASES}


@pytest.mark.parametrize("case", [_case_param(case) for case in CASES])
def test_hostile_case(
    case: Case,
    world: World,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    act = Act(capsys, tmp_path, world, monkeypatch)
    result = case.act(act)
    shown = f"exit {result.code}\n--- out\n{result.out[-3000:]}\n--- err\n{result.err[-3000:]}"
    assert result.code == case.code, shown
    said = " ".join((result.out + result.err).split())  # help text is wrapped
    for words in case.says:
        assert " ".join(words.split()) in said, f"{words!r} not said\n{shown}"
    for words in case.never:
        assert words not in result.out + result.err, f"{words!r} said\n{shown}"
    assert "Traceback" not in result.err, shown
    if case.then is not None:
        case.then(act)


def test_every_class_has_cases() -> None:
    assert {c.klass for c in CASES} == {2, 3, 4, 5, 8}
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.slow
def test_a_terminated_arena_removes_its_answer_store(tmp_path: Path) -> None:
    """``kill`` (SIGTERM) while the arena waits for replies: the command unwinds as an
    interruption does (exit 143) and its answer store (168 MB for a large arena) is gone;
    a SIGKILL's is removed by the next arena (the corpus above)."""
    import signal
    import time

    a, b = _logs(tmp_path / "a.jsonl", [2] * 3), _logs(tmp_path / "b.jsonl", [3] * 3)
    out = tmp_path / "arena"
    with FakeLLMServer(reply=_verdict_reply, latency=600.0) as server:
        env = {**os.environ, "OPENAI_API_KEY": server.api_key}
        process = subprocess.Popen(
            [sys.executable, "-m", "genir_eval", "arena", str(a), str(b), "--out", str(out),
             "--quiet", "--provider", "openai", "--base-url", server.openai_base_url,
             "--model", "fake-model", "--cache-mode", "off"],
            env=env, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            waited = 0.0
            # the store is written before any pair is judged; the judging waits on the server
            while not (out.is_dir() and server.stats.auth_values) and waited < 300:
                time.sleep(0.2)
                waited += 0.2
            assert list(out.glob(".arena-answers.sqlite.*.part")), sorted(out.iterdir())
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert not list(out.glob(".arena-answers.sqlite.*")), sorted(out.iterdir())
    assert "Traceback" not in err
