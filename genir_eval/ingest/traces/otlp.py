"""OTLP trace files read as :class:`~genir_eval.ingest.traces.steps.Step` records, one span at
a time, decoded by ``opentelemetry-proto``'s generated classes (no hand-written protobuf).

Two encodings of ``ExportTraceServiceRequest`` are read:

* **OTLP/JSON** (the OTLP specification's JSON encoding): one request a line (what a
  collector's file exporter writes) or one request for the whole file. It is proto3's JSON
  mapping with the specification's deviations, which are undone before protobuf's
  ``json_format`` parses it: ``traceId``, ``spanId`` and ``parentSpanId`` are hex strings, not
  base64 (an empty one is absent); field names are lowerCamelCase (``json_format`` reads
  both); enums may be integers; 64-bit integers may be strings or numbers; unknown fields
  are ignored, as a receiver must.
* **protobuf**: one serialized request for the whole file (what
  ``opentelemetry-exporter-otlp-proto-common``'s ``encode_spans`` returns), or a stream of
  requests each preceded by its length as a varint (read one at a time).

Span attributes are read after OpenInference's conventions
(:mod:`~genir_eval.ingest.traces.openinference`) and, for a span without
``openinference.span.kind``, after OpenTelemetry's GenAI conventions
(:mod:`~genir_eval.ingest.traces.genai`). Every error names the file, the line (JSON) or the
request (protobuf), the span and the field.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from genir_eval.errors import InputError
from genir_eval.ingest.stream import unexpected
from genir_eval.ingest.traces.genai import read_genai
from genir_eval.ingest.traces.openinference import as_text, read_openinference
from genir_eval.ingest.traces.steps import Step

__all__ = ["read_otlp", "is_protobuf", "any_value", "hex_ids_to_base64"]

_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def is_protobuf(path: Path) -> bool:
    """Whether ``path`` holds protobuf rather than JSON: its first non-blank byte is not
    ``{`` (every OTLP/JSON file opens with one)."""
    with path.open("rb") as stream:
        head = stream.read(4096).lstrip(b" \t\r\n\xef\xbb\xbf")
    return not head.startswith(b"{")


def read_otlp(path: Path, *, genai: bool = True) -> Iterator[Step | InputError]:
    """The spans of the OTLP file ``path`` as steps, in file order (a bad line or request is
    yielded as its located error, and reading goes on after it). ``genai``: read the GenAI
    conventions for spans without OpenInference's."""
    if is_protobuf(path):
        yield from _protobuf_steps(path, genai)
    else:
        yield from _json_steps(path, genai)


# --- JSON --------------------------------------------------------------------------------


def _json_steps(path: Path, genai: bool) -> Iterator[Step | InputError]:
    with path.open("rb") as stream:
        first = _first_line(stream)
        stream.seek(0)
        if first is not None and _is_whole_object(first):
            for number, raw in enumerate(stream, start=1):
                if raw.strip():
                    yield from _json_request(path, raw, number, genai)
            return
        data = stream.read()  # one request over many lines: read whole (it is one message)
    yield from _json_request(path, data, None, genai)


def _first_line(stream: IO[bytes]) -> bytes | None:
    for raw in stream:
        if raw.strip():
            return raw
    return None


def _is_whole_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _json_request(
    path: Path, raw: bytes, line: int | None, genai: bool
) -> Iterator[Step | InputError]:
    where = f"line {line}" if line is not None else "the request"
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as error:
        yield InputError(f"not UTF-8 text ({error.reason})", path=str(path), line=line)
        return
    except ValueError as error:
        at = line if line is not None else getattr(error, "lineno", None)
        yield InputError(
            f"not JSON ({getattr(error, 'msg', error)}): is the file truncated?",
            path=str(path),
            line=at,
        )
        return
    if not isinstance(data, dict):
        yield InputError(
            f"{where} is a JSON {type(data).__name__}, not an ExportTraceServiceRequest object",
            path=str(path),
            line=line,
        )
        return
    fast = _fast_steps(data, path, line, genai)
    if fast is not None:
        yield from fast
        return
    notes: list[str] = []
    try:
        hex_ids_to_base64(data, notes)
        request = json_format.ParseDict(
            data, ExportTraceServiceRequest(), ignore_unknown_fields=True
        )
    except _IdError as error:
        yield InputError(error.message, path=str(path), line=line, column=error.field)
        return
    except json_format.ParseError as error:
        yield InputError(
            f"not an OTLP/JSON ExportTraceServiceRequest: {' '.join(str(error).split())[:300]}",
            path=str(path),
            line=line,
        )
        return
    except RecursionError as error:
        yield InputError(unexpected(error), path=str(path), line=line)
        return
    yield from _request_steps(request, path, line, None, genai, notes)


class _IdError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def hex_ids_to_base64(data: dict[str, Any], notes: list[str]) -> None:
    """Rewrite OTLP/JSON's hex trace and span ids (of spans and their links) as the base64
    proto3's JSON mapping reads, in place; an empty id is removed (absent). An id that is
    already base64 of the right length is kept, with a note."""
    for r, resource in enumerate(_list(data.get("resourceSpans"))):
        for s, scope in enumerate(_list(_get(resource, "scopeSpans"))):
            for k, span in enumerate(_list(_get(scope, "spans"))):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{k}]"
                _fix_ids(span, where, notes)
                for n, link in enumerate(_list(_get(span, "links"))):
                    _fix_ids(link, f"{where}.links[{n}]", notes)


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _fix_ids(item: Any, where: str, notes: list[str]) -> None:
    if not isinstance(item, dict):
        return
    for key, size in _ID_BYTES.items():
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise _IdError(f"{where}.{key}", f"{key} is a {type(value).__name__}, not a hex string")
        if value == "":
            del item[key]
            continue
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
        if len(raw) != size or len(value) != 2 * size:
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raw = b""
            if len(raw) != size:
                raise _IdError(
                    f"{where}.{key}",
                    f"{key} {value[:40]!r} is not {2 * size} hex digits ({size} bytes)",
                )
            notes.append(f"{where}.{key} is base64 (proto3 JSON), not OTLP/JSON's hex")
            continue
        item[key] = base64.b64encode(raw).decode("ascii")


