"""Trace files in, sessions out: OTLP (JSON and protobuf) with OpenInference's or the
OpenTelemetry GenAI conventions' attributes, Langfuse trace exports and LangSmith run
exports, read in bounded memory (:mod:`genir_eval.ingest.traces.assemble` says how spans
become sessions)."""

from genir_eval.ingest.traces.assemble import DEFAULT_WINDOW, Assembler
from genir_eval.ingest.traces.detect import sniff_trace_format
from genir_eval.ingest.traces.reader import TRACE_FORMATS, TraceStream, iter_traces
from genir_eval.ingest.traces.steps import Document, Step

__all__ = [
    "TRACE_FORMATS",
    "DEFAULT_WINDOW",
    "Assembler",
    "Document",
    "Step",
    "TraceStream",
    "iter_traces",
    "sniff_trace_format",
]
