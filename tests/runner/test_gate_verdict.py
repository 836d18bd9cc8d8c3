"""The gate's verdict comes from a run's contents, never from a flag (issue 23, issue 25).

A real run folder (``scenarios/demo-citations.toml``, offline: every file a run writes) and
a real failed one (the same run with ``--max-missing 0.01``: 1 of 17 citation labels
missing) are made once; each test edits a copy. ``compare`` and ``assert_run`` must refuse
a failed run, a ``run.json`` whose stated status disagrees with the status worked out again
from the run's own failures and threshold, a folder whose files are not exactly the ones
``run.json`` lists and hashes, and must escape what they print.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.rundir.folder import RUN_FILES, file_digest, load_run
from genir_eval.rundir.rows import JUDGE_FILES, REPEATS_FILE
from genir_eval.runner.testing import assert_run

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo-citations.toml"
METRIC = "citation_precision"


def _run(out: Path, *extra: str) -> int:
    return main(["run", str(SCENARIO), "--out", str(out), "--cache-mode", "off", "--quiet", *extra])


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("gate")
    good, failed = base / "good", base / "failed"
    assert _run(good) == 0
    assert _run(failed, "--max-missing", "0.01") == 3  # 1 of 17 > 1%: a failed run
    return {"good": good, "failed": failed}


@pytest.fixture
def copy(made: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    def take(name: str, as_name: str | None = None) -> Path:
        target = tmp_path / (as_name or name)
        shutil.copytree(made[name], target)
        return target

    return take


def _info(run: Path) -> dict[str, Any]:
    return json.loads((run / "run.json").read_text(encoding="utf-8"))


def _edit(run: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    info = _info(run)
    change(info)
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")


def _compare(capsys: pytest.CaptureFixture[str], a: Path, b: Path) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["compare", str(a), str(b), "--metric", METRIC])
    return code, capsys.readouterr().err.splitlines()


# -- a failed run is no result ----------------------------------------------------------------


def test_the_fixtures_are_what_they_claim(made: dict[str, Path]) -> None:
    good, failed = _info(made["good"]), _info(made["failed"])
    assert good["status"]["ok"] is True and failed["status"]["ok"] is False
    assert failed["status"]["reasons"] == [
        "judge citation_support: 1 of 17 labels missing (5.9% > 1.0% allowed)"
    ]
    # every file a run writes is there (so tampering each kind below means something)
    # no nugget judge here, and no --repeats (its file: tests/runner/test_repeats_compare.py)
    assert set(good["files"]) == RUN_FILES - JUDGE_FILES - {REPEATS_FILE}


@pytest.mark.parametrize("failed_is", ["a", "b"])
def test_compare_refuses_a_failed_run(made, capsys, failed_is) -> None:
    a, b = (made["failed"], made["good"]) if failed_is == "a" else (made["good"], made["failed"])
    code, err = _compare(capsys, a, b)
    assert code == 2, err
    assert len(err) == 1 and str(made["failed"]) in err[0], err
    assert "a failed run (exit code 3 when it ran)" in err[0] and "1 of 17" in err[0], err


def test_compare_passes_the_good_run_against_itself(made, capsys) -> None:
    """The refusal above is about the failed run: the good one passes."""
    capsys.readouterr()
    # demo-citations has 3 sessions: passing needs --min-sessions at most that
    args = ["compare", str(made["good"]), str(made["good"]), "--metric", METRIC]
    assert main([*args, "--min-sessions", "3"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("PASS")


def test_assert_run_refuses_a_failed_run(made) -> None:
    with pytest.raises(AssertionError, match=r"failed \(judge citation_support: 1 of 17"):
        assert_run(made["failed"], metric=METRIC, at_least=0.0)
    # the same bounds pass on the good run, read as a folder and as a Run
    assert assert_run(made["good"], metric=METRIC, at_least=0.0) >= 0.0
    with pytest.raises(AssertionError, match="failed"):
        assert_run(load_run(made["failed"]), metric=METRIC, at_least=0.0)


# -- a stated status that disagrees with the contents is refused ------------------------------


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(info: dict[str, Any]) -> None:
        target: Any = info
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


def _judge(info: dict[str, Any], judge: str) -> int:
    return next(i for i, j in enumerate(info["judges"]) if j["id"] == judge)


# (run, edit, words): each a run.json whose stated verdict or counts are not the run's
STATUS_EDITS: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("failed", _set(["status", "ok"], True), "says the run succeeded, but its own failures"),
    ("good", _set(["status", "ok"], False), "says the run failed, but its own failures"),
    ("failed", _set(["status", "reasons"], []), "says the run failed for other reasons"),
    ("good", _set(["status", "reasons"], ["judge x: 1 of 2 missing"]), "for other reasons"),
    ("failed", lambda i: i["status"].update(ok=True, reasons=[]), "says the run succeeded"),
    ("failed", lambda i: i.pop("status"), "lists missing judgments but no 'status'"),
    ("failed", _set(["status", "max_missing"], None), "lacks the threshold"),
    ("failed", _set(["status", "max_missing"], 2), "lacks the threshold"),
    ("failed", _set(["status", "max_missing"], "0.5"), "lacks the threshold"),
    ("failed", _set(["status", "max_missing"], True), "lacks the threshold"),
    ("good", _set(["status", "allow_permanent"], "no"), "lacks the threshold"),
    ("good", lambda i: i["status"].pop("allow_permanent"), "lacks the threshold"),
    # the threshold edited alone: the stated verdict no longer follows from it
    ("good", _set(["status", "max_missing"], 0.0), "says the run succeeded"),
    ("failed", _set(["status", "max_missing"], 0.5), "says the run failed"),
    ("good", _set(["failures_total"], 0), "judgments missing, its failures list 1"),
    ("good", _set(["failures_total"], 5), "judgments missing, its failures list 1"),
    (
        "failed",
        lambda i: i["judges"][_judge(i, "citation_support")].update(missing=0),
        "says 0 labels missing, the run's failures list 1",
    ),
    (
        "good",
        lambda i: i["judges"][_judge(i, "link_usefulness.dna")].update(missing=3),
        "says 3 labels missing",
    ),
    (
        "good",
        lambda i: i["judges"][_judge(i, "citation_support")].update(labels=0),
        "label count 0 is not a whole number at least its 1 failures",
    ),
    (
        "good",
        lambda i: i["judges"][_judge(i, "citation_support")].update(labels="17"),
        "label count '17'",
    ),
    (
        "good",
        lambda i: i["judges"].pop(_judge(i, "citation_support")),
        "failures of judge 'citation_support', which run.json does not list",
    ),
    ("good", _set(["judges"], "all"), "'judges' or 'engines' is not a list"),
    ("good", _set(["engines"], [1]), "'judges' or 'engines' is not a list"),
    (
        "good",
        lambda i: i["engines"][0].update(stopped="5 consecutive permanent errors"),
        "says the run succeeded, but its own failures say otherwise (offline/offline",
    ),
    (
        "good",
        lambda i: i["engines"][0].update(failures={"permanent": 2}),
        "2 calls failed with a permanent error",
    ),
    ("good", lambda i: i["judges"].append({"labels": 3}), "a judge without an id"),
]


@pytest.mark.parametrize(("name", "edit", "words"), STATUS_EDITS)
def test_an_edited_status_is_refused(copy, capsys, name, edit, words) -> None:
    run = copy(name)
    _edit(run, edit)
    with pytest.raises(InputError) as caught:
        load_run(run)
    assert words in str(caught.value), str(caught.value)
    code, err = _compare(capsys, copy("good", "other"), run)
    assert code == 2 and len(err) == 1 and words in err[0], err
    with pytest.raises(InputError, match="run again"):
        assert_run(run, metric=METRIC, at_least=0.0)


def test_a_failed_run_edited_to_ok_is_refused_not_compared(copy, capsys) -> None:
    """The red team's case: the failed run with ``"ok": true`` passed (PASS, exit 0)."""
    run = copy("failed")
    _edit(run, _set(["status", "ok"], True))
    code, err = _compare(capsys, copy("good", "other"), run)
    assert code == 2, err
    assert "judge citation_support: 1 of 17 labels missing (5.9% > 1.0% allowed)" in err[0]


