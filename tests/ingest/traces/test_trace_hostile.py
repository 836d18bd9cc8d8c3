"""Hostile trace files: each case is a located error (exit 2, one line naming the file and
the line, request or span, and the attribute where one is at fault) or a lossless load with
a counted note (exit 0, the note in the session's meta.trace_notes and counted on stderr,
and the data that could be read all there)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.ingest.traces import iter_traces

ANSWER = "Servers answer requests [1]. Prices vary [2]."
DOCS = [
    (
        "doc-1",
        "Servers answer requests from browsers.",
        {"url": "https://a.example/1", "title": "A"},
    ),
    ("doc-2", "Prices vary by plan.", {"url": "https://b.example/2", "title": "B"}),
]


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(n: int) -> str:
    return f"{n:016x}"


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def span(
    t: int, s: int, parent: int | None, name: str, attrs: dict[str, Any], start: int, end: int
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace_id(t),
        "spanId": span_id(s),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [attr(k, v) for k, v in attrs.items()],
    }
    if parent is not None:
        out["parentSpanId"] = span_id(parent)
    return out


def turn_spans(
    t: int = 1,
    session: str | None = "s1",
    query: str | None = "how do servers work",
    answer: str | None = ANSWER,
    docs: list[tuple[Any, Any, Any]] | None = None,
    start: int = 1_000,
) -> list[dict[str, Any]]:
    """One turn: a CHAIN root over a RETRIEVER and an LLM span (spans t*10+1, +2, +3)."""
    root, retriever, llm = t * 10 + 1, t * 10 + 2, t * 10 + 3
    root_attrs: dict[str, Any] = {"openinference.span.kind": "CHAIN"}
    if session is not None:
        root_attrs["session.id"] = session
    if query is not None:
        root_attrs["input.value"] = query
    doc_attrs: dict[str, Any] = {"openinference.span.kind": "RETRIEVER"}
    for i, (doc_id, content, metadata) in enumerate(DOCS if docs is None else docs):
        prefix = f"retrieval.documents.{i}.document."
        if doc_id is not None:
            doc_attrs[prefix + "id"] = doc_id
        if content is not None:
            doc_attrs[prefix + "content"] = content
        if metadata is not None:
            doc_attrs[prefix + "metadata"] = (
                metadata if isinstance(metadata, str) else json.dumps(metadata)
            )
    llm_attrs: dict[str, Any] = {"openinference.span.kind": "LLM"}
    if answer is not None:
        llm_attrs["llm.output_messages.0.message.role"] = "assistant"
        llm_attrs["llm.output_messages.0.message.content"] = answer
    return [
        span(t, retriever, root, "retrieve", doc_attrs, start + 10, start + 20),
        span(t, llm, root, "chat", llm_attrs, start + 30, start + 90),
        span(t, root, None, "rag.turn", root_attrs, start, start + 100),
    ]


def request(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}
        ]
    }


def lines(*requests: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in requests)


def protobuf(spans: list[dict[str, Any]]) -> bytes:
    from google.protobuf import json_format

    data = request(spans)
    for s in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in s:
                s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
    return json_format.ParseDict(data, ExportTraceServiceRequest()).SerializeToString()


def json_format_parse(data: dict[str, Any]) -> bytes:
    from google.protobuf import json_format

    return json_format.ParseDict(data, ExportMetricsServiceRequest()).SerializeToString()


@dataclass
class Case:
    name: str
    write: Callable[[Path], Path]
    error: tuple[str, ...] = ()  # a located error: the strings its one line holds
    note: str | None = None  # a lossless load: the note a session's meta holds
    check: Callable[[list[dict[str, Any]]], None] | None = None
    sessions: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def text_file(content: str, name: str = "traces.jsonl") -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / name
        path.write_text(content, encoding="utf-8")
        return path

    return write


def bytes_file(content: bytes, name: str = "traces.pb") -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(content)
        return path

    return write


def _mutated(change: Callable[[list[dict[str, Any]]], None], t: int = 1) -> str:
    spans = turn_spans(t)
    change(spans)
    return lines(request(spans))


def _links(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [lk for s in sessions for t in s["turns"] for lk in t["links"]]


def _set(spans: list[dict[str, Any]], index: int, key: str, value: Any) -> None:
    spans[index]["attributes"] = [a for a in spans[index]["attributes"] if a["key"] != key]
    spans[index]["attributes"].append(
        attr(key, value) if not isinstance(value, dict) else {"key": key, "value": value}
    )


def _folder_of_two(folder: Path) -> Path:
    inner = folder / "spans"
    inner.mkdir()
    (inner / "part-1.jsonl").write_text(lines(request(turn_spans(1))), encoding="utf-8")
    (inner / "part-2.jsonl").write_text(
        lines(request(turn_spans(2, start=5_000))), encoding="utf-8"
    )
    return inner


def _two_turns(sessions: list[dict[str, Any]]) -> None:
    assert len(sessions) == 1 and len(sessions[0]["turns"]) == 2
    assert [t["index"] for t in sessions[0]["turns"]] == [1, 2]


GOOD = lines(request(turn_spans(1)))
HUGE = "x" * 2_000_000
CASES = [
    # --- located errors ---------------------------------------------------------------
    Case(
        "truncated JSON line",
        text_file(GOOD + GOOD[: len(GOOD) // 2] + "\n"),
        ("line 2", "truncated"),
    ),
    Case(
        "truncated whole-file JSON",
        text_file(json.dumps(request(turn_spans(1)), indent=2)[:-40]),
        ("line", "truncated"),
    ),
    Case(
        "truncated protobuf", bytes_file(protobuf(turn_spans(1))[:-25]), ("request 1", "truncated")
    ),
    Case(
        "wrong protobuf message type",
        bytes_file(
            json_format_parse(
                {
                    "resourceMetrics": [
                        {"scopeMetrics": [{"metrics": [{"name": "cpu", "description": "d"}]}]}
                    ]
                }
            )
        ),
        ("request 1",),
    ),
    Case("a JSON array, not a request", text_file("[1, 2]\n"), ("ExportTraceServiceRequest",)),
    Case("a line that is a number", text_file(GOOD + "42\n"), ("line 2",)),
    Case(
        "trace id not hex",
        text_file(_mutated(lambda s: s[0].update(traceId="zz" * 16))),
        ("line 1", "traceId", "hex digits"),
    ),
    Case(
        "span id of the wrong length",
        text_file(_mutated(lambda s: s[1].update(spanId="abcd"))),
        ("line 1", "spanId"),
    ),
    Case(
        "attribute of the wrong protobuf type",
        text_file(
            _mutated(
                lambda s: s[0]["attributes"].append({"key": "k", "value": {"intValue": "ten"}})
            )
        ),
        ("line 1", "ExportTraceServiceRequest"),
    ),
    Case(
        "a cycle of parent ids",
        text_file(
            _mutated(
                lambda s: (
                    s[2].update(parentSpanId=span_id(13)),
                    s[1].update(parentSpanId=span_id(11)),
                )
            )
        ),
        ("form a cycle", span_id(11), "parentSpanId"),
    ),
    Case(
        "one span id for two different spans",
        text_file(lines(request(turn_spans(1)), request([{**turn_spans(1)[0], "name": "other"}]))),
        ("given twice with different contents", span_id(12), "spanId"),
    ),
    Case(
        "empty model output",
        text_file(_mutated(lambda s: _set(s, 1, "llm.output_messages.0.message.content", ""))),
        ("output is empty", "llm.output_messages"),
    ),
    Case(
        "no query anywhere",
        text_file(lines(request(turn_spans(1, query=None)))),
        ("no query", "input.value", span_id(11)),
    ),
    Case(
        "a session whose traces hold no model call",
        text_file(lines(request([s for s in turn_spans(1) if s["name"] != "chat"]))),
        ("has no turn", "holds no model call"),
    ),
    Case(
        "not UTF-8",
        bytes_file(GOOD.encode() + b'{"resourceSpans": "\xff"}\n', "t.jsonl"),
        ("line 2", "UTF-8"),
    ),
    Case("an empty file", text_file(""), ("holds no sessions",)),
    # --- lossless loads with a counted note -----------------------------------------------
    Case(
        "a span whose parent is not in the trace",
        text_file(_mutated(lambda s: s[0].update(parentSpanId=span_id(99)))),
        note="is not in the trace (read as a root)",
        check=lambda ss: None,
    ),
    Case(
        "the same span twice, identically",
        text_file(lines(request(turn_spans(1)), request([turn_spans(1)[0]]))),
        note="is given twice, identically",
        check=lambda ss: _assert_links(ss, 2),
    ),
    Case(
        "session.id is a number",
        text_file(_mutated(lambda s: _set(s, 2, "session.id", 42))),
        note="session.id is a number (int), read as text",
        check=lambda ss: _assert_eq(ss[0]["session_id"], "42"),
    ),
    Case(
        "document metadata not JSON",
        text_file(lines(request(turn_spans(1, docs=[("doc-1", "text", "not json {"), DOCS[1]])))),
        note="metadata is not a JSON object",
        check=lambda ss: _assert_eq(_links(ss)[0]["url"], "doc-1"),
    ),
    Case(
        "document content a number",
        text_file(lines(request(turn_spans(1, docs=[("doc-1", 7, DOCS[0][2]), DOCS[1]])))),
        note="content is a int, read as its JSON text",
        check=lambda ss: _assert_eq(_links(ss)[0]["text"], "7"),
    ),
    Case(
        "a huge attribute value",
        text_file(lines(request(turn_spans(1, docs=[("doc-1", HUGE, DOCS[0][2]), DOCS[1]])))),
        check=lambda ss: _assert_eq(len(_links(ss)[0]["text"]), len(HUGE)),
    ),
    Case(
        "a document without url",
        text_file(lines(request(turn_spans(1, docs=[("doc-1", "text", {"title": "T"}), DOCS[1]])))),
        note="has no url in its metadata; its id",
        check=lambda ss: _assert_eq((_links(ss)[0]["url"], _links(ss)[0]["title"]), ("doc-1", "T")),
    ),
    Case(
        "a document without url or id",
        text_file(lines(request(turn_spans(1, docs=[(None, "text", None), DOCS[1]])))),
        note="has no url and no id",
        check=lambda ss: _assert_eq(
            _links(ss)[0]["url"], f"trace:{trace_id(1)}/span:{span_id(12)}/document:1"
        ),
    ),
    Case(
        "a marker past the retrieved list",
        text_file(lines(request(turn_spans(1, answer="Servers answer [1]. Cheap hosting [5].")))),
        note="cites [5] but 2 document(s) were retrieved",
        check=lambda ss: _assert_eq(
            ss[0]["turns"][0]["response_text"], "Servers answer. Cheap hosting [5]."
        ),
    ),
    Case(
        "a marker [0]",
        text_file(lines(request(turn_spans(1, answer="Servers answer [0].")))),
        note="cites [0]",
        check=lambda ss: _assert_eq(ss[0]["turns"][0]["statements"][0]["citations"], []),
    ),
    Case("a session spread over two files", _folder_of_two, check=_two_turns),
    Case(
        "clock skew: a child starts before its parent",
        text_file(_mutated(lambda s: s[0].update(startTimeUnixNano="10"))),
        note="starts or ends outside its parent's time (clock skew",
    ),
    Case(
        "clock skew: a span ends before it starts",
        text_file(_mutated(lambda s: s[1].update(endTimeUnixNano="5"))),
        note="ends before it starts (clock skew)",
    ),
    Case(
        "a root holding no model call beside a turn",
        text_file(
            lines(
                request(
                    turn_spans(1) + [span(1, 50, None, "health-check", {"session.id": "s1"}, 1, 2)]
                )
            )
        ),
        note="holds no model call: not a turn",
        check=lambda ss: _assert_eq(len(ss[0]["turns"]), 1),
    ),
    Case(
        "two model calls in one turn",
        text_file(
            _mutated(
                lambda s: s.append(
                    {
                        **s[1],
                        "spanId": span_id(14),
                        "endTimeUnixNano": "1050",
                        "attributes": [
                            attr("openinference.span.kind", "LLM"),
                            attr("llm.output_messages.0.message.content", "draft"),
                        ],
                    }
                )
            )
        ),
        note="earlier model call(s)",
        check=lambda ss: _assert_eq(
            ss[0]["turns"][0]["response_text"], "Servers answer requests. Prices vary."
        ),
    ),
    Case(
        "a span that carries nothing a turn holds",
        text_file(
            _mutated(
                lambda s: s.append(
                    span(1, 15, 11, "tool", {"openinference.span.kind": "TOOL"}, 1_040, 1_050)
                )
            )
        ),
        note="carry nothing a turn holds",
    ),
    Case(
        "two session ids in one trace",
        text_file(_mutated(lambda s: _set(s, 1, "session.id", "other"))),
        note="spans name 2 session ids",
        check=lambda ss: _assert_eq(ss[0]["session_id"], "s1"),
    ),
    Case(
        "ids in base64 (proto3 JSON), not hex",
        text_file(
            _mutated(
                lambda s: [
                    x.update(traceId=base64.b64encode(bytes.fromhex(x["traceId"])).decode())
                    for x in s
                ]
            )
        ),
        note="is base64 (proto3 JSON), not OTLP/JSON's hex",
    ),
    Case(
        "unknown fields and an empty parentSpanId",
        text_file(
            _mutated(lambda s: s[2].update(parentSpanId="", futureField={"x": 1})),
        ),
        check=lambda ss: _assert_eq(len(ss[0]["turns"]), 1),
    ),
    Case(
        "one protobuf request for the whole file",
        bytes_file(protobuf(turn_spans(1) + turn_spans(2, start=5_000))),
        check=_two_turns,
    ),
    Case(
        "GenAI conventions instead of OpenInference",
        text_file(
            lines(
                request(
                    [
                        span(
                            3,
                            31,
                            None,
                            "invoke_agent",
                            {
                                "gen_ai.operation.name": "invoke_agent",
                                "gen_ai.conversation.id": "c9",
                            },
                            1,
                            100,
                        ),
                        span(
                            3,
                            32,
                            31,
                            "retrieval",
                            {
                                "gen_ai.operation.name": "retrieval",
                                "gen_ai.retrieval.documents": json.dumps(
                                    [
                                        {
                                            "id": "d1",
                                            "score": 0.9,
                                            "content": "Servers answer.",
                                            "metadata": {"url": "https://a.example/1"},
                                        }
                                    ]
                                ),
                            },
                            10,
                            20,
                        ),
                        span(
                            3,
                            33,
                            31,
                            "chat",
                            {
                                "gen_ai.operation.name": "chat",
                                "gen_ai.input.messages": json.dumps(
                                    [
                                        {
                                            "role": "user",
                                            "parts": [
                                                {"type": "text", "content": "what do servers do"}
                                            ],
                                        }
                                    ]
                                ),
                                "gen_ai.output.messages": json.dumps(
                                    [
                                        {
                                            "role": "assistant",
                                            "parts": [
                                                {"type": "text", "content": "They answer [1]."}
                                            ],
                                        }
                                    ]
                                ),
                            },
                            30,
                            90,
                        ),
                    ]
                )
            )
        ),
        check=lambda ss: _assert_eq(
            (
                ss[0]["session_id"],
                ss[0]["turns"][0]["query"],
                _links(ss)[0]["url"],
                ss[0]["turns"][0]["statements"][0]["citations"],
            ),
            ("c9", "what do servers do", "https://a.example/1", [1]),
        ),
    ),
]


def _assert_eq(got: Any, want: Any) -> None:
    assert got == want


def _assert_links(sessions: list[dict[str, Any]], n: int) -> None:
    assert len(_links(sessions)) == n


def test_there_are_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_trace(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = case.write(tmp_path)
    out = tmp_path / "out.jsonl"
    code = main(["parse", str(path), "--format", "otlp", "-o", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if case.error:
        assert code == 2, err
        line = next(x for x in err.splitlines() if x.startswith("genir-eval: error:"))
        assert str(path) in line, line
        for text in case.error:
            assert text in line, line
        assert not out.exists()
        return
    assert code == 0, err
    sessions = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    notes = [n for s in sessions for n in (s.get("meta") or {}).get("trace_notes", [])]
    if case.note is not None:
        assert any(case.note in n for n in notes), notes
        assert "genir-eval: note (" in err
    else:
        assert notes == []
    if case.check is not None:
        case.check(sessions)


def test_a_late_span_of_a_closed_trace_is_located(tmp_path: Path) -> None:
    spans = turn_spans(1)
    late = spans.pop(0)  # the retrieval arrives after two more traces' spans
    content = lines(request(spans), request(turn_spans(2)), request(turn_spans(4)), request([late]))
    path = tmp_path / "late.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        list(iter_traces(path, format="otlp", window=3))
    assert f"span {span_id(12)} of trace {trace_id(1)}" in str(raised.value)
    assert "larger window" in str(raised.value)
    assert len(list(iter_traces(path, format="otlp"))) == 1  # the default window holds it


def test_the_fast_path_reads_what_json_format_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A well-formed request is read straight from its JSON; the same file read through
    json_format and opentelemetry-proto's classes gives the same sessions."""
    from genir_eval.ingest import load_sessions
    from genir_eval.ingest.traces import otlp

    path = Path(__file__).resolve().parents[3] / "fixtures" / "traces" / "rag_app.otlp.jsonl"
    fast = load_sessions(path).sessions
    calls: list[int] = []

    def slow(*args: Any) -> None:
        calls.append(1)
        return None

    monkeypatch.setattr(otlp, "_fast_steps", slow)
    assert load_sessions(path).sessions == fast
    assert calls and len(fast) == 6


