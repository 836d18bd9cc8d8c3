"""Nugget files: genir-eval's layout and the TREC nuggetizer's, read and written back without
loss, and every bad line refused with its file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.judges.nuggets import (
    read_nugget_file,
    write_nugget_file,
    write_nuggetizer_file,
)

# Invented TREC-style lines in the nuggetizer's layout, with keys the layout does not name
# (kept on the query and on the nugget) and an assignment as its assignment files carry.
TREC_LINES = [
    {
        "qid": "2024-105741",
        "query": "is it safe to eat raw cookie dough",
        "nuggets": [
            {"text": "Raw flour can carry E. coli", "importance": "vital"},
            {
                "text": "Raw eggs can carry Salmonella",
                "importance": "vital",
                "assignment": "support",
            },
            {"text": "Heat-treated flour is safer", "importance": "okay"},
        ],
        "run_id": "ragnarok",
    },
    {"qid": "2024-96359", "query": "why do cats purr", "nuggets": []},
]


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_nuggetizer_file_round_trips(tmp_path: Path) -> None:
    source = _write(tmp_path / "trec.jsonl", TREC_LINES)
    sets = read_nugget_file(source)
    assert [n.id for n in sets["2024-105741"].nuggets] == ["n1", "n2", "n3"]
    assert [n.importance for n in sets["2024-105741"].vital] == ["vital", "vital"]
    back = write_nuggetizer_file(sets.values(), tmp_path / "back.jsonl")
    lines = [json.loads(t) for t in back.read_text(encoding="utf-8").splitlines()]
    assert lines == TREC_LINES


def test_own_layout_round_trips_through_both(tmp_path: Path) -> None:
    sets = read_nugget_file(_write(tmp_path / "trec.jsonl", TREC_LINES))
    own = write_nugget_file(sets.values(), tmp_path / "own.jsonl")
    rows = [json.loads(t) for t in own.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {
        "version": 1,
        "qid": "2024-105741",
        "query": "is it safe to eat raw cookie dough",
        "nugget_id": "n1",
        "text": "Raw flour can carry E. coli",
        "importance": "vital",
        "origin": "nuggetizer file",
    }
    again = read_nugget_file(own)
    # a query without nuggets has no line in the one-nugget-a-line layout
    assert list(again) == ["2024-105741"]
    assert again["2024-105741"].nuggets == sets["2024-105741"].nuggets


def _own(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "version": 1,
        "qid": "q1",
        "query": "x",
        "nugget_id": "n1",
        "text": "a fact",
        "importance": "vital",
        "origin": "human",
    }
    row.update(fields)
    return {k: v for k, v in row.items() if v is not None}


# (lines, line of the error, field named, message part): each a mistake a person editing
# the file makes
BAD = [
    ([_own(nugget_id=None)], 1, "nugget_id", "nugget id"),
    ([_own(qid=None)], 1, "qid", "query id"),
    ([_own(), _own(importance="essential")], 2, "importance", "vital, okay"),
    ([_own(), _own(text="another")], 2, "nugget_id", "appears twice"),
    ([_own(text="  ")], 1, "text", "non-empty"),
    ([_own(version=2)], 1, "version", "unsupported version"),
    ([TREC_LINES[0], TREC_LINES[0]], 2, "qid", "on line 1 already"),
    (
        [{"qid": "q", "query": "x", "nuggets": [{"text": "t", "importance": "failed"}]}],
        1,
        "importance",
        "vital, okay",
    ),
]


@pytest.mark.parametrize(("rows", "line", "field", "message"), BAD)
def test_bad_nugget_file_is_located(
    tmp_path: Path, rows: list[object], line: int, field: str, message: str
) -> None:
    path = _write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError, match=message) as caught:
        read_nugget_file(path)
    assert (caught.value.path, caught.value.line, caught.value.column) == (str(path), line, field)


def test_mixed_layouts_and_broken_json_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="one file holds one layout") as caught:
        read_nugget_file(_write(tmp_path / "mixed.jsonl", [_own(), TREC_LINES[1]]))
    assert caught.value.line == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(_own()) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON") as caught:
        read_nugget_file(broken)
    assert caught.value.line == 2
