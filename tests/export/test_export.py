"""Scores out: `genir-eval export` on a run of the example app traces. Every
gen_ai.evaluation.result event, re-read with opentelemetry-proto, names a span of the
original traces (100% joined), the one it judges; the Parquet tables read back by
load_tables hold every row of the run's tables."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import genir_eval
from genir_eval.cli import main
from genir_eval.rundir import Run

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "fixtures" / "traces"


def _spans() -> dict[tuple[str, str], str]:
    """(trace id, span id) -> span name of every span of the protobuf twin of the traces,
    decoded here with opentelemetry-proto alone (length-delimited requests)."""
    data = (TRACES / "rag_app.otlp.pb").read_bytes()
    spans: dict[tuple[str, str], str] = {}
    position = 0
    while position < len(data):
        length = shift = 0
        while True:
            byte = data[position]
            position += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        request = ExportTraceServiceRequest.FromString(data[position : position + length])
        position += length
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    spans[(span.trace_id.hex(), span.span_id.hex())] = span.name
    return spans


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("traces-run")
    out = tmp / "run"
    assert (
        main(["run", str(ROOT / "scenarios" / "traces-offline.toml"), "--out", str(out), "--quiet"])
        == 0
    )
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _events(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(trace id, span id, attributes) of every log record, each line parsed into an
    ExportLogsServiceRequest by json_format after OTLP/JSON's hex ids are made base64."""
    out = []
    for line in _jsonl(path):
        for resource in line["resourceLogs"]:
            for scope in resource["scopeLogs"]:
                for record in scope["logRecords"]:
                    for key in ("traceId", "spanId"):
                        record[key] = base64.b64encode(bytes.fromhex(record[key])).decode()
        request = json_format.ParseDict(line, ExportLogsServiceRequest())
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                for record in scope.log_records:
                    assert record.event_name == "gen_ai.evaluation.result"
                    attrs = {
                        kv.key: getattr(kv.value, kv.value.WhichOneof("value"))
                        for kv in record.attributes
                    }
                    out.append((record.trace_id.hex(), record.span_id.hex(), attrs))
    return out


def test_every_score_joins_the_span_it_judges(run_dir: Path, tmp_path: Path) -> None:
    assert main(["export", str(run_dir), "--format", "otlp", "-o", str(tmp_path)]) == 0
    events = _events(tmp_path / "evaluations.otlp.jsonl")
    spans = _spans()
    unjoined = [e for e in events if (e[0], e[1]) not in spans]
    assert unjoined == []  # 100% of the events name a span of the traces
    judgments = sum(len(r["judgments"]) for r in _jsonl(run_dir / "evidence.jsonl"))
    scores = sum(len(r["scores"]) for r in _jsonl(run_dir / "turns.jsonl")) + sum(
        len(r["scores"]) for r in _jsonl(run_dir / "sessions.jsonl")
    )
    assert len(events) == judgments + scores
    by_kind: dict[str, set[str]] = {}
    for trace_id, span_id, attrs in events:
        item = str(attrs.get("genir.item", attrs["genir.level"]))
        by_kind.setdefault(item.split(":")[0], set()).add(spans[(trace_id, span_id)])
    assert by_kind["link"] == {"retrieve"}  # a link's label on the retrieval that found it
    assert len(by_kind["cite"]) == 1 and by_kind["cite"] != {"rag.turn", "retrieve"}
    assert by_kind["turn"] == by_kind["session"] == {"rag.turn"}  # scores on the root
    full = [a for _, _, a in events if a.get("gen_ai.evaluation.score.label") == "full"]
    assert full and all(a["gen_ai.evaluation.score.value"] == 2.0 for a in full)


