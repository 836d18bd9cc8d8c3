"""Langfuse- and LangSmith-shaped exports of the instrumented app's sessions (by their
documented schemas: Langfuse's traces with observations, LangSmith's runs), as JSON, JSONL
and Parquet, read back with every session, turn, link and citation the app recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trace_checks import langfuse_traces, langsmith_runs, load_app, mismatches

from genir_eval.cli import main
from genir_eval.ingest import detect_format, load_sessions
from genir_eval.testing import FakeLLMServer

APP = load_app()


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("app")
    exporter = APP.OtlpFileExporter(tmp / "spans.jsonl", None)
    with FakeLLMServer(reply=APP.fake_answer) as server:
        return APP.run_app(server.openai_base_url, server.api_key, exporter, sessions=6)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _json_columns(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows as a Parquet export holds them: the free-form fields as JSON text."""
    return [{k: json.dumps(v) if k in keys else v for k, v in row.items()} for row in rows]


def test_langfuse_jsonl_and_json(record: Any, tmp_path: Path) -> None:
    traces = langfuse_traces(record)
    jsonl = _jsonl(tmp_path / "langfuse.jsonl", traces)
    whole = tmp_path / "langfuse.json"
    whole.write_text(json.dumps({"data": traces}, indent=2), encoding="utf-8")
    for path in (jsonl, whole):
        assert detect_format(path) == "langfuse"
        result = load_sessions(path)
        assert mismatches(record, result.sessions, root_is_trace=True) == []
        assert all(s.source == "langfuse" for s in result.sessions)


@pytest.mark.slow
def test_langfuse_parquet_tables_in_a_folder(record: Any, tmp_path: Path) -> None:
    traces = langfuse_traces(record)
    observations = [dict(o) for t in traces for o in t["observations"]]
    heads = [{k: v for k, v in t.items() if k != "observations"} for t in traces]
    folder = tmp_path / "export"
    folder.mkdir()
    json_keys = ("input", "output", "metadata")
    pq.write_table(
        pa.Table.from_pylist(_json_columns(observations, json_keys)),
        folder / "observations.parquet",
    )
    pq.write_table(pa.Table.from_pylist(_json_columns(heads, json_keys)), folder / "traces.parquet")
    assert detect_format(folder) == "langfuse"
    result = load_sessions(folder)
    assert mismatches(record, result.sessions, root_is_trace=True) == []


@pytest.mark.slow
def test_langsmith_jsonl_and_parquet(record: Any, tmp_path: Path) -> None:
    runs = langsmith_runs(record)
    jsonl = _jsonl(tmp_path / "runs.jsonl", runs)
    parquet = tmp_path / "runs.parquet"
    pq.write_table(
        pa.Table.from_pylist(_json_columns(runs, ("inputs", "outputs", "extra"))), parquet
    )
    for path in (jsonl, parquet):
        assert detect_format(path) == "langsmith"
        result = load_sessions(path)
        assert mismatches(record, result.sessions) == []
        assert all(s.source == "langsmith" for s in result.sessions)


@pytest.mark.slow
def test_parse_states_the_detected_format(
    record: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _jsonl(tmp_path / "runs.jsonl", langsmith_runs(record))
    assert main(["parse", str(path), "-o", str(tmp_path / "out.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "as langsmith: its first object holds run_type" in err
    assert "6 sessions" in err
