"""A damaged run folder is refused by ``compare`` with one line naming it, never a traceback
and never read as a result.

Before, a ``run.json`` that was not UTF-8 raised a traceback, one without ``files`` skipped
the check that every file belongs to the run, one listing ``../`` names checked files
outside the folder, one whose ``status`` was ``{"ok": "false"}`` passed for a success, and
``--worst -1`` listed all but the last sessions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli import main


def _edit(run: Path, change: Any) -> None:
    path = run / "run.json"
    info = json.loads(path.read_text(encoding="utf-8"))
    change(info)
    path.write_text(json.dumps(info), encoding="utf-8")


SCORES = {"s1": 0.5, "s2": 0.6, "s3": 0.7}

DAMAGE = [
    (lambda run: (run / "run.json").write_bytes(b"\xff\xfe{}"), "not UTF-8 text (byte 0xff"),
    (lambda run: (run / "run.json").write_text("[" * 100_000), "nested too deeply"),
    (lambda run: _edit(run, lambda i: i.pop("files")), "'files' is not an object"),
    (lambda run: _edit(run, lambda i: i.__setitem__("files", {})), "'files' is not an object"),
    (
        lambda run: _edit(run, lambda i: i["files"].__setitem__("../run.json", "0" * 64)),
        "lists '../run.json', which is not a file of its folder",
    ),
    (
        lambda run: _edit(run, lambda i: i["files"].__setitem__("/etc/hostname", "0" * 64)),
        "which is not a file of its folder",
    ),
    (
        lambda run: _edit(run, lambda i: i.__setitem__("status", {"ok": "false"})),
        "'status' is not an object with 'ok': true or false",
    ),
    (
        lambda run: _edit(run, lambda i: i.__setitem__("status", "ok")),
        "'status' is not an object",
    ),
    (lambda run: (run / "turns.jsonl").write_bytes(b"\xff\n"), "does not belong to this run"),
]


@pytest.mark.parametrize(("damage", "words"), DAMAGE)
def test_compare_refuses_a_damaged_run_folder(make_scores_run, capsys, damage, words):
    a = make_scores_run("a", SCORES)
    b = make_scores_run("b", SCORES)
    damage(a)
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(a) in err[0] and words in err[0], err


def test_compare_refuses_a_negative_worst(make_scores_run, capsys):
    a = make_scores_run("a", SCORES)
    b = make_scores_run("b", SCORES)
    assert main(["compare", str(a), str(b), "--worst", "-1"]) == 2
    assert "--worst: expected an integer >= 0" in capsys.readouterr().err
