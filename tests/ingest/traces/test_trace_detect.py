"""Telling a trace file from the other formats by its content, and saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest import detect_format
from genir_eval.ingest.loader import detect_format_reason


def test_a_canonical_session_quoting_trace_keys_stays_jsonl(tmp_path: Path) -> None:
    """A key named in a string is escaped (\\"resourceSpans\\":), so it is no key."""
    session = {
        "session_id": "s",
        "turns": [
            {"query": 'what is {"resourceSpans": [], "run_type": "llm"}?', "response_text": "x"}
        ],
    }
    path = tmp_path / "sessions.jsonl"
    path.write_text(json.dumps(session) + "\n", encoding="utf-8")
    assert detect_format_reason(path) == ("jsonl", "the name ends in .jsonl")


@pytest.mark.parametrize(
    "first,expected",
    [
        ({"resourceSpans": []}, "otlp"),
        ({"run_type": "chain", "id": "r"}, "langsmith"),
        ({"id": "t", "observations": []}, "langfuse"),
        ({"id": "o", "traceId": "t", "type": "GENERATION"}, "langfuse"),
    ],
)
def test_trace_files_are_told_by_their_first_object(
    first: dict[str, object], expected: str, tmp_path: Path
) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(first) + "\n", encoding="utf-8")
    fmt, reason = detect_format_reason(path)
    assert fmt == expected and "first object" in reason


def test_a_folder_without_trace_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Session: a\n", encoding="utf-8")
    with pytest.raises(InputError, match="only as trace files"):
        detect_format(tmp_path)
