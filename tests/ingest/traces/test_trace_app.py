"""The instrumented RAG app's traces read back: every session, turn, link and citation the
app recorded itself, none lost and none invented (OTLP/JSON, protobuf, a folder of rotated
files), and `genir-eval run` on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trace_checks import cited_pairs, load_app, mismatches

from genir_eval.cli import main
from genir_eval.ingest import load_sessions
from genir_eval.testing import FakeLLMServer

APP = load_app()


def _run(tmp: Path, sessions: int, rotate: int = 0) -> tuple[Any, Any]:
    exporter = APP.OtlpFileExporter(tmp / "spans.jsonl", tmp / "spans.pb", rotate=rotate)
    with FakeLLMServer(reply=APP.fake_answer) as server:
        record = APP.run_app(
            server.openai_base_url, server.api_key, exporter, sessions=sessions, max_batch=16
        )
    return record, exporter


def test_a_few_sessions_read_back_from_json_and_protobuf(tmp_path: Path) -> None:
    record, exporter = _run(tmp_path, 3)
    turns = sum(len(t) for t in record.sessions.values())
    assert exporter.spans == 3 * turns  # root, retriever and the instrumentor's LLM span
    for name in ("spans.jsonl", "spans.pb"):
        result = load_sessions(tmp_path / name)
        assert mismatches(record, result.sessions) == [], name
        assert not result.skipped


@pytest.fixture(scope="module")
def fifty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    tmp = tmp_path_factory.mktemp("app")
    record, exporter = _run(tmp, 50)
    return tmp, record, exporter


@pytest.mark.slow
@pytest.mark.parametrize("name", ["spans.jsonl", "spans.pb"])
def test_fifty_sessions_none_lost_none_invented(fifty: tuple[Path, Any, Any], name: str) -> None:
    tmp, record, exporter = fifty
    assert len(record.sessions) == 50
    assert exporter.batches > 1  # the batches cut across traces and sessions
    result = load_sessions(tmp / name)
    assert mismatches(record, result.sessions) == []
    assert not result.skipped
    turns = sum(len(s.turns) for s in result.sessions)
    links = sum(len(t.links) for s in result.sessions for t in s.turns)
    assert turns == sum(len(t) for t in record.sessions.values())
    assert links == sum(len(t.documents) for v in record.sessions.values() for t in v)
    assert all("trace_notes" not in s.meta for s in result.sessions)


@pytest.mark.slow
def test_sessions_spread_over_rotated_files(tmp_path: Path) -> None:
    folder = tmp_path / "spans"
    folder.mkdir()
    exporter = APP.OtlpFileExporter(folder / "spans.jsonl", None, rotate=1)
    with FakeLLMServer(reply=APP.fake_answer) as server:
        record = APP.run_app(
            server.openai_base_url, server.api_key, exporter, sessions=12, max_batch=5
        )
    files = sorted(folder.iterdir())
    assert len(files) > 3  # a session's spans are spread over several files
    result = load_sessions(folder)
    assert mismatches(record, result.sessions) == []


@pytest.mark.slow
def test_genir_eval_run_reads_the_traces(fifty: tuple[Path, Any, Any], tmp_path: Path) -> None:
    tmp, record, _ = fifty
    scenario = tmp_path / "traces.toml"
    scenario.write_text(
        f"""version = 1
name = "traces"
[input]
path = "{tmp / "spans.pb"}"
format = "otlp"
[[judges]]
name = "citation_support"
[[judges]]
name = "link_usefulness.dna"
[aggregate]
measures = ["sdcg_urge", "citation_precision"]
[output]
dir = "{tmp_path / "run"}"
""",
        encoding="utf-8",
    )
    assert main(["run", str(scenario), "--quiet"]) == 0
    run = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert run["input"]["sessions"] == 50
    assert run["input"]["turns"] == sum(len(t) for t in record.sessions.values())
    assert run["input"]["links"] == sum(
        len(t.documents) for v in record.sessions.values() for t in v
    )
    cited = sum(cited_pairs(t.answer) for v in record.sessions.values() for t in v)
    rows = [
        json.loads(line)
        for line in (tmp_path / "run" / "citations.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    pairs = {(r["session_id"], r["turn"], r["statement"], r["link_id"]) for r in rows}
    assert len(pairs) == len(rows) == cited