# --- protobuf ----------------------------------------------------------------------------


def _protobuf_steps(path: Path, genai: bool) -> Iterator[Step | InputError]:
    size = path.stat().st_size
    with path.open("rb") as stream:
        delimited = _is_delimited(stream, size)
        stream.seek(0)
        if not delimited:
            yield from _protobuf_request(path, stream.read(), 1, genai)
            return
        number = 0
        while stream.tell() < size:
            number += 1
            length = _varint(stream)
            yield from _protobuf_request(path, stream.read(length or 0), number, genai)


def _varint(stream: IO[bytes]) -> int | None:
    shift = value = 0
    for _ in range(10):
        byte = stream.read(1)
        if not byte:
            return None
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value
        shift += 7
    return None


def _is_delimited(stream: IO[bytes], size: int) -> bool:
    """Whether the file is requests each preceded by its length: walking the lengths ends
    exactly at the end of the file (a single request's bytes almost never do)."""
    position = 0
    count = 0
    while position < size:
        stream.seek(position)
        length = _varint(stream)
        if not length:
            return False
        position = stream.tell() + length
        count += 1
    return position == size and count > 1 or (count == 1 and _single_is_length(stream, size))


def _single_is_length(stream: IO[bytes], size: int) -> bool:
    """One length-prefixed request, told from a bare request whose first bytes read as a
    length by trying to parse what follows the prefix."""
    stream.seek(0)
    _varint(stream)
    body = stream.read()
    try:
        ExportTraceServiceRequest.FromString(body)
    except DecodeError:
        return False
    try:
        stream.seek(0)
        ExportTraceServiceRequest.FromString(stream.read())
    except DecodeError:
        return True
    return False


def _protobuf_request(
    path: Path, raw: bytes, number: int, genai: bool
) -> Iterator[Step | InputError]:
    try:
        request = ExportTraceServiceRequest.FromString(raw)
    except DecodeError as error:
        yield InputError(
            f"request {number}: not a protobuf ExportTraceServiceRequest ({error}); is the file "
            "truncated, or another message type?",
            path=str(path),
        )
        return
    yield from _request_steps(request, path, None, number, genai, [])


# --- spans -------------------------------------------------------------------------------


