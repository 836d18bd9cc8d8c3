"""The OpenTelemetry GenAI semantic conventions' span attributes read as a
:class:`~genir_eval.ingest.traces.steps.Step`'s values.

A model call is a span whose ``gen_ai.operation.name`` is ``chat``, ``text_completion`` or
``generate_content``; a retrieval one whose operation is ``retrieval``. The session is
``gen_ai.conversation.id``; a call's messages are ``gen_ai.input.messages`` and
``gen_ai.output.messages`` (JSON arrays of ``{role, parts: [{type, content}]}``, as a string
or structured), or the earlier flattened ``gen_ai.prompt.{i}.{role,content}`` and
``gen_ai.completion.{i}.{role,content}``; a retrieval's documents are
``gen_ai.retrieval.documents`` (an array of ``{id, score, content, metadata}`` objects, as a
JSON string or structured).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.ingest.traces.openinference import as_text, indexed
from genir_eval.ingest.traces.steps import (
    Document,
    StepKind,
    document_from_mapping,
    last_message,
    parse_json_text,
)

__all__ = ["OPERATION", "read_genai"]

OPERATION = "gen_ai.operation.name"
_KINDS: dict[str, StepKind] = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "retrieval": "retriever",
}


def _messages(attrs: Mapping[str, Any], key: str, legacy: str, notes: list[str]) -> Any:
    value = parse_json_text(attrs.get(key))
    if isinstance(value, list):
        return value
    if value is not None:
        notes.append(f"{key} is not a JSON array of messages; left out")
    flat = indexed(attrs, legacy)
    return [{"role": m.get("role"), "content": m.get("content")} for m in flat] or None


def _documents(attrs: Mapping[str, Any], notes: list[str]) -> tuple[Document, ...]:
    key = "gen_ai.retrieval.documents"
    value = parse_json_text(attrs.get(key))
    if value is None:
        return ()
    if not isinstance(value, list):
        notes.append(f"{key} is not a JSON array of documents; left out")
        return ()
    docs = []
    for position, item in enumerate(value):
        if not isinstance(item, Mapping):
            notes.append(f"{key}[{position}] is not an object; left out")
            continue
        metadata = item.get("metadata")
        if metadata is None:  # url and title given beside id and score
            metadata = {k: item[k] for k in ("url", "title") if k in item} or None
        docs.append(
            document_from_mapping(
                item.get("id"),
                item.get("content", item.get("text")),
                metadata,
                item.get("score"),
                notes,
                f"{key}[{position}]",
            )
        )
    return tuple(docs)


def read_genai(attrs: Mapping[str, Any], notes: list[str]) -> dict[str, Any] | None:
    """A step's values from GenAI attributes, or ``None`` when the span has no
    ``gen_ai.operation.name``."""
    operation = attrs.get(OPERATION)
    if operation is None:
        return None
    kind = _KINDS.get(str(operation), "other")
    values: dict[str, Any] = {
        "kind": kind,
        "session_id": as_text(attrs.get("gen_ai.conversation.id"), "gen_ai.conversation.id", notes),
        "user_id": as_text(attrs.get("user.id"), "user.id", notes),
    }
    if kind == "llm":
        inputs = _messages(attrs, "gen_ai.input.messages", "gen_ai.prompt", notes)
        outputs = _messages(attrs, "gen_ai.output.messages", "gen_ai.completion", notes)
        values["user_message"] = last_message(inputs, ("user",))
        values["output_text"] = last_message(outputs, ("assistant", "model", ""))
    elif kind == "retriever":
        values["documents"] = _documents(attrs, notes)
    return values
