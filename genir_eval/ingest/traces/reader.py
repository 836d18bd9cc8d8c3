"""Trace files read as sessions: the one entry point of the trace formats.

``otlp`` reads OTLP files (JSON or protobuf) after both OpenInference's and the GenAI
conventions, ``openinference`` after OpenInference's alone; ``langfuse`` reads Langfuse's
trace exports and ``langsmith`` LangSmith's run exports (JSON, JSONL or Parquet). ``path`` is
a file, or a folder whose files are read in name order as one stream, so a session whose
traces were exported to several files is one session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from genir_eval.errors import InputError
from genir_eval.ingest.stream import SessionStream, unexpected
from genir_eval.ingest.traces.assemble import DEFAULT_WINDOW, Assembler
from genir_eval.ingest.traces.langfuse import read_langfuse
from genir_eval.ingest.traces.langsmith import read_langsmith
from genir_eval.ingest.traces.otlp import read_otlp
from genir_eval.ingest.traces.steps import Step
from genir_eval.records import Session

__all__ = ["TRACE_FORMATS", "TraceStream", "iter_traces", "trace_files"]

TRACE_FORMATS = ("otlp", "openinference", "langfuse", "langsmith")


class TraceStream(SessionStream):
    """A :class:`~genir_eval.ingest.stream.SessionStream` of trace sessions that also
    counts what it read: :attr:`spans` and :attr:`notes` (traces with a note, by kind)."""

    assembler: Assembler

    @property
    def spans(self) -> int:
        return self.assembler.spans

    @property
    def notes(self) -> dict[str, int]:
        return dict(self.assembler.notes)


def trace_files(path: Path) -> list[Path]:
    """``path`` itself, or a folder's visible files in name order."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise InputError("the folder holds no trace file", path=str(path))
        return files
    return [path]


def _steps(files: list[Path], format: str) -> Iterator[Step | InputError]:
    for file in files:
        if format in ("otlp", "openinference"):
            yield from read_otlp(file, genai=format == "otlp")
        elif format == "langfuse":
            yield from read_langfuse(file)
        elif format == "langsmith":
            yield from read_langsmith(file)
        else:
            raise ValueError(f"unknown trace format {format!r}")


def iter_traces(
    path: str | Path,
    *,
    format: str,
    skip_invalid: bool = False,
    window: int = DEFAULT_WINDOW,
) -> TraceStream:
    """The sessions of the trace file or folder ``path`` in ``format``, one at a time
    (:mod:`genir_eval.ingest.traces.assemble` says how spans become sessions)."""
    path = Path(path)
    files = trace_files(path)
    assembler = Assembler(str(path), format, window=window)

    def items() -> Iterator[Session | InputError]:
        try:
            for item in _steps(files, format):
                if isinstance(item, InputError):
                    yield item
                else:
                    yield from assembler.feed(item)
            yield from assembler.finish()
        except OSError as error:
            yield InputError(f"cannot read it: {error.strerror or error}", path=str(path))
        except (RecursionError, MemoryError) as error:
            yield InputError(unexpected(error), path=str(path))

    stream = TraceStream(items(), path=path, format=format, skip_invalid=skip_invalid)
    stream.assembler = assembler
    return stream
