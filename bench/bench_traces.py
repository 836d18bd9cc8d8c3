"""Benchmark: reading OTLP/JSON traces in bounded memory, against a bare json.loads pass.

A file of ``--spans`` spans (1,000,000 by default) is generated: sessions of three turns,
each turn a trace of three spans as an OpenInference-instrumented RAG app writes them (a
CHAIN root with ``session.id`` and the query, a RETRIEVER with three documents, an LLM span
whose answer cites them), ``--per-request`` turns to an ``ExportTraceServiceRequest`` line.
Two child processes then read it, each printing its time and its peak resident set size
(``resource.getrusage``): the trace reader (``iter_sessions(path, format="otlp")``: JSON,
protobuf's ``json_format`` into opentelemetry-proto's classes, the attribute mapping, the
assembler, citations and validation, every session built) and a bare ``json.loads`` of each
line. The ratio is the bare pass's time over the reader's.

    nice -n 19 python bench/bench_traces.py [--spans 1000000] [--per-request 10] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_READER = """
import resource, sys, time
from genir_eval.ingest import iter_sessions
start = time.perf_counter()
stream = iter_sessions(sys.argv[1], format="otlp")
sessions = turns = links = 0
for session in stream:
    sessions += 1
    turns += len(session.turns)
    links += sum(len(t.links) for t in session.turns)
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime
print(elapsed, usage.ru_maxrss, stream.spans, sessions, turns, links, cpu)
"""
_BARE = """
import json, resource, sys, time
start = time.perf_counter()
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        n += len(json.loads(line)["resourceSpans"])
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(elapsed, usage.ru_maxrss, n, usage.ru_utime + usage.ru_stime)
"""

DOCS = [
    ("https://docs.example/servers", "Servers", "A server answers requests from other computers."),
    ("https://docs.example/prices", "Prices", "Shared hosting starts at five dollars a month."),
    ("https://docs.example/dns", "DNS", "DNS turns a name into the address of a server."),
]


def _attr(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


def _turn(trace: int, session: int, turn: int, start: int) -> list[dict[str, object]]:
    tid = f"{trace:032x}"
    root, retriever, llm = (f"{trace * 4 + k:016x}" for k in (1, 2, 3))
    docs = []
    for i, (url, title, text) in enumerate(DOCS):
        prefix = f"retrieval.documents.{i}.document."
        docs += [
            _attr(prefix + "id", f"doc-{i}"),
            _attr(prefix + "content", text),
            _attr(prefix + "metadata", json.dumps({"url": url, "title": title})),
        ]

    def span(
        sid: str, parent: str | None, name: str, attrs: list[dict[str, object]], a: int, b: int
    ) -> dict[str, object]:
        out: dict[str, object] = {
            "traceId": tid,
            "spanId": sid,
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start + a),
            "endTimeUnixNano": str(start + b),
            "attributes": attrs,
        }
        if parent:
            out["parentSpanId"] = parent
        return out

    answer = "Servers answer requests [1]. Hosting is cheap [2][3]."
    return [
        span(
            retriever,
            root,
            "retrieve",
            [_attr("openinference.span.kind", "RETRIEVER"), *docs],
            10,
            20,
        ),
        span(
            llm,
            root,
            "ChatCompletion",
            [
                _attr("openinference.span.kind", "LLM"),
                _attr("llm.input_messages.0.message.role", "user"),
                _attr("llm.input_messages.0.message.content", "Sources: ... Question: q"),
                _attr("llm.output_messages.0.message.role", "assistant"),
                _attr("llm.output_messages.0.message.content", answer),
            ],
            30,
            90,
        ),
        span(
            root,
            None,
            "rag.turn",
            [
                _attr("openinference.span.kind", "CHAIN"),
                _attr("session.id", f"session-{session}"),
                _attr("input.value", f"question {turn} of session {session}"),
            ],
            0,
            100,
        ),
    ]


def generate(path: Path, spans: int, per_request: int) -> int:
    """Write the file; returns the spans written."""
    written = trace = 0
    with path.open("w", encoding="utf-8") as out:
        while written < spans:
            batch: list[dict[str, object]] = []
            for _ in range(per_request):
                if written + len(batch) >= spans:
                    break
                session, turn = divmod(trace, 3)
                batch += _turn(
                    trace + 1, session, turn + 1, 1_700_000_000_000_000_000 + trace * 1_000
                )
                trace += 1
            request = {
                "resourceSpans": [
                    {"resource": {}, "scopeSpans": [{"scope": {"name": "bench"}, "spans": batch}]}
                ]
            }
            out.write(json.dumps(request, separators=(",", ":")) + "\n")
            written += len(batch)
    return written


def _child(code: str, path: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    return done.stdout.split()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--per-request", type=int, default=10, help="turns per request line")
    parser.add_argument("--keep", type=Path, default=None, help="write the file here and keep it")
    args = parser.parse_args(argv)
    folder = tempfile.TemporaryDirectory()
    path = args.keep or Path(folder.name) / "traces.otlp.jsonl"
    started = time.perf_counter()
    spans = generate(path, args.spans, args.per_request)
    size = path.stat().st_size
    print(
        f"generated {spans:,} spans ({size / 1e6:,.0f} MB) in {time.perf_counter() - started:.1f} s"
    )
    bare_s, bare_rss, _, bare_cpu = _child(_BARE, path)
    read_s, read_rss, read_spans, sessions, turns, links, read_cpu = _child(_READER, path)
    assert int(read_spans) == spans, (read_spans, spans)
    rate = spans / float(read_s)
    print(
        f"trace reader: {float(read_s):,.1f} s, {rate:,.0f} spans/s ({spans / float(read_cpu):,.0f} "
        f"a CPU second), peak RSS "
        f"{int(read_rss) / 1024:,.0f} MB ({int(sessions):,} sessions, {int(turns):,} turns, "
        f"{int(links):,} links)"
    )
    print(
        f"bare json.loads: {float(bare_s):,.1f} s, {spans / float(bare_s):,.0f} spans/s "
        f"({spans / float(bare_cpu):,.0f} a CPU second), peak RSS "
        f"{int(bare_rss) / 1024:,.0f} MB"
    )
    print(
        f"ratio (bare time / reader time): {float(bare_s) / float(read_s):.3f}; "
        f"in CPU time {float(bare_cpu) / float(read_cpu):.3f}"
    )
    folder.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
