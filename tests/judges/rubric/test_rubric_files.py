"""A hand-edited or damaged RUBRIC bank file ends in an error naming the file, never a
traceback, and a bank is used only for the session and turns it was made for.

Before, a bank file that was a folder, unreadable or not UTF-8 raised a Python traceback; a
bank copied from another session graded this one against the other's questions; two banks
for one turn, a bank for a turn the session lacks, an unknown ``kind`` or a numeric question
id loaded silently (one bank or id quietly won).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import bread_session, judge_session

from genir_eval.errors import InputError
from genir_eval.judges.rubric.bank import read_rubric_file, rubric_path


def _bank(tmp_path: Path) -> dict[str, Any]:
    judge_session("rubric", bread_session(), rubric_dir=str(tmp_path))
    return json.loads(rubric_path(tmp_path, "s1").read_text(encoding="utf-8"))


def _questions(data: dict[str, Any]) -> list[Any]:
    return data["rubrics"][0]["questions"]


# (how the file is damaged, words of the error)
DAMAGED = [
    (lambda p, d: (p.unlink(), p.mkdir()), "cannot read the rubric file: Is a directory"),
    (lambda p, d: p.write_bytes(b"\xff\xfe{}"), "not UTF-8 text (byte 0xff at byte 1)"),
    (lambda p, d: p.write_text("[" * 100_000, encoding="utf-8"), "nested too deeply"),
    (lambda p, d: p.write_text(json.dumps(d | {"session_id": "s2"})), "the bank of session 's2'"),
    (lambda p, d: p.write_text(json.dumps(d | {"session_id": 7})), "'session_id' must be a str"),
    (lambda p, d: p.write_text(json.dumps(d | {"kind": "nugget"})), "kind 'nugget' is not one"),
    (lambda p, d: p.write_text(json.dumps(d | {"rubrics": {"turn": 1}})), "'rubrics' must be a"),
    (
        lambda p, d: p.write_text(json.dumps(d | {"rubrics": d["rubrics"] * 2})),
        "rubric 2: a second bank for turn 1",
    ),
    (
        lambda p, d: p.write_text(
            json.dumps(d | {"rubrics": [d["rubrics"][0] | {"turn": None}] * 2})
        ),
        "a second bank for the whole session",
    ),
    (
        lambda p, d: p.write_text(json.dumps(d | {"rubrics": [d["rubrics"][0] | {"turn": 5}]})),
        "a bank for turn 5, but session 's1' has 1 turn(s)",
    ),
    (
        lambda p, d: p.write_text(json.dumps(d | {"rubrics": [d["rubrics"][0] | {"turn": 0}]})),
        "'turn' must be a turn number",
    ),
    (
        lambda p, d: p.write_text(
            json.dumps(
                d | {"rubrics": [d["rubrics"][0] | {"questions": [{"id": 0, "text": "a?"}]}]}
            )
        ),
        "question 1: 'id' must be a non-empty string",
    ),
]


@pytest.mark.parametrize(("damage", "words"), DAMAGED)
def test_a_damaged_bank_is_an_error_naming_the_file(tmp_path, damage, words):
    data = _bank(tmp_path)
    path = rubric_path(tmp_path, "s1")
    damage(path, data)
    for mode in ("grade", "generate"):
        with pytest.raises(InputError) as caught:
            judge_session("rubric", bread_session(), rubric_dir=str(tmp_path), mode=mode)
        assert caught.value.path == str(path)
        assert words in str(caught.value), str(caught.value)


def test_an_unreadable_bank_is_an_error_naming_the_file(tmp_path):
    """A bank that cannot be read, whoever runs the test: root reads a file whatever its mode,
    so the unreadable file is a folder in its place (EISDIR for every user)."""
    _bank(tmp_path)
    path = rubric_path(tmp_path, "s1")
    path.unlink()
    path.mkdir()
    with pytest.raises(InputError, match="cannot read the rubric file: Is a directory") as caught:
        read_rubric_file(path)
    assert caught.value.path == str(path)


def test_a_bank_edited_within_the_rules_still_grades(tmp_path):
    data = _bank(tmp_path)
    _questions(data)[0] = {"text": "Which flour does the recipe use?"}  # no id: q1
    _questions(data)[1]["id"] = " custom "
    path = rubric_path(tmp_path, "s1")
    path.write_text(json.dumps(data), encoding="utf-8")
    read = read_rubric_file(path)
    assert [q.id for q in read.rubrics[0].questions[:2]] == ["q1", "custom"]
    labels = judge_session("rubric", bread_session(), rubric_dir=str(tmp_path), mode="grade")
    assert labels and all(lb.value is not None for lb in labels)
