"""Nugget files as evaluations publish them (issue 49) and the hostile ones (issue 46.5): a
nuggetizer entry naming another query, a ``version`` key in an entry, a lone surrogate,
graded importance kept as given with vital by a stated rule, and the three fixture files
the tour reads (TREC nuggetizer output, a collection's file, a graded file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.judges.nuggets import read_nugget_file, write_nugget_file, write_nuggetizer_file
from genir_eval.metrics import NuggetRecall, parse_measure
from genir_eval.metrics.nuggets import AssignedNugget

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures" / "nuggets"


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _line(qid: str, *nuggets: dict[str, object]) -> dict[str, object]:
    return {"qid": qid, "query": "q", "nuggets": list(nuggets)}


def test_an_entry_naming_another_query_is_refused_where_it_stands(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "n.jsonl",
        [
            _line("cite-solar#2", {"text": "a", "importance": "vital"}),
            _line("cite-espresso", {"text": "b", "importance": "okay", "qid": "cite-solar#1"}),
        ],
    )
    with pytest.raises(InputError, match="names query 'cite-solar#1'") as caught:
        read_nugget_file(path)
    assert (caught.value.path, caught.value.line, caught.value.column) == (str(path), 2, "qid")


def test_an_entry_naming_its_own_query_stays_under_it(tmp_path: Path) -> None:
    rows = [_line("q1", {"text": "a", "importance": "vital", "qid": "q1"})]
    sets = read_nugget_file(_write(tmp_path / "n.jsonl", rows))
    own = write_nugget_file(sets.values(), tmp_path / "own.jsonl")
    lines = [json.loads(t) for t in own.read_text(encoding="utf-8").splitlines()]
    assert [line["qid"] for line in lines] == ["q1"]
    assert lines[0]["nuggetizer"] == {"qid": "q1"}


def test_a_version_key_in_an_entry_leaves_the_run_s_file_readable(tmp_path: Path) -> None:
    rows = [
        _line(
            "q1",
            {"text": "a", "importance": "vital", "version": 2, "origin": "assessor 3"},
            {"text": "b", "importance": "okay"},
        )
    ]
    source = _write(tmp_path / "n.jsonl", rows)
    own = write_nugget_file(read_nugget_file(source).values(), tmp_path / "own.jsonl")
    first = json.loads(own.read_text(encoding="utf-8").splitlines()[0])
    assert first["version"] == 1 and first["origin"] == "nuggetizer file"
    assert first["nuggetizer"] == {"version": 2, "origin": "assessor 3"}
    again = read_nugget_file(own)  # was: unsupported version 2
    assert [n.text for n in again["q1"].nuggets] == ["a", "b"]
    back = write_nuggetizer_file(again.values(), tmp_path / "back.jsonl")
    assert json.loads(back.read_text(encoding="utf-8")) == rows[0]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (
            '{"qid": "q", "query": "x", "nuggets": [{"text": "a \\ud800 b", "importance": "vital"}]}',
            "nuggets.text",
        ),
        (
            '{"version": 1, "qid": "q\\udc00", "nugget_id": "n1", "text": "t", "importance": "okay"}',
            "qid",
        ),
    ],
)
def test_a_lone_surrogate_is_a_located_error(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text('{"qid": "q0", "query": "x", "nuggets": []}\n' + line + "\n", encoding="utf-8")
    if '"nugget_id"' in line:
        path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="lone UTF-16 surrogate") as caught:
        read_nugget_file(path)
    assert caught.value.column == field
    assert caught.value.line == (1 if '"nugget_id"' in line else 2)


def test_graded_importance_is_kept_and_vital_follows_the_stated_rule(tmp_path: Path) -> None:
    from genir_eval.judges.nuggets.files import vital_mark

    rows = [
        _line(
            "q1",
            {"text": "a", "importance": 4},
            {"text": "b", "importance": "2"},  # a grade written as text, as some files do
            {"text": "c", "importance": 3},
            {"text": "d", "importance": 1},
        )
    ]
    path = _write(tmp_path / "graded.jsonl", rows)
    sets = read_nugget_file(path)
    nuggets = sets["q1"].nuggets
    assert [n.grade for n in nuggets] == [4, 2, 3, 1]
    # the middle of the file's grades 1-4 is 2.5: 3 and 4 are vital
    assert [n.importance for n in nuggets] == ["vital", "okay", "vital", "okay"]
    assert vital_mark(sets.values()) == (
        2.5,
        "importance graded 1-4; vital: grade >= 2.5, the middle of the file's grades (set "
        "vital_grade to change it)",
    )
    strict = read_nugget_file(path, vital_grade=4)
    assert [n.importance for n in strict["q1"].nuggets] == ["vital", "okay", "okay", "okay"]
    own = write_nugget_file(sets.values(), tmp_path / "own.jsonl")
    assert [json.loads(t)["importance"] for t in own.read_text().splitlines()] == [4, 2, 3, 1]
    assert [n.grade for n in read_nugget_file(own)["q1"].nuggets] == [4, 2, 3, 1]


def test_a_file_grades_its_nuggets_one_way(tmp_path: Path) -> None:
    rows = [
        _line("q1", {"text": "a", "importance": 2}),
        _line("q2", {"text": "b", "importance": "vital"}),
    ]
    path = _write(tmp_path / "mixed.jsonl", rows)
    with pytest.raises(InputError, match="one file grades its nuggets one way") as caught:
        read_nugget_file(path)
    assert (caught.value.line, caught.value.column) == (2, "importance")
    with pytest.raises(InputError, match="or a grade"):
        read_nugget_file(
            _write(tmp_path / "nan.jsonl", [_line("q", {"text": "a", "importance": "NaN"})])
        )


def test_weighted_recall_by_hand() -> None:
    from genir_eval.metrics import WeightedNuggetRecall

    # computed by hand from the definition: sum(weight x gain) / sum(weight)
    graded = [
        AssignedNugget("vital", "support", 4),  # type: ignore[call-arg]
        AssignedNugget("okay", "partial_support", 2),  # type: ignore[call-arg]
        AssignedNugget("okay", "not_support", 1),  # type: ignore[call-arg]
    ]
    assert WeightedNuggetRecall().turn(graded) == pytest.approx((4 + 2 * 0.5) / 7)
    assert WeightedNuggetRecall(partial=0).turn(graded) == pytest.approx(4 / 7)
    words = [
        AssignedNugget("vital", "support"),
        AssignedNugget("okay", "partial_support"),
        AssignedNugget("okay", "not_support"),
    ]
    # vital weighs 1, okay 0.5 (the AutoNuggetizer's weighted score): (1 + 0.5 x 0.5) / 2
    assert WeightedNuggetRecall().turn(words) == pytest.approx(0.625)
    assert NuggetRecall().turn(words) == pytest.approx(0.5)
    assert (
        str(parse_measure("weighted_nugget_recall(partial=0)"))
        == "weighted-nugget-recall(partial=0)"
    )
    assert WeightedNuggetRecall().turn([AssignedNugget("okay", None, 2)]) is None


def test_the_fixture_files_load_as_published() -> None:
    nuggetizer = read_nugget_file(FIXTURES / "nuggetizer.jsonl")
    assert list(nuggetizer)[:3] == ["heat-pumps", "sourdough", "tides"] and len(nuggetizer) == 6
    assert nuggetizer["heat-pumps"].extra["trace"]["output_token_count"] == 96
    collection = read_nugget_file(FIXTURES / "collection.jsonl")
    assert len(collection) == 9
    graded = read_nugget_file(FIXTURES / "graded.jsonl")
    words = [len(n.text.split()) for s in graded.values() for n in s.nuggets]
    assert min(words) >= 25 and max(words) <= 45  # passage-length, as assessors excerpt
    assert {n.grade for s in graded.values() for n in s.nuggets} == {1, 2, 3, 4}


# Hostile lines of a nugget file (issue 46.5's class, cases of this suite's own): each is
# refused with its line, or read; none is a traceback.
HOSTILE = [
    '{"qid": "q", "query": "x", "nuggets": [{"text": "a", "importance": NaN}]}',
    '{"qid": "q", "query": "x", "nuggets": [{"text": "a", "importance": 1e999}]}',
    '{"qid": "q", "query": "x", "nuggets": [{"text": "a", "importance": true}]}',
    '{"qid": 1.5, "query": "x", "nuggets": []}',
    '{"qid": "q", "query": {"qid": "q", "text": "x"}, "nuggets": []}',
    '{"qid": "q", "query": "x", "nuggets": ["a bare string"]}',
    '{"qid": "q", "query": "x", "nuggets": [{"text": "a", "importance": "vital", "qid": 7}]}',
    '{"version": 1, "qid": "q", "nugget_id": "n1", "text": "t", "importance": "okay", '
    '"nuggetizer": "not an object"}',
    '{"version": 1, "qid": "q", "nugget_id": "n1", "text": "t", "importance": "okay", '
    '"origin": {"\\ud83d": 1}}',
    "[" * 5000 + "]" * 5000,
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_hostile_line_is_refused_where_it_stands_or_read(tmp_path: Path, line: str) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    try:
        sets = read_nugget_file(path)
    except InputError as error:
        assert error.path == str(path) and error.line == 1
        return
    # read: it writes back in both layouts as UTF-8 and reads again
    own = write_nugget_file(sets.values(), tmp_path / "own.jsonl")
    write_nuggetizer_file(sets.values(), tmp_path / "trec.jsonl")
    assert read_nugget_file(own).keys() <= sets.keys()


def test_a_created_nugget_holding_a_lone_surrogate_is_a_reply_error() -> None:
    from genir_eval.judges.nuggets.replies import parse_created
    from genir_eval.judges.parsing import ReplyError

    with pytest.raises(ReplyError, match="lone surrogate"):
        parse_created(10)('{"nuggets": ["fine", "bad \\ud800 text"]}')
    assert parse_created(10)('{"nuggets": ["fine \\ud83d\\ude00"]}') == ["fine \U0001f600"]


def test_the_nuggetizer_s_assign_output_is_named_when_given_as_nuggets(tmp_path: Path) -> None:
    # the assign output repeats a query per answer, its nuggets with their assignment
    line = {
        "query": "What is Python?",
        "qid": "q1",
        "answer_text": "Python is a language.",
        "run_id": "run-123",
        "nuggets": [
            {"text": "Python is a language", "importance": "vital", "assignment": "support"}
        ],
    }
    path = _write(tmp_path / "assigned.jsonl", [line, {**line, "run_id": "run-456"}])
    with pytest.raises(InputError, match="assign output") as caught:
        read_nugget_file(path)
    assert (caught.value.line, caught.value.column) == (2, "qid")
