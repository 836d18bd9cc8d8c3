"""Trace files in, sessions out: OTLP (JSON and protobuf) with OpenInference's or the
OpenTelemetry GenAI conventions' attributes, Langfuse trace exports and LangSmith run
exports, read in bounded memory (:mod:`genir_eval.ingest.traces.assemble` says how spans
become sessions).

The names below are imported on first use (PEP 562): telling a file's format, which every
reader's detection does, does not load protobuf and the conventions.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from genir_eval.ingest.traces.assemble import DEFAULT_WINDOW, Assembler
    from genir_eval.ingest.traces.detect import sniff_trace_format
    from genir_eval.ingest.traces.reader import TRACE_FORMATS, TraceStream, iter_traces
    from genir_eval.ingest.traces.steps import Document, Step

_LAZY = {
    "DEFAULT_WINDOW": "genir_eval.ingest.traces.assemble",
    "Assembler": "genir_eval.ingest.traces.assemble",
    "sniff_trace_format": "genir_eval.ingest.traces.detect",
    "TRACE_FORMATS": "genir_eval.ingest.traces.reader",
    "TraceStream": "genir_eval.ingest.traces.reader",
    "iter_traces": "genir_eval.ingest.traces.reader",
    "Document": "genir_eval.ingest.traces.steps",
    "Step": "genir_eval.ingest.traces.steps",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
