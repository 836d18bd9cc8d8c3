"""The canonical preferences file: what it reads, and bad rows located by line and field."""

from __future__ import annotations

import io

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest.preferences import Preference, read_preferences, write_preferences


def _write(tmp_path, text: str):
    path = tmp_path / "preferences.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_both_forms_and_their_defaults(tmp_path):
    path = _write(
        tmp_path,
        '{"session_a": "s1", "session_b": "s2", "winner": "a"}\n'
        "\n"
        '{"session": "q7", "turn": 2, "system_a": "x", "system_b": "y", "winner": "tie", '
        '"criterion": "coverage_deep", "meta": {"note": "ignored"}}\n'
        '{"session_a": "s1", "session_b": "s3", "turn": 1, "winner": "b", "query": "topic-1"}\n',
    )
    first, second, third = read_preferences(path)
    assert first == Preference(winner="a", query="s1|s2", session_a="s1", session_b="s2")
    assert first.in_run and not first.in_arena
    assert second == Preference(
        winner="tie",
        query="q7",
        session="q7",
        system_a="x",
        system_b="y",
        turn=2,
        criterion="coverage_deep",
    )
    assert second.in_arena and not second.in_run
    assert (third.turn, third.query) == (1, "topic-1")


def test_a_written_file_reads_back(tmp_path):
    rows = [
        Preference(
            winner="b",
            query="t",
            session_a="t/x",
            session_b="t/y",
            session="t",
            system_a="x",
            system_b="y",
            turn=1,
            criterion="quality_overall",
        ),
        Preference(winner="tie", query="a|b", session_a="a", session_b="b"),
    ]
    buffer = io.BytesIO()
    assert write_preferences(rows, buffer) == 2
    path = tmp_path / "p.jsonl"
    path.write_bytes(buffer.getvalue())
    assert read_preferences(path) == rows


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '{"session_a": "s1", "session_b": "s2", "winner": "A"}',
            "line 2, column 'winner': must be one of a, b, tie, not 'A'",
        ),
        ('{"session_a": "s1", "winner": "a"}', "line 2, column 'session_b': missing"),
        (
            '{"session_a": "s1", "session_b": "s1", "winner": "a"}',
            "line 2, column 'session_b': is session_a",
        ),
        (
            '{"session": "q", "system_a": "x", "system_b": "y", "winner": "a"}',
            "line 2, column 'turn': missing",
        ),
        (
            '{"session": "q", "turn": 0, "system_a": "x", "system_b": "y", "winner": "a"}',
            "line 2, column 'turn': must be a 1-based turn index, not 0",
        ),
        (
            '{"session_a": "s1", "session_b": 3, "winner": "a"}',
            "line 2, column 'session_b': must be a non-empty string, not 3",
        ),
        ('{"winner": "a"}', "line 2: names no answers"),
        (
            '{"session_a": "s1", "session_b": "s2", "winner": "a", "winner": "b"}',
            "line 2, column 'winner': the key appears twice",
        ),
        ('["s1", "s2"]', "line 2: a line must be a JSON object"),
        (
            '{"session_a": "s2", "session_b": "s1", "winner": "b"}',
            "line 2: the same two answers and criterion were already judged on line 1",
        ),
        (
            '{"version": 2, "session_a": "s1", "session_b": "s3", "winner": "a"}',
            "line 2, column 'version': version 2 is newer",
        ),
        ("{not json", "line 2: not a JSON object"),
    ],
)
def test_bad_rows_are_located(tmp_path, line, expected):
    path = _write(tmp_path, '{"session_a": "s1", "session_b": "s2", "winner": "a"}\n' + line + "\n")
    with pytest.raises(InputError) as caught:
        read_preferences(path)
    assert str(caught.value).startswith(str(path))
    assert expected in str(caught.value)


def test_an_empty_or_missing_file_is_an_error(tmp_path):
    with pytest.raises(InputError, match="holds no preference"):
        read_preferences(_write(tmp_path, "\n"))
    with pytest.raises(InputError, match="no such file"):
        read_preferences(tmp_path / "missing.jsonl")
