"""Canonical JSONL: lossless round trip and validation errors naming file, line and field."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions, read_jsonl, validate_session_dict, write_jsonl
from genir_eval.records import session_to_dict


def test_round_trip_of_the_demo_sessions(fixtures_dir, tmp_path):
    sessions = load_sessions(fixtures_dir / "demo_sessions.csv").sessions
    path = tmp_path / "s.jsonl"
    assert write_jsonl(sessions, path) == len(sessions)
    assert read_jsonl(path).sessions == sessions
    buffer = io.StringIO()
    write_jsonl(sessions, buffer)
    assert buffer.getvalue() == path.read_text(encoding="utf-8")


def test_round_trip_of_the_urge_sample(urge_sample_path, tmp_path):
    sessions = load_sessions(urge_sample_path).sessions
    path = tmp_path / "urge.jsonl"
    write_jsonl(sessions, path)
    assert "服务器" in path.read_text(encoding="utf-8")  # UTF-8, not \\u escapes
    assert load_sessions(path).sessions == sessions


def minimal() -> dict[str, Any]:
    return {
        "session_id": "mine-1",
        "turns": [{"index": 1, "query": "q", "response_text": "One, two. Three"}],
    }


def test_hand_written_line_gets_defaults(tmp_path):
    data = minimal()
    data["unknown_key"] = {"kept": "nowhere"}
    path = tmp_path / "mine.jsonl"
    path.write_text("\n" + json.dumps(data) + "\n\n", encoding="utf-8")
    (session,) = read_jsonl(path).sessions
    turn = session.turns[0]
    assert session.language == "en" and session.source == "unknown"
    assert [(s.text, s.citations) for s in turn.statements] == [("One, two. Three", ())]
    assert [s.text for s in turn.segments] == ["One,", "two.", "Three"]
    assert turn.links == ()


def _set(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    target: Any = data
    keys = dotted.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
    last = keys[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return data


def full() -> dict[str, Any]:
    data = minimal()
    data["turns"].append({"index": 2, "query": "q2", "response_text": "Yes."})
    data["turns"][0]["statements"] = [
        {"text": "One, two.", "citations": [1]},
        {"text": " Three", "citations": []},
    ]
    data["turns"][0]["links"] = [{"id": 1, "url": "https://a.example", "title": "A"}]
    data["turns"][0]["segments"] = [{"text": "One,", "start": 0, "end": 4}]
    data["gold"] = {
        "session_satisfaction": 4,
        "query_satisfaction": [4, 5],
        "link_usefulness": [{"1": 3}, {}],
        "citation_usefulness": [[[3], []], [[2]]],
    }
    return data


# (field set, value, field the error names); the rule broken is in the test id.
INVALID_CASES = [
    ("session_id", "", "session_id"),
    ("version", 99, "version"),
    ("turns", [], "turns"),
    ("turns.1.index", 3, "turns[1].index"),
    ("turns.0.query", None, "turns[0].query"),
    ("turns.0.statements.0.citations", ["1"], "turns[0].statements[0].citations"),
    ("turns.0.links.0.id", 1.5, "turns[0].links[0].id"),
    ("turns.0.segments.0.end", 99, "turns[0].segments[0].start"),
    ("turns.0.segments.0.text", "Two,", "turns[0].segments[0].text"),
    ("gold.session_satisfaction", 0, "gold.session_satisfaction"),
    ("gold.session_satisfaction", True, "gold.session_satisfaction"),
    ("gold.query_satisfaction", [4], "gold.query_satisfaction"),
    ("gold.query_satisfaction", [4, 6], "gold.query_satisfaction[1]"),
    ("gold.link_usefulness", [{"1": 4}, {}], "gold.link_usefulness[0].1"),
    ("gold.link_usefulness", [{"x": 1}, {}], "gold.link_usefulness[0]"),
    ("gold.citation_usefulness", [[[3], []], [[-1]]], "gold.citation_usefulness[1][0]"),
    ("language", 3, "language"),
]


@pytest.mark.parametrize(("dotted", "value", "field"), INVALID_CASES)
def test_invalid_line_names_file_line_and_field(tmp_path, dotted, value, field):
    path = tmp_path / "bad.jsonl"
    lines = [json.dumps(full()), json.dumps(_set(full(), dotted, value) | {"session_id": "b"})]
    if dotted == "session_id":
        lines[1] = json.dumps(_set(full(), dotted, value))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    assert (caught.value.path, caught.value.line, caught.value.column) == (str(path), 2, field)
    with pytest.raises(InputError) as again:
        validate_session_dict(json.loads(lines[1]))
    assert again.value.column == field


def test_the_valid_full_object_passes():
    validate_session_dict(full())
    assert full()["gold"]["session_satisfaction"] == 4


def test_skip_invalid_and_duplicates(tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = json.dumps(full())
    path.write_text(f"{good}\nnot json\n{good}\n", encoding="utf-8")
    result = read_jsonl(path, skip_invalid=True)
    assert [s.session_id for s in result.sessions] == ["mine-1"]
    assert [(e.line, e.column) for e in result.skipped] == [(2, "(line)"), (3, "session_id")]
    assert "duplicate session id" in result.skipped[1].message


def test_written_objects_are_the_records_contract(fixtures_dir: Path, tmp_path):
    sessions = load_sessions(fixtures_dir / "demo_sessions.csv").sessions
    path = tmp_path / "s.jsonl"
    write_jsonl(sessions, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [session_to_dict(s) for s in sessions]
