"""Which span each of a run's turns came from: the run's input read again for the trace and
span ids its reader kept (``meta["traces"]``, :mod:`genir_eval.ingest.traces.assemble`).

The input is the file (or folder of trace files) ``run.json`` names; a file is refused when
its SHA-256 is no longer the one the run recorded (the ids would belong to other sessions). Canonical JSONL written by
``genir-eval parse`` from traces keeps the ids too, so a run on it goes back as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest.loader import iter_sessions
from genir_eval.rundir.files import file_digest
from genir_eval.rundir.run import Run

__all__ = ["TurnSpans", "SpanIndex", "span_index"]


@dataclass(frozen=True)
class TurnSpans:
    """One turn's ids: its trace, its root span, its last model call, its retrievals and the
    span each retrieved document (link ``n`` is ``documents[n - 1]``) came from."""

    trace_id: str
    span_id: str
    llm_span_id: str | None
    documents: tuple[tuple[str | None, str | None], ...]  # (document id, retriever span id)

    def link_span(self, link_id: int) -> str | None:
        if 1 <= link_id <= len(self.documents):
            return self.documents[link_id - 1][1]
        return None

    def document_id(self, link_id: int) -> str | None:
        if 1 <= link_id <= len(self.documents):
            return self.documents[link_id - 1][0]
        return None


#: session id -> its turns' ids, turn 1 first
SpanIndex = Mapping[str, tuple[TurnSpans, ...]]


def _turn_spans(ids: Mapping[str, Any]) -> TurnSpans:
    docs = ids.get("documents") or []
    return TurnSpans(
        trace_id=str(ids["trace_id"]),
        span_id=str(ids["span_id"]),
        llm_span_id=ids.get("llm_span_id"),
        documents=tuple((d.get("id"), d.get("span_id")) for d in docs if isinstance(d, Mapping)),
    )


def span_index(run: Run) -> tuple[SpanIndex, str | None]:
    """The run's sessions' turn ids, read from its input, and the trace source they were
    read from (``otlp``, ``langfuse``, ...; ``None`` when the input holds no trace ids:
    the index is then empty)."""
    source = run.info.get("input") or {}
    path = source.get("path")
    if not path or not Path(path).exists():
        raise InputError(
            "the run's input file is no longer there, so its trace and span ids cannot be "
            "read again; export needs the input the run read",
            path=str(path),
        )
    recorded = source.get("sha256")
    if recorded and Path(path).is_file() and file_digest(Path(path)) != recorded:
        raise InputError(
            "the run's input changed since the run (its SHA-256 differs from run.json's); "
            "its trace ids may belong to other sessions: run the scenario again",
            path=str(path),
        )
    index: dict[str, tuple[TurnSpans, ...]] = {}
    kind: str | None = None
    with iter_sessions(path, format=source.get("format")) as stream:
        for session in stream:
            traces = session.meta.get("traces") if session.meta else None
            if not isinstance(traces, Mapping):
                continue
            kind = kind or str(traces.get("source"))
            index[session.session_id] = tuple(_turn_spans(t) for t in traces.get("turns") or [])
    return index, kind
