"""Langfuse trace exports read as :class:`~genir_eval.ingest.traces.steps.Step` records.

Langfuse's export (the UI's download, the public API's ``GET /traces/{id}`` and
``/observations``, a blob-storage export; JSON, JSONL or Parquet) holds **traces** (``id``,
``timestamp``, ``name``, ``input``, ``output``, ``sessionId``, ``userId``, ``metadata``) and
their **observations** (``id``, ``traceId``, ``type``, ``name``, ``startTime``, ``endTime``,
``parentObservationId``, ``input``, ``output``, ``metadata``), either nested (a trace with
its ``observations``) or one row each. Keys are read in camelCase or snake_case.

The trace is its own root step (its ``input`` the query, its ``sessionId`` the session);
an observation without a parent hangs under it. A ``GENERATION`` is a model call (its output
the answer: a string, a chat message or an OpenAI response; its input's last user message);
a ``RETRIEVER`` is a retrieval whose output is its documents (``[{page_content | content,
metadata: {url, title}}]`` or ``{"documents": [...]}``); another observation whose output
has that shape is read as a retrieval too, with a note.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest.traces.steps import (
    Step,
    answer_text,
    documents_of,
    iso_ns,
    text_of,
)
from genir_eval.ingest.traces.tables import iter_rows

__all__ = ["read_langfuse"]


def _get(row: Mapping[str, Any], camel: str) -> Any:
    """``row[camel]``, or its snake_case spelling (``sessionId`` -> ``session_id``)."""
    if camel in row:
        return row[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return row.get(snake)


def read_langfuse(path: Path) -> Iterator[Step | InputError]:
    """The traces and observations of the Langfuse export ``path`` as steps."""
    for where, line, row in iter_rows(path):
        if isinstance(row, InputError):
            yield row
            continue
        place = f"{path.name}, {where}"
        try:
            if "observations" in row or ("type" not in row and _get(row, "traceId") is None):
                yield _trace_step(row, place)
                for position, observation in enumerate(row.get("observations") or []):
                    field = f"observations[{position}]"
                    if not isinstance(observation, Mapping):
                        raise _Bad(field, "is not an object")
                    try:
                        yield _observation_step(observation, f"{place}, {field}", row)
                    except _Bad as bad:
                        raise _Bad(f"{field}.{bad.field}", bad.message.split(" ", 1)[1]) from None
            else:
                yield _observation_step(row, place, None)
        except _Bad as bad:
            yield InputError(
                f"{where}: {bad.message}" if where.startswith("item") else bad.message,
                path=str(path),
                line=line,
                row=int(where.split()[1]) if where.startswith("row ") else None,
                column=bad.field,
            )


class _Bad(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = f"{field} {message}"


def _text_id(value: Any, field: str) -> str:
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
        return str(value)
    raise _Bad(field, "is missing or not an id")


def _time(value: Any, field: str, notes: list[str]) -> int:
    ns = iso_ns(value)
    if ns is None:
        if value is not None:
            notes.append(f"{field} {str(value)[:40]!r} is not an ISO 8601 time; read as unknown")
        return 0
    return ns


def _trace_step(row: Mapping[str, Any], where: str) -> Step:
    notes: list[str] = []
    trace_id = _text_id(row.get("id"), "id")
    start = _time(row.get("timestamp"), "timestamp", notes)
    session = _get(row, "sessionId")
    user = _get(row, "userId")
    return Step(
        trace_id=trace_id,
        span_id=trace_id,
        parent_id=None,
        name=str(row.get("name") or "trace"),
        start_ns=start,
        end_ns=0,
        kind="other",
        where=where,
        session_id=None if session is None else str(session),
        user_id=None if user is None else str(user),
        input_text=text_of(row.get("input")),
        notes=tuple(notes),
        fingerprint=hash(repr(sorted((k, repr(v)) for k, v in row.items() if k != "observations"))),
    )


def _observation_step(row: Mapping[str, Any], where: str, trace: Mapping[str, Any] | None) -> Step:
    notes: list[str] = []
    span_id = _text_id(row.get("id"), "id")
    trace_id = _get(row, "traceId") or (trace or {}).get("id")
    trace_id = _text_id(trace_id, "traceId")
    parent = _get(row, "parentObservationId") or trace_id
    kind_name = str(row.get("type") or "").upper()
    values: dict[str, Any] = {"kind": "other"}
    if kind_name == "GENERATION":
        values = {
            "kind": "llm",
            "output_text": answer_text(row.get("output")),
            "user_message": text_of(row.get("input")),
        }
    else:
        docs = documents_of(row.get("output"), notes, "output")
        if docs is not None and (kind_name == "RETRIEVER" or docs):
            if kind_name != "RETRIEVER":
                notes.append(
                    f"a {kind_name or 'typeless'} observation read as a retrieval by its output"
                )
            values = {"kind": "retriever", "documents": docs}
        elif kind_name == "RETRIEVER" and row.get("output") is not None:
            notes.append("a RETRIEVER whose output is not a list of documents")
    session = _get(row, "sessionId")
    return Step(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=str(parent),
        name=str(row.get("name") or kind_name.lower()),
        start_ns=_time(_get(row, "startTime"), "startTime", notes),
        end_ns=_time(_get(row, "endTime"), "endTime", notes),
        where=where,
        session_id=None if session is None else str(session),
        input_text=text_of(row.get("input")) if values["kind"] == "other" else None,
        notes=tuple(notes),
        fingerprint=hash(repr(sorted((k, repr(v)) for k, v in row.items()))),
        **values,
    )