def test_failures_edited_in_the_failures_file_are_refused(copy) -> None:
    """failures.jsonl is hashed: removing the one failure (to make the counts agree with an
    edited status) breaks its digest."""
    run = copy("failed")
    (run / "failures.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="failures.jsonl does not belong to this run.json"):
        load_run(run)


# -- every file of a run is listed and hashed -----------------------------------------------


# the nugget file: test_nuggets_run; the repeats' file: test_repeats_compare
STANDARD = sorted(RUN_FILES - JUDGE_FILES - {REPEATS_FILE})


@pytest.mark.parametrize("name", STANDARD)
def test_a_changed_file_of_any_kind_is_refused(copy, capsys, name) -> None:
    run = copy("good")
    with (run / name).open("ab") as handle:
        handle.write(b" ")
    code, err = _compare(capsys, copy("good", "other"), run)
    assert code == 2 and len(err) == 1, err
    assert f"{name} does not belong to this run.json" in err[0], err


@pytest.mark.parametrize("name", STANDARD)
def test_a_deleted_listed_file_is_refused(copy, name) -> None:
    run = copy("good")
    (run / name).unlink()
    with pytest.raises(InputError) as caught:
        load_run(run)
    text = str(caught.value)
    assert f"run.json lists {name}, which is missing" in text or (
        f"run directory is missing {name}" in text
    ), text


@pytest.mark.parametrize("name", STANDARD)
def test_a_file_dropped_from_the_list_is_refused(copy, capsys, name) -> None:
    """The red team's case for sessions.jsonl: edited, then dropped from run.json's list."""
    run = copy("good")
    if name.endswith(".jsonl"):
        with (run / name).open("ab") as handle:
            handle.write(b"\n")
    _edit(run, lambda i: i["files"].pop(name))
    code, err = _compare(capsys, copy("good", "other"), run)
    assert code == 2 and len(err) == 1, err
    assert f"{name} is in the folder but run.json does not list it" in err[0], err


@pytest.mark.parametrize(
    "extra", ["notes.txt", "journal.sqlite", "run.json", "links.tsv", "report.htm"]
)
def test_a_listed_file_a_run_never_writes_is_refused(copy, extra) -> None:
    run = copy("good")
    if not (run / extra).exists():
        (run / extra).write_text("x", encoding="utf-8")
    _edit(run, lambda i: i["files"].__setitem__(extra, file_digest(run / extra)))
    with pytest.raises(InputError, match=f"lists '{extra}', which is not a file a run writes"):
        load_run(run)


def test_other_files_in_the_folder_are_left_alone(copy) -> None:
    """A run folder also holds the journal, and a user's own notes: not the run's files."""
    run = copy("good")
    (run / "notes.txt").write_text("mine", encoding="utf-8")
    assert load_run(run).info["status"]["ok"] is True