def any_value(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a Python value (bytes as hex)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


def _request_steps(
    request: ExportTraceServiceRequest,
    path: Path,
    line: int | None,
    number: int | None,
    genai: bool,
    notes: list[str],
) -> Iterator[Step | InputError]:
    place = f"line {line}" if line is not None else f"request {number}"
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                span_id = span.span_id.hex()
                trace_id = span.trace_id.hex()
                problem = _id_problem(span.trace_id, span.span_id, span.parent_span_id)
                if problem is not None:
                    yield InputError(
                        f"{place}, span {span_id or '(none)'}: {problem[1]} (is this an "
                        "ExportTraceServiceRequest?)",
                        path=str(path),
                        line=line,
                        column=problem[0],
                    )
                    continue
                yield _step(span, trace_id, span_id, f"{path.name}, {place}", genai, notes)


def _id_problem(trace_id: bytes, span_id: bytes, parent: bytes) -> tuple[str, str] | None:
    if len(trace_id) != 16 or not any(trace_id):
        return "traceId", f"trace id of {len(trace_id)} bytes, not 16 (or all zero)"
    if len(span_id) != 8 or not any(span_id):
        return "spanId", f"span id of {len(span_id)} bytes, not 8 (or all zero)"
    if parent and len(parent) != 8:
        return "parentSpanId", f"parent span id of {len(parent)} bytes, not 8"
    return None


def _step(
    span: Any, trace_id: str, span_id: str, where: str, genai: bool, shared: list[str]
) -> Step:
    attrs = {kv.key: any_value(kv.value) for kv in span.attributes}
    parent = span.parent_span_id.hex() or None
    return _build_step(
        trace_id,
        span_id,
        parent if parent and any(span.parent_span_id) else None,
        span.name,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        attrs,
        where,
        genai,
        shared,
    )


def _build_step(
    trace_id: str,
    span_id: str,
    parent: str | None,
    name: str,
    start: int,
    end: int,
    attrs: dict[str, Any],
    where: str,
    genai: bool,
    shared: list[str],
) -> Step:
    notes = list(shared)
    values = read_openinference(attrs, notes)
    if values is None and genai:
        values = read_genai(attrs, notes)
    if values is None:
        values = {
            "kind": "other",
            "session_id": as_text(attrs.get("session.id"), "session.id", notes),
            "input_text": as_text(attrs.get("input.value"), "input.value", notes),
        }
    return Step(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent,
        name=name,
        start_ns=start,
        end_ns=end,
        where=where,
        notes=tuple(notes),
        # the same span read from JSON or protobuf, by either path, has the same fingerprint
        fingerprint=hash((name, start, end, parent, repr(sorted(attrs.items())))),
        **values,
    )


# --- the fast path -----------------------------------------------------------------------
# json_format is pure Python and reads about a thousand spans a second; a request whose
# every span has exactly the shape OTLP/JSON specifies (hex ids, known value kinds) is read
# straight from the decoded JSON into the same values. Anything else (a field of the wrong
# type, an id that is not hex, a value kind it does not know) goes through json_format into
# opentelemetry-proto's classes, whose checks and messages are the reference.


class _Slow(Exception):
    """The request leaves the fast path's shape: read it through json_format."""


_HEX = frozenset("0123456789abcdef")


def _hex(value: Any, size: int) -> str:
    if type(value) is not str or len(value) != 2 * size or not _HEX.issuperset(value):
        raise _Slow
    if not value.strip("0"):
        raise _Slow
    return value


def _int(value: Any) -> int:
    if type(value) is int and value >= 0:
        return value
    if type(value) is str and value.isascii() and value.isdigit():
        return int(value)
    raise _Slow


def _json_value(value: Any) -> Any:
    if type(value) is not dict or len(value) > 1:
        raise _Slow
    if not value:
        return None
    ((kind, inner),) = value.items()
    if kind == "stringValue" and type(inner) is str:
        return inner
    if kind == "intValue":
        if type(inner) is str and inner.isascii() and inner.lstrip("-").isdigit():
            return int(inner)
        if type(inner) is int:
            return inner
    if kind == "boolValue" and type(inner) is bool:
        return inner
    if kind == "doubleValue" and type(inner) in (int, float):
        return float(inner)
    if kind == "arrayValue" and type(inner) is dict:
        return [_json_value(v) for v in inner.get("values") or []]
    if kind == "kvlistValue" and type(inner) is dict:
        return _json_attributes(inner.get("values") or [])
    raise _Slow


def _json_attributes(items: Any) -> dict[str, Any]:
    if type(items) is not list:
        raise _Slow
    out = {}
    for item in items:
        if type(item) is not dict or type(item.get("key")) is not str:
            raise _Slow
        out[item["key"]] = _json_value(item.get("value", {}))
    return out


def _fast_steps(
    data: dict[str, Any], path: Path, line: int | None, genai: bool
) -> list[Step] | None:
    """The request's steps when every span has OTLP/JSON's exact shape, else ``None``."""
    place = f"{path.name}, " + (f"line {line}" if line is not None else "request 1")
    steps = []
    try:
        resources = data.get("resourceSpans", [])
        if type(resources) is not list:
            raise _Slow
        for resource in resources:
            scopes = resource.get("scopeSpans", []) if type(resource) is dict else None
            if type(scopes) is not list:
                raise _Slow
            for scope in scopes:
                spans = scope.get("spans", []) if type(scope) is dict else None
                if type(spans) is not list:
                    raise _Slow
                for span in spans:
                    if type(span) is not dict:
                        raise _Slow
                    parent = span.get("parentSpanId") or None
                    name = span.get("name", "")
                    if type(name) is not str:
                        raise _Slow
                    steps.append(
                        _build_step(
                            _hex(span.get("traceId"), 16),
                            _hex(span.get("spanId"), 8),
                            None if parent is None else _hex(parent, 8),
                            name,
                            _int(span.get("startTimeUnixNano", 0)),
                            _int(span.get("endTimeUnixNano", 0)),
                            _json_attributes(span.get("attributes", [])),
                            place,
                            genai,
                            [],
                        )
                    )
    except _Slow:
        return None
    return steps