def _langsmith_turn(**change: Any) -> list[dict[str, Any]]:
    meta = {"extra": {"metadata": {"thread_id": "t1"}}, "trace_id": "r"}
    runs = [
        {
            "id": "r",
            "parent_run_id": None,
            "run_type": "chain",
            "inputs": {"question": "q?"},
            "start_time": "2025-01-01T00:00:00Z",
            "end_time": "2025-01-01T00:00:09Z",
            **meta,
        },
        {
            "id": "r-d",
            "parent_run_id": "r",
            "run_type": "retriever",
            "outputs": {
                "documents": [
                    {"page_content": "text", "metadata": {"source": "https://a.example/1"}}
                ]
            },
            "start_time": "2025-01-01T00:00:01Z",
            "end_time": "2025-01-01T00:00:02Z",
            **meta,
        },
        {
            "id": "r-l",
            "parent_run_id": "r",
            "run_type": "llm",
            "outputs": {"generations": [[{"text": "An answer [1]."}]]},
            "start_time": "2025-01-01T00:00:03Z",
            "end_time": "2025-01-01T00:00:08Z",
            **meta,
        },
    ]
    for index, values in change.items():
        runs[int(index.removeprefix("run"))].update(values)
    return runs


def _rows(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


EXPORT_CASES = [
    (
        "langfuse",
        "an observation without id",
        _rows(
            [
                {
                    "id": "t",
                    "sessionId": "s",
                    "input": "q?",
                    "observations": [{"traceId": "t", "type": "GENERATION", "output": "a"}],
                }
            ]
        ),
        ("line 1", "observations[0].id", "not an id"),
        None,
    ),
    (
        "langfuse",
        "a truncated line",
        _rows([{"id": "t", "sessionId": "s", "input": "q?", "observations": []}])[:30] + "\n",
        ("truncated",),
        None,
    ),
    (
        "langsmith",
        "a time that is not ISO 8601",
        _rows(_langsmith_turn(run1={"start_time": "yesterday"})),
        (),
        "is not an ISO 8601 time",
    ),
    (
        "langsmith",
        "a retriever without documents",
        _rows(_langsmith_turn(run1={"outputs": {"result": "none"}})),
        (),
        "hold no documents list",
    ),
    (
        "langsmith",
        "a run without id",
        _rows(_langsmith_turn(run2={"id": None})),
        ("line 3", "id"),
        None,
    ),
]


@pytest.mark.parametrize(
    "fmt,name,content,error,note", EXPORT_CASES, ids=[c[1] for c in EXPORT_CASES]
)
def test_hostile_export_rows(
    fmt: str,
    name: str,
    content: str,
    error: tuple[str, ...],
    note: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["parse", str(path), "--format", fmt, "-o", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if error:
        assert code == 2, err
        line = next(x for x in err.splitlines() if x.startswith("genir-eval: error:"))
        assert all(text in line for text in (str(path), *error)), line
        return
    assert code == 0, err
    sessions = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    notes = [n for s in sessions for n in s["meta"].get("trace_notes", [])]
    assert note is not None and any(note in n for n in notes), notes


def test_a_damaged_parquet_file_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64)
    assert main(["parse", str(path), "--format", "langsmith", "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "not a readable Parquet file" in err
