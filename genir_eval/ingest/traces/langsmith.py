"""LangSmith run exports read as :class:`~genir_eval.ingest.traces.steps.Step` records.

A LangSmith run (the SDK's ``list_runs``, a bulk export to JSONL or Parquet) carries ``id``,
``trace_id``, ``parent_run_id``, ``run_type`` (``llm``, ``retriever``, ``chain``, ``tool``,
...), ``name``, ``start_time``, ``end_time``, ``inputs``, ``outputs`` and ``extra.metadata``.
A conversation is LangSmith's *thread*: the metadata's ``session_id``, ``thread_id`` or
``conversation_id`` (the run's top-level ``session_id`` is its tracing project, not a
conversation, and is not read as one).

An ``llm`` run is a model call (its answer from ``outputs``: ``generations``, an OpenAI
response or a message; its user message the last of ``inputs.messages`` or
``inputs.prompts``); a ``retriever`` run's ``outputs.documents`` are its documents
(``{page_content, metadata: {url | source, title}}``); the root run's ``inputs`` give the
query (``question``, ``input``, ``query``, ...).
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
    last_message,
    parse_json_text,
    text_of,
)
from genir_eval.ingest.traces.tables import iter_rows

__all__ = ["read_langsmith", "THREAD_KEYS"]

#: The metadata keys LangSmith groups a thread's traces by.
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")


def read_langsmith(path: Path) -> Iterator[Step | InputError]:
    """The runs of the LangSmith export ``path`` as steps."""
    for where, line, row in iter_rows(path):
        if isinstance(row, InputError):
            yield row
            continue
        try:
            yield _run_step(row, f"{path.name}, {where}")
        except ValueError as error:
            field, _, message = str(error).partition(": ")
            yield InputError(
                f"{where}: {field} {message}" if where.startswith("item") else f"{field} {message}",
                path=str(path),
                line=line,
                row=int(where.split()[1]) if where.startswith("row ") else None,
                column=field,
            )


def _id(value: Any, field: str) -> str:
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
        return str(value)
    raise ValueError(f"{field}: is missing or not an id")


def _thread(row: Mapping[str, Any]) -> str | None:
    extra = parse_json_text(row.get("extra"))
    metadata = parse_json_text(row.get("metadata"))
    if isinstance(extra, Mapping) and isinstance(parse_json_text(extra.get("metadata")), Mapping):
        metadata = parse_json_text(extra["metadata"])
    if not isinstance(metadata, Mapping):
        return None
    for key in THREAD_KEYS:
        if metadata.get(key) is not None:
            return str(metadata[key])
    return None


def _user_message(inputs: Any) -> str | None:
    inputs = parse_json_text(inputs)
    if isinstance(inputs, Mapping):
        if "messages" in inputs:
            return last_message(inputs["messages"], ("user", "human"))
        prompts = inputs.get("prompts")
        if isinstance(prompts, list) and prompts and isinstance(prompts[-1], str):
            return prompts[-1]
    return text_of(inputs)


def _run_step(row: Mapping[str, Any], where: str) -> Step:
    notes: list[str] = []
    run_id = _id(row.get("id"), "id")
    trace_id = _id(
        row.get("trace_id") or (run_id if not row.get("parent_run_id") else None), "trace_id"
    )
    parent = row.get("parent_run_id")
    run_type = str(row.get("run_type") or "").lower()
    values: dict[str, Any] = {"kind": "other", "input_text": text_of(row.get("inputs"))}
    if run_type == "llm":
        values = {
            "kind": "llm",
            "output_text": answer_text(row.get("outputs")),
            "user_message": _user_message(row.get("inputs")),
        }
    elif run_type == "retriever":
        docs = documents_of(row.get("outputs"), notes, "outputs.documents")
        if docs is None:
            notes.append("a retriever run whose outputs hold no documents list")
            docs = ()
        values = {"kind": "retriever", "documents": docs}
    times = []
    for key in ("start_time", "end_time"):
        ns = iso_ns(row.get(key))
        if ns is None and row.get(key) is not None:
            notes.append(
                f"{key} {str(row.get(key))[:40]!r} is not an ISO 8601 time; read as unknown"
            )
        times.append(ns or 0)
    return Step(
        trace_id=trace_id,
        span_id=run_id,
        parent_id=None if parent in (None, "") else str(parent),
        name=str(row.get("name") or run_type),
        start_ns=times[0],
        end_ns=times[1],
        where=where,
        session_id=_thread(row),
        notes=tuple(notes),
        fingerprint=hash(repr(sorted((k, repr(v)) for k, v in row.items()))),
        **values,
    )
