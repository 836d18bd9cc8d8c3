"""One entry point for every input format: :func:`iter_sessions` and :func:`load_sessions`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from genir_eval.errors import ConfigError, InputError
from genir_eval.ingest.jsonl import iter_jsonl
from genir_eval.ingest.markdown import iter_markdown
from genir_eval.ingest.result import LoadResult
from genir_eval.ingest.sources import read_source_texts, source_text_attacher
from genir_eval.ingest.stream import SessionStream
from genir_eval.ingest.traces.detect import sniff_trace_format
from genir_eval.ingest.urge import iter_urge
from genir_eval.paths import why_missing

__all__ = [
    "FORMATS",
    "TRACE_FORMATS",
    "Format",
    "detect_format",
    "detect_format_reason",
    "iter_sessions",
    "load_sessions",
]

Format = Literal["urge", "jsonl", "markdown", "otlp", "openinference", "langfuse", "langsmith"]
#: The trace formats (:mod:`genir_eval.ingest.traces`): a file or a folder of files.
TRACE_FORMATS: tuple[Format, ...] = ("otlp", "openinference", "langfuse", "langsmith")
FORMATS: tuple[Format, ...] = ("urge", "jsonl", "markdown", *TRACE_FORMATS)

_BY_SUFFIX: dict[str, Format] = {
    ".csv": "urge",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".md": "markdown",
    ".markdown": "markdown",
}


def detect_format(path: str | Path) -> Format:
    """The format of ``path`` (:func:`detect_format_reason` without its reason)."""
    return detect_format_reason(path)[0]


def detect_format_reason(path: str | Path) -> tuple[Format, str]:
    """The format of ``path`` and why: a trace file or folder by its first bytes
    (:mod:`genir_eval.ingest.traces.detect`), else from its extension, else its first line.

    ``.csv`` is URGE, ``.jsonl``/``.ndjson`` canonical JSONL, ``.md``/``.markdown`` Markdown.
    Otherwise a first non-blank line opening with ``{`` is JSONL, one starting with ``#`` is
    Markdown, and a CSV header naming URGE's columns is URGE.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if path.is_dir() or suffix not in (".csv", ".md", ".markdown"):
        sniffed = sniff_trace_format(path)
        if sniffed is not None:
            return sniffed[0], sniffed[1]  # type: ignore[return-value]
    if path.is_dir():
        raise InputError(
            "a folder is read only as trace files, and its first file is none; pass --format",
            path=str(path),
        )
    by_suffix = _BY_SUFFIX.get(suffix)
    if by_suffix is not None:
        return by_suffix, f"the name ends in {path.suffix}"
    with path.open(encoding="utf-8-sig", errors="replace") as stream:
        first = next((line for line in stream if line.strip()), "").strip()
    if first.startswith("{"):
        return "jsonl", "its first line is a JSON object"
    if first.startswith("#"):
        return "markdown", "its first line is a Markdown header"
    if all(column in first for column in ("conversation", "response_html")):
        return "urge", "its header names URGE's columns"
    raise InputError(
        f"cannot tell the format from the name or the first line; pass one of {', '.join(FORMATS)}",
        path=str(path),
    )


def iter_sessions(
    path: str | Path,
    *,
    format: Format | None = None,
    skip_invalid: bool = False,
    sources: str | Path | None = None,
) -> SessionStream:
    """The sessions of ``path`` in ``format`` (detected when ``None``), read one at a time.

    Formats: ``urge`` (URGE dataset CSV, :mod:`genir_eval.ingest.urge`), ``jsonl``
    (canonical JSONL, :mod:`genir_eval.ingest.jsonl`), ``markdown`` (logs of your own RAG
    system, :mod:`genir_eval.ingest.markdown`) and the trace formats ``otlp``,
    ``openinference``, ``langfuse`` and ``langsmith`` (:mod:`genir_eval.ingest.traces`; a
    trace input may be a folder of files). Only the session being read is in memory.
    A bad session raises a located :class:`~genir_eval.errors.InputError` when it is
    reached; with ``skip_invalid`` it is left out and its error appended to
    :attr:`SessionStream.skipped`, while the other sessions load. A file with no session
    at all is an error in every format. ``sources`` is a side file of source texts keyed by
    url (:mod:`genir_eval.ingest.sources`), read first and attached to the links that have
    none.
    """
    texts = read_source_texts(sources) if sources is not None else None
    stream = _open(Path(path), format, skip_invalid)
    return stream.map(source_text_attacher(texts)) if texts is not None else stream


def _open(path: Path, format: Format | None, skip_invalid: bool) -> SessionStream:
    if path.is_dir() and format in (None, *TRACE_FORMATS):
        return _traces(path, format or detect_format(path), skip_invalid)
    if not path.is_file():
        raise InputError(why_missing(path), path=str(path))
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise InputError(
            f"cannot read the file: {error.strerror or error}", path=str(path)
        ) from None
    if format is None:
        format = detect_format(path)
    if format == "urge":
        return iter_urge(path, skip_invalid=skip_invalid)
    if format == "jsonl":
        return iter_jsonl(path, skip_invalid=skip_invalid)
    if format == "markdown":
        return iter_markdown(path, skip_invalid=skip_invalid)
    if format in TRACE_FORMATS:
        return _traces(path, format, skip_invalid)
    raise ConfigError(f"unknown input format {format!r}; expected one of {', '.join(FORMATS)}")


def _traces(path: Path, format: str, skip_invalid: bool) -> SessionStream:
    # imported when a trace is read: protobuf and the conventions stay out of the others
    from genir_eval.ingest.traces.reader import iter_traces

    return iter_traces(path, format=format, skip_invalid=skip_invalid)


def load_sessions(
    path: str | Path,
    *,
    format: Format | None = None,
    skip_invalid: bool = False,
    sources: str | Path | None = None,
) -> LoadResult:
    """All sessions of ``path`` in a list: :func:`iter_sessions`, read to the end."""
    stream = iter_sessions(path, format=format, skip_invalid=skip_invalid, sources=sources)
    return LoadResult(sessions=list(stream), skipped=stream.skipped)
