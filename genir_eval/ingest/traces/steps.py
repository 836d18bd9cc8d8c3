"""What every trace source is mapped to before sessions are assembled: a :class:`Step`.

A span of an OTLP file, an observation of a Langfuse export and a run of a LangSmith export
each become one :class:`Step`: where it sits in its trace (trace id, its own id, its
parent's), when it ran, what kind of step it is for a RAG answer (an LLM call, a retrieval,
anything else) and the few values a session is made of (the user's query, the model's
answer, the retrieved documents, the session and user ids). The assembler
(:mod:`genir_eval.ingest.traces.assemble`) reads only steps, so a source is one mapping.

What a mapping met but could not use goes into :attr:`Step.notes`, one short sentence each,
so nothing a trace holds is left out without a word.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Document",
    "Step",
    "StepKind",
    "text_of",
    "parse_json_text",
    "document_from_mapping",
    "message_text",
]

StepKind = Literal["llm", "retriever", "other"]


@dataclass(frozen=True)
class Document:
    """A retrieved document in retrieval order: its id, url and title (from its metadata),
    its content (the source text citation support is judged against) and score."""

    id: str | None
    url: str | None
    title: str
    content: str | None
    score: float | None = None


@dataclass(frozen=True)
class Step:
    """One span, observation or run, as the assembler reads it.

    ``where`` locates it for a message (``file, line 3`` or ``file, message 2``); ``kind``
    is ``llm`` for a model call, ``retriever`` for a retrieval, ``other`` for the rest;
    ``input_text`` is the step's input when it is plain text (a root request's query),
    ``user_message`` the last user message of a model call, ``output_text`` a model call's
    answer; ``fingerprint`` tells a repeated copy of the same span from a different span
    sharing its id.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    kind: StepKind
    where: str
    session_id: str | None = None
    user_id: str | None = None
    input_text: str | None = None
    user_message: str | None = None
    output_text: str | None = None
    documents: tuple[Document, ...] = ()
    notes: tuple[str, ...] = ()
    fingerprint: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


def parse_json_text(value: Any) -> Any:
    """``value`` decoded when it is a string holding a JSON object or array, else itself."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# keys under which a request's text input is commonly found (LangChain chains, LlamaIndex
# query engines, OpenAI-style bodies)
_TEXT_KEYS = ("query", "question", "input", "user_input", "prompt", "text", "content", "message")


def text_of(value: Any) -> str | None:
    """The plain text ``value`` stands for: a string as it is, a mapping's one text field
    (``query``, ``question``, ``input``, ...; or its only value when that is text), a chat
    message's content; ``None`` when none can be told."""
    value = parse_json_text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in _TEXT_KEYS:
            found = value.get(key)
            if isinstance(found, str):
                return found
        if "messages" in value:
            return last_message(value["messages"], ("user", "human"))
        texts = [v for v in value.values() if isinstance(v, str)]
        if len(value) == 1 and len(texts) == 1:
            return texts[0]
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return last_message(value, ("user", "human"))
    return None


def message_text(message: Any) -> str | None:
    """The text of one chat message (``content`` a string, or a list of text parts, or
    OpenTelemetry GenAI's ``parts``)."""
    if isinstance(message, str):
        return message
    if not isinstance(message, Mapping):
        return None
    for key in ("content", "parts", "text"):
        content = message.get(key)
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                p.get("content") or p.get("text") if isinstance(p, Mapping) else p for p in content
            ]
            joined = [t for t in texts if isinstance(t, str)]
            if joined:
                return "".join(joined)
    data = message.get("data")  # LangChain's serialised message: {"type", "data": {...}}
    if isinstance(data, Mapping):
        return message_text(data)
    return None


def _role(message: Mapping[str, Any]) -> str:
    role = message.get("role") or message.get("type")
    if role is None and isinstance(message.get("data"), Mapping):
        role = message["data"].get("type") or message["data"].get("role")
    return str(role or "").lower()


def last_message(messages: Any, roles: tuple[str, ...]) -> str | None:
    """The text of the last message of ``messages`` whose role is one of ``roles``."""
    if isinstance(messages, list) and messages and isinstance(messages[0], list):
        messages = messages[-1]  # LangChain: a batch of message lists
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and _role(message) in roles:
            text = message_text(message)
            if text is not None:
                return text
    return None