@pytest.mark.parametrize("batch", [10_000, 7])  # 7: every table written in several row groups
def test_parquet_tables_round_trip(
    run_dir: Path, tmp_path: Path, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genir_eval.runner.export import parquet

    monkeypatch.setattr(parquet, "BATCH", batch)
    out = tmp_path / "tables"
    assert main(["export", str(run_dir), "--format", "parquet", "-o", str(out)]) == 0
    tables = genir_eval.load_tables(out)
    schema = json.loads((out / "schema.json").read_text(encoding="utf-8"))
    assert schema["version"] == 1
    for name, frame in tables.items():
        assert [c["name"] for c in schema["tables"][name]] == list(frame.columns)
    for name in ("sessions", "turns", "links"):
        rows = _jsonl(run_dir / f"{name}.jsonl")
        frame = tables[name]
        assert len(frame) == len(rows)
        for row, (_, got) in zip(rows, frame.iterrows(), strict=True):
            assert got["session_id"] == row["session_id"]
            for key, value in (row.get("scores") or {}).items():
                assert got[f"score.{key}"] == pytest.approx(value, nan_ok=True) or (
                    value is None and got[f"score.{key}"] != got[f"score.{key}"]
                )
            for key, value in (row.get("labels") or {}).items():
                if value is None:
                    assert got[f"label.{key}"] != got[f"label.{key}"]  # NaN: missing
                else:
                    assert got[f"label.{key}"] == value
            if name == "links":
                assert (got["url"], got["link_id"], bool(got["cited"])) == (
                    row["url"],
                    row["link_id"],
                    row["cited"],
                )
    evidence = [(r, j) for r in _jsonl(run_dir / "evidence.jsonl") for j in r["judgments"]]
    judgments = tables["judgments"]
    assert len(judgments) == len(evidence)
    for (row, judgment), (_, got) in zip(evidence, judgments.iterrows(), strict=True):
        assert (got["session_id"], got["judge"], got["item"], got["value"]) == (
            row["session_id"],
            judgment["judge"],
            judgment["item"],
            judgment["value"],
        )
        assert got["trace_id"] and got["span_id"]
    assert tables["turns"]["trace_id"].notna().all()


@pytest.mark.slow
def test_otlp_export_of_a_run_without_traces_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = ROOT / "scenarios" / "product-offline.toml"
    run = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["export", str(run), "--format", "otlp", "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "holds no trace ids" in err and "--format parquet" in err
    assert not (tmp_path / "x" / "evaluations.otlp.jsonl").exists()


@pytest.mark.slow
def test_a_changed_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "traces.jsonl"
    shutil.copy(TRACES / "rag_app.otlp.jsonl", traces)
    scenario = tmp_path / "s.toml"
    text = (ROOT / "scenarios" / "traces-offline.toml").read_text(encoding="utf-8")
    text = text.replace("../fixtures/traces/rag_app.otlp.jsonl", str(traces))
    scenario.write_text(
        text.replace('dir = "../runs/traces-offline"', f'dir = "{tmp_path / "run"}"'),
        encoding="utf-8",
    )
    assert main(["run", str(scenario), "--quiet"]) == 0
    with traces.open("a", encoding="utf-8") as out:
        out.write("\n")
    capsys.readouterr()
    assert (
        main(["export", str(tmp_path / "run"), "--format", "otlp", "-o", str(tmp_path / "x")]) == 2
    )
    assert "input changed since the run" in capsys.readouterr().err


def test_load_run_gives_the_tables_as_dataframes(run_dir: Path, tmp_path: Path) -> None:
    """genir_eval.load_run: a run folder is its Run record, or with tables=True its four
    tables as DataFrames; a Parquet export folder is its tables; both ways give equal
    frames, and the sessions frame holds every session row of the run's sessions.jsonl."""
    import pandas as pd

    record = genir_eval.load_run(run_dir)
    assert isinstance(record, Run)
    out = tmp_path / "tables"
    assert main(["export", str(run_dir), "--format", "parquet", "-o", str(out)]) == 0
    exported = genir_eval.load_run(out)
    built = genir_eval.load_run(run_dir, tables=True)
    assert set(exported) == set(built) == {"sessions", "turns", "links", "judgments"}
    for name, frame in built.items():
        assert isinstance(frame, pd.DataFrame)
        pd.testing.assert_frame_equal(frame, exported[name])
    sessions = _jsonl(run_dir / "sessions.jsonl")
    assert list(built["sessions"]["session_id"]) == [row["session_id"] for row in sessions]
    assert len(built["judgments"]) > 0


def _plant(path: Path, kind: str, keep: Path) -> None:
    """A FIFO, or a link to the file ``keep``, where ``path`` stood."""
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(keep)


def _one_line_refusal(capsys: pytest.CaptureFixture[str], words: str) -> None:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert words in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_export_o_refuses_a_fifo_or_a_link_to_a_file(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """-o FOLDER where a FIFO, or a link to a file, stands: exit 2, one line, left as it was."""
    keep = tmp_path / "precious.txt"
    keep.write_text("keep me\n", encoding="utf-8")
    out = tmp_path / "out"
    _plant(out, kind, keep)
    capsys.readouterr()
    assert main(["export", str(run_dir), "--format", "otlp", "-o", str(out)]) == 2
    _one_line_refusal(capsys, "FIFO" if kind == "fifo" else "symbolic link")
    assert stat.S_ISFIFO(os.lstat(out).st_mode) if kind == "fifo" else out.is_symlink()
    assert keep.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize("kind", ["fifo", "link"])
@pytest.mark.parametrize(
    ("fmt", "name"), [("otlp", "evaluations.otlp.jsonl"), ("parquet", "judgments.parquet")]
)
def test_export_never_writes_through_a_fifo_or_a_link_in_its_folder(
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
    name: str,
    kind: str,
) -> None:
    """A second export into its own folder, one of whose files became a FIFO or a link to a
    file outside: exit 2 in one line before any file is written, the FIFO still a FIFO, the
    link's target unchanged."""
    keep = tmp_path / "precious.txt"
    keep.write_text("keep me\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["export", str(run_dir), "--format", fmt, "-o", str(out)]) == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != name}
    _plant(out / name, kind, keep)
    capsys.readouterr()
    assert main(["export", str(run_dir), "--format", fmt, "-o", str(out)]) == 2
    _one_line_refusal(capsys, "FIFO" if kind == "fifo" else "symbolic link")
    planted = os.lstat(out / name).st_mode
    assert stat.S_ISFIFO(planted) if kind == "fifo" else stat.S_ISLNK(planted)
    assert keep.read_text(encoding="utf-8") == "keep me\n"
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != name} == before
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
