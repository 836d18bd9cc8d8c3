"""Telling a trace file's format from its first bytes, with the reason said.

Protobuf (a file whose first byte is not ``{`` or ``[`` and whose name ends in ``.pb``,
``.binpb``, ``.otlp`` or ``.protobuf``) is OTLP. Parquet (``PAR1``) is told by its columns:
``run_type`` is LangSmith, ``traceId``/``trace_id`` with ``type``, or ``observations``, is
Langfuse. JSON is told by the keys of its first object: ``resourceSpans`` is OTLP,
``run_type`` LangSmith, ``observations`` or ``traceId`` with ``type`` Langfuse. A key is
looked for as a key (after ``{`` or ``,``), so text quoting it inside a string does not count.
"""

from __future__ import annotations

import re
from pathlib import Path

from genir_eval.ingest.traces.tables import is_parquet

__all__ = ["sniff_trace_format", "PROTOBUF_SUFFIXES"]

PROTOBUF_SUFFIXES = (".pb", ".binpb", ".otlp", ".protobuf")
_HEAD = 1 << 20


def _key(name: str) -> re.Pattern[bytes]:
    return re.compile(rb'[{,]\s*"' + name.encode() + rb'"\s*:')


_OTLP = _key("resourceSpans")
_OTLP_SNAKE = _key("resource_spans")
_RUN_TYPE = _key("run_type")
_OBSERVATIONS = _key("observations")
_TRACE_ID = _key("traceId")
_TYPE = _key("type")


def sniff_trace_format(path: Path) -> tuple[str, str] | None:
    """(format, reason) when ``path`` (a file, or a folder's first file) is a trace file."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            return None
        found = sniff_trace_format(files[0])
        if found is None:
            return None
        return found[0], f"the folder's first file, {files[0].name}: {found[1]}"
    if is_parquet(path):
        return _parquet(path)
    with path.open("rb") as stream:
        head = stream.read(_HEAD)
    stripped = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not stripped.startswith((b"{", b"[")):
        if path.suffix.lower() in PROTOBUF_SUFFIXES:
            return "otlp", f"the name ends in {path.suffix} and the file is not JSON (protobuf)"
        return None
    if _OTLP.search(head) or _OTLP_SNAKE.search(head):
        return "otlp", "its first object holds resourceSpans (an OTLP ExportTraceServiceRequest)"
    if _RUN_TYPE.search(head):
        return "langsmith", "its first object holds run_type (a LangSmith run)"
    if _OBSERVATIONS.search(head) or (_TRACE_ID.search(head) and _TYPE.search(head)):
        return "langfuse", "its first object holds observations or traceId and type (Langfuse)"
    return None


def _parquet(path: Path) -> tuple[str, str] | None:
    try:
        import pyarrow.parquet as pq

        names = set(pq.read_schema(path).names)
    except Exception:  # no pyarrow, or not readable: the reader says which
        return None
    if "run_type" in names:
        return "langsmith", "a Parquet file with a run_type column (LangSmith runs)"
    if "observations" in names or ({"type"} <= names and names & {"traceId", "trace_id"}):
        return "langfuse", "a Parquet file with Langfuse's observation columns"
    return None