_URL_KEYS = ("url", "source_url", "uri", "link", "href", "source")
_TITLE_KEYS = ("title", "name", "document_title", "file_name")


def document_from_mapping(
    doc_id: Any, content: Any, metadata: Any, score: Any, notes: list[str], what: str
) -> Document:
    """A :class:`Document` from a retrieval's values, its url and title read from its
    metadata (``url``, ``source_url``, ``uri``, ``link``, ``source`` when it is a url;
    ``title``, ``name``); every value of the wrong type is kept as text with a note."""
    meta = parse_json_text(metadata)
    if metadata is not None and not isinstance(meta, Mapping):
        notes.append(f"{what}: metadata is not a JSON object; no url or title taken from it")
        meta = {}
    meta = meta or {}
    url = None
    for key in _URL_KEYS:
        candidate = meta.get(key)
        if isinstance(candidate, str) and "://" in candidate:
            url = candidate
            break
    title = next((meta[k] for k in _TITLE_KEYS if isinstance(meta.get(k), str)), "")
    if content is not None and not isinstance(content, str):
        notes.append(f"{what}: content is a {type(content).__name__}, read as its JSON text")
        content = json.dumps(content, ensure_ascii=False, default=str)
    if doc_id is not None and not isinstance(doc_id, str):
        doc_id = str(doc_id)
    number: float | None = None
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        number = float(score)
    elif score is not None:
        notes.append(f"{what}: score {str(score)[:40]!r} is not a number; left out")
    return Document(id=doc_id, url=url, title=title, content=content, score=number)


def answer_text(value: Any) -> str | None:
    """A model call's answer from its output as tracing tools record it: a string; an
    OpenAI response (``choices[0].message.content``); LangChain's ``generations`` (the first
    generation's ``text`` or message); a chat message; a list of messages (the last
    assistant one); a mapping's ``output``/``completion``/``text``/``content``."""
    value = parse_json_text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return last_message(value, ("assistant", "ai", "model"))
    if not isinstance(value, Mapping):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        first = choices[0]
        return message_text(first.get("message")) or (
            first.get("text") if isinstance(first.get("text"), str) else None
        )
    generations = value.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) else generations[0]
        if isinstance(first, Mapping):
            if isinstance(first.get("text"), str) and first["text"]:
                return first["text"]
            return message_text(first.get("message"))
    if "role" in value or "parts" in value:
        return message_text(value)
    for key in ("output", "completion", "text", "content", "answer"):
        found = value.get(key)
        if isinstance(found, str):
            return found
        if isinstance(found, (Mapping, list)):
            return answer_text(found)
    if "messages" in value:
        return last_message(value["messages"], ("assistant", "ai", "model"))
    return None


def documents_of(value: Any, notes: list[str], what: str) -> tuple[Document, ...] | None:
    """Retrieved documents from a retrieval's output: a list of documents (LangChain's
    ``{page_content, metadata}``, or ``{id, content, metadata, score}``), or a mapping
    holding one under ``documents``; ``None`` when the value is none of these."""
    value = parse_json_text(value)
    if isinstance(value, Mapping):
        value = value.get("documents", value.get("output"))
        value = parse_json_text(value)
    if not isinstance(value, list) or not all(isinstance(d, Mapping) for d in value):
        return None
    docs = []
    for position, item in enumerate(value):
        content = item.get("page_content", item.get("content", item.get("text")))
        metadata = item.get("metadata")
        if metadata is None:
            metadata = {k: item[k] for k in ("url", "title") if k in item} or None
        docs.append(
            document_from_mapping(
                item.get("id"),
                content,
                metadata,
                item.get("score"),
                notes,
                f"{what}[{position}]",
            )
        )
    return tuple(docs)


def iso_ns(value: Any) -> int | None:
    """An ISO 8601 time (``2025-01-02T03:04:05.123456Z``; no zone is UTC) or epoch
    milliseconds, in nanoseconds since the epoch; ``None`` when it is neither."""
    import datetime as dt

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value * 1_000_000)
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace(" ", "T", 1)
        head, dot, rest = text.partition(".")
        if dot:  # fractions finer than microseconds: cut to six digits, keep the zone
            digits = "".join(ch for ch in rest if ch.isdigit())
            zone = rest[len(digits) :]
            text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
