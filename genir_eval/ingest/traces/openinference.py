"""OpenInference's span attributes read as a :class:`~genir_eval.ingest.traces.steps.Step`'s
values, the attribute names taken from ``openinference-semantic-conventions``.

A span's kind is ``openinference.span.kind`` (``LLM``, ``RETRIEVER``, ``CHAIN``, ...); the
session and user are ``session.id`` and ``user.id``; a request's text is ``input.value``
(when its ``input.mime_type`` is text, or JSON holding one text field); a model call's
messages are ``llm.input_messages.{i}.message.{role,content}`` and
``llm.output_messages.{i}.message.{role,content}`` (its answer the last assistant message,
else ``output.value``); a retrieval's documents are
``retrieval.documents.{i}.document.{id,content,score,metadata}`` in index order, the metadata
a JSON object whose ``url`` and ``title`` name the source. Flattened keys and the same
values given as one array attribute are both read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    MessageContentAttributes,
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)

from genir_eval.ingest.traces.steps import Document, StepKind, document_from_mapping, text_of

__all__ = ["SPAN_KIND", "read_openinference", "indexed", "as_text"]

SPAN_KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
_KINDS: dict[str, StepKind] = {
    OpenInferenceSpanKindValues.LLM.value: "llm",
    OpenInferenceSpanKindValues.RETRIEVER.value: "retriever",
}
_INDEX = re.compile(r"(\d+)\.(.+)")


def indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The objects flattened under ``prefix`` (``prefix.0.x``, ``prefix.1.y``), in index
    order, each a mapping of the rest of the key to its value; or ``attrs[prefix]`` when it
    is given as one array of objects."""
    whole = attrs.get(prefix)
    if isinstance(whole, list):
        return [dict(item) if isinstance(item, Mapping) else {"": item} for item in whole]
    head = prefix + "."
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        match = _INDEX.fullmatch(key[len(head) :])
        if match is not None:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [found[i] for i in sorted(found)]


def as_text(value: Any, name: str, notes: list[str]) -> str | None:
    """``value`` as text: a string as it is, a number or boolean as it prints (with a note
    naming the attribute), anything else ``None`` with a note."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        notes.append(f"{name} is a number ({type(value).__name__}), read as text")
        return str(value)
    notes.append(f"{name} is a {type(value).__name__} value, not text; left out")
    return None


def _messages(attrs: Mapping[str, Any], prefix: str, notes: list[str]) -> list[tuple[str, str]]:
    """(role, text) of each message flattened under ``prefix``."""
    out = []
    for position, item in enumerate(indexed(attrs, prefix)):
        role = item.get(MessageAttributes.MESSAGE_ROLE)
        content = item.get(MessageAttributes.MESSAGE_CONTENT)
        if content is None:  # multi-part content: message.contents.{j}.message_content.text
            parts = indexed(item, MessageAttributes.MESSAGE_CONTENTS)
            texts = [p.get(MessageContentAttributes.MESSAGE_CONTENT_TEXT) for p in parts]
            content = "".join(t for t in texts if isinstance(t, str)) or None
        text = as_text(content, f"{prefix}.{position}.{MessageAttributes.MESSAGE_CONTENT}", notes)
        if text is not None:
            out.append((str(role or "").lower(), text))
    return out


def _documents(attrs: Mapping[str, Any], notes: list[str]) -> tuple[Document, ...]:
    prefix = SpanAttributes.RETRIEVAL_DOCUMENTS
    docs = []
    for position, item in enumerate(indexed(attrs, prefix)):
        docs.append(
            document_from_mapping(
                item.get(DocumentAttributes.DOCUMENT_ID),
                item.get(DocumentAttributes.DOCUMENT_CONTENT),
                item.get(DocumentAttributes.DOCUMENT_METADATA),
                item.get(DocumentAttributes.DOCUMENT_SCORE),
                notes,
                f"{prefix}.{position}",
            )
        )
    return tuple(docs)


def _value(attrs: Mapping[str, Any], key: str, mime_key: str, notes: list[str]) -> str | None:
    """``input.value`` / ``output.value`` as text: plain text as it is, JSON by its one text
    field (:func:`~genir_eval.ingest.traces.steps.text_of`)."""
    raw = attrs.get(key)
    if raw is None:
        return None
    if attrs.get(mime_key) == OpenInferenceMimeTypeValues.JSON.value or not isinstance(raw, str):
        text = text_of(raw)
        if text is None and not isinstance(raw, str):
            return as_text(raw, key, notes)
        return text
    return raw


def read_openinference(attrs: Mapping[str, Any], notes: list[str]) -> dict[str, Any] | None:
    """A step's values from OpenInference attributes, or ``None`` when the span carries no
    ``openinference.span.kind`` (it follows other conventions or none)."""
    kind_name = attrs.get(SPAN_KIND)
    if kind_name is None:
        return None
    kind = _KINDS.get(str(kind_name).upper(), "other")
    values: dict[str, Any] = {
        "kind": kind,
        "session_id": as_text(attrs.get(SpanAttributes.SESSION_ID), "session.id", notes),
        "user_id": as_text(attrs.get(SpanAttributes.USER_ID), "user.id", notes),
        "input_text": _value(
            attrs, SpanAttributes.INPUT_VALUE, SpanAttributes.INPUT_MIME_TYPE, notes
        ),
    }
    if kind == "llm":
        inputs = _messages(attrs, SpanAttributes.LLM_INPUT_MESSAGES, notes)
        users = [text for role, text in inputs if role in ("user", "human")]
        values["user_message"] = users[-1] if users else None
        outputs = _messages(attrs, SpanAttributes.LLM_OUTPUT_MESSAGES, notes)
        answers = [text for role, text in outputs if role in ("assistant", "ai", "model", "")]
        values["output_text"] = (
            answers[-1]
            if answers
            else _value(attrs, SpanAttributes.OUTPUT_VALUE, SpanAttributes.OUTPUT_MIME_TYPE, notes)
        )
    elif kind == "retriever":
        values["documents"] = _documents(attrs, notes)
    return values
