"""A run folder is one unit: run.json is written last and lists every file's digest, so a
killed re-run or two runs writing into one folder never load as a finished run; CSV cells
cannot run as spreadsheet formulas."""

from __future__ import annotations

import csv
import hashlib
import json
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genir_eval.errors import InputError
from genir_eval.rundir.folder import (
    LinkRow,
    SessionRow,
    TurnRow,
    csv_cell,
    load_run,
    write_run,
)
from genir_eval.runner.testing import assert_run


def _write(out: Path, score: float, report: object = None) -> None:
    write_run(
        out,
        links=[LinkRow("s", 1, 1, "https://a.example", labels={"j": 1.0})],
        turns=[TurnRow("s", 1, scores={"m": score})],
        sessions=[SessionRow("s", n_turns=1, scores={"m": score})],
        meta=None,
        info={"version": 1},
        report=report,  # type: ignore[arg-type]
    )


def test_run_json_lists_every_file_and_comes_last(tmp_path: Path) -> None:
    order: list[str] = []

    def report(run: object) -> str:
        order.append("report")
        assert not (tmp_path / "run.json").exists()  # the marker comes after the report
        return "<html></html>"

    _write(tmp_path, 1.0, report)
    files = json.loads((tmp_path / "run.json").read_text())["files"]
    assert set(files) == {
        "links.jsonl",
        "links.csv",
        "turns.jsonl",
        "turns.csv",
        "sessions.jsonl",
        "sessions.csv",
        "report.html",
    }
    assert order == ["report"]
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_a_rerun_killed_midway_is_not_a_finished_run(tmp_path: Path) -> None:
    _write(tmp_path, 1.0)
    assert load_run(tmp_path).mean("m") == 1.0

    def crash(run: object) -> str:
        raise KeyboardInterrupt  # killed after the tables, before run.json

    with pytest.raises(KeyboardInterrupt):
        _write(tmp_path, 2.0, crash)
    with pytest.raises(InputError, match="not a finished run directory"):
        load_run(tmp_path)
    with pytest.raises(InputError):
        assert_run(tmp_path, metric="m", at_least=0)


def test_tables_from_another_run_are_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, 1.0)
    _write(b, 2.0)
    (a / "sessions.jsonl").write_bytes((b / "sessions.jsonl").read_bytes())
    with pytest.raises(InputError, match="sessions.jsonl does not belong to this run.json"):
        load_run(a)


def _listed_files_match(folder: Path) -> bool:
    """Whether ``run.json`` exists and every file it lists has the SHA-256 it lists
    (hashlib, not the module's digest)."""
    marker = folder / "run.json"
    if not marker.exists():
        return False
    for name, digest in json.loads(marker.read_text(encoding="utf-8"))["files"].items():
        path = folder / name
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            return False
    return True


def test_two_writers_on_one_folder_leave_a_consistent_run(tmp_path: Path) -> None:
    """Writers race on the same folder: what is left loads as one writer's run when every
    file is the one run.json lists, and is refused when any is another writer's (a mix)."""
    errors: list[BaseException] = []

    def writer(score: float) -> None:
        try:
            for _ in range(20):
                _write(tmp_path, score)
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(float(i),)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    if not _listed_files_match(tmp_path):
        with pytest.raises(InputError, match="does not belong|not a finished run"):
            load_run(tmp_path)
        return
    run = load_run(tmp_path)
    (session,) = run.sessions
    (turn,) = run.turns
    written = json.loads((tmp_path / "sessions.jsonl").read_text(encoding="utf-8"))
    assert session.scores["m"] == turn.scores["m"] == written["scores"]["m"]


@pytest.mark.parametrize(
    "name",
    ["turns.jsonl", "turns.csv", "sessions.jsonl", "sessions.csv"],  # the files with a score
)
def test_a_folder_mixing_two_writers_files_is_refused(tmp_path: Path, name: str) -> None:
    # what a lost race leaves: one writer's run.json beside one file of another's
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, 1.0)
    _write(b, 2.0)
    assert load_run(a).mean("m") == 1.0
    (a / name).write_bytes((b / name).read_bytes())
    assert not _listed_files_match(a)
    with pytest.raises(InputError, match=f"{name} does not belong to this run.json"):
        load_run(a)
    with pytest.raises(InputError, match="does not belong"):
        assert_run(a, metric="m", at_least=0)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1", "'+1"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain", "plain"),
        (-0.5, -0.5),  # numbers are numbers
        (None, None),
    ],
)
def test_csv_cell(value: object, written: object) -> None:
    """OWASP's CSV injection guidance, case by case."""
    assert csv_cell(value) == written


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_no_csv_cell_starts_a_formula(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    out = tmp_path_factory.mktemp("csv")
    write_run(
        out,
        links=[LinkRow("s", 1, 1, text, title=text, labels={"j": 1.0})],
        turns=[TurnRow("s", 1, query=text, response_text=text, task_type=text)],
        sessions=[SessionRow(text, task_type=text)],
        meta=None,
        info={"version": 1},
    )
    for name in ("links.csv", "turns.csv", "sessions.csv"):
        with (out / name).open(newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                for cell in row:
                    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (name, cell)
    # the JSONL keeps the text exactly
    assert load_run(out).links[0].url == text
