"""The rows of a tracing tool's export, one at a time: JSONL (one object a line), JSON (an
array of objects, or an object holding one under ``data``, as the tools' APIs answer) and
Parquet (read a batch of rows at a time with ``pyarrow``, the ``tables`` extra).

Each row comes with where it is (``line 3``, ``row 12``) for the located errors of the
readers above.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError, InputError

__all__ = ["iter_rows", "is_parquet"]


def is_parquet(path: Path) -> bool:
    with path.open("rb") as stream:
        return stream.read(4) == b"PAR1"


def iter_rows(path: Path) -> Iterator[tuple[str, int | None, dict[str, Any] | InputError]]:
    """(where, line, row or its error) for every row of ``path``."""
    if is_parquet(path):
        yield from _parquet_rows(path)
        return
    with path.open("rb") as stream:
        head = stream.read(4096).lstrip(b" \t\r\n\xef\xbb\xbf")
        stream.seek(0)
        if head.startswith(b"{"):
            first = next((raw for raw in stream if raw.strip()), b"")
            stream.seek(0)
            if _whole(first):
                for number, raw in enumerate(stream, start=1):
                    if raw.strip():
                        yield f"line {number}", number, _object(path, raw, number)
                return
        data = stream.read()
    try:
        whole = json.loads(data)
    except ValueError as error:
        yield (
            "the file",
            None,
            InputError(
                f"neither JSON lines nor one JSON document ({getattr(error, 'msg', error)}; line "
                f"{getattr(error, 'lineno', '?')}): is the file truncated?",
                path=str(path),
                line=getattr(error, "lineno", None),
            ),
        )
        return
    if isinstance(whole, dict):
        whole = whole.get("data", whole.get("runs", whole.get("traces", [whole])))
    if not isinstance(whole, list):
        yield "the file", None, InputError("expected an array of objects", path=str(path))
        return
    for number, item in enumerate(whole, start=1):
        if isinstance(item, dict):
            yield f"item {number}", None, item
        else:
            yield (
                f"item {number}",
                None,
                InputError(
                    f"item {number} is a JSON {type(item).__name__}, not an object", path=str(path)
                ),
            )


def _whole(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _object(path: Path, raw: bytes, number: int) -> dict[str, Any] | InputError:
    try:
        value = json.loads(raw)
    except ValueError as error:
        return InputError(
            f"not JSON ({getattr(error, 'msg', error)}): is the file truncated?",
            path=str(path),
            line=number,
        )
    if not isinstance(value, dict):
        return InputError(
            f"a JSON {type(value).__name__}, not an object", path=str(path), line=number
        )
    return value


def _parquet_rows(path: Path) -> Iterator[tuple[str, int | None, dict[str, Any] | InputError]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            "reading Parquet needs pyarrow: pip install 'genir-eval[tables]'"
        ) from None
    try:
        table = pq.ParquetFile(path)
    except Exception as error:  # pyarrow raises its own ArrowInvalid / OSError kinds
        yield "the file", None, InputError(f"not a readable Parquet file ({error})", path=str(path))
        return
    number = 0
    for batch in table.iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            number += 1
            yield f"row {number}", None, row
