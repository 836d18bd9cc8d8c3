"""How the run folder's files are written and read: atomic writes (a temporary file renamed
into place, its SHA-256 noted), JSON documents, CSV cells safe from spreadsheet formulas, and
JSON/JSONL documents read with their version checked and a located error."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from genir_eval.errors import InputError
from genir_eval.paths import check_output_path, output_file
from genir_eval.rundir.rows import OUTPUT_VERSION

if TYPE_CHECKING:
    pass


__all__ = [
    "write_text_atomic",
    "file_digest",
    "write_json",
    "csv_cell",
]


def write_text_atomic(path: Path, text: str, digests: dict[str, str] | None = None) -> None:
    """Write ``text`` to ``path`` through a temporary file of a unique name in the same
    folder, renamed into place (:func:`genir_eval.paths.output_file`, which refuses a path
    where a device, a pipe or a link stands): a reader sees the old file or the new one,
    never a part, and two writers never share a temporary file. ``digests`` (when given)
    receives the SHA-256 of what this call wrote, under the file's name."""
    with _temporary(path, digests) as handle:
        handle.write(text)


def _temporary(
    path: Path, digests: dict[str, str] | None = None
) -> contextlib.AbstractContextManager[TextIO]:
    """A text handle on a fresh temporary file beside ``path``, renamed onto ``path`` when
    the block ends without an error (and removed when it raises). ``digests`` (when given)
    receives the SHA-256 of the temporary file under ``path``'s name, taken before the
    rename: a digest read back from ``path`` could be another writer's file, and a run.json
    listing it would pass a folder mixed from two runs as one."""

    def note(source: Path) -> None:
        if digests is not None:
            digests[path.name] = file_digest(source)

    return output_file(path, "the output", before_rename=note)  # type: ignore[return-value]


def _replace(source: Path, target: Path, digests: dict[str, str] | None) -> None:
    """Rename this writer's private ``source`` (a table's part file, written as it streams)
    onto ``target``, first noting its digest (see :func:`_temporary`) and checking that
    what stands at ``target`` is a regular file or nothing."""
    if digests is not None:
        digests[target.name] = file_digest(source)
    check_output_path(target, "the output")
    os.replace(source, target)


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, as ``run.json`` lists them."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
#: Injection"): such a cell is written with a leading apostrophe, which spreadsheets show
#: as text and do not evaluate.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def write_json(
    path: Path, document: Mapping[str, Any], digests: dict[str, str] | None = None
) -> None:
    """Write ``document`` (which must carry ``version``) as indented UTF-8 JSON."""
    if "version" not in document:
        raise ValueError(f"{path.name}: every output document carries a 'version' field")
    write_text_atomic(
        path, json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n", digests
    )


def _flatten(row: Mapping[str, Any]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in row.items():
        if key == "labels":
            flat.update({f"label:{k}": v for k, v in value.items()})
        elif key == "missing":
            flat.update({f"missing:{k}": v for k, v in value.items()})
        elif key == "scores":
            flat.update({f"score:{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell a spreadsheet may open. Text starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading ``'`` (so it is never run as a
    formula); a float is rounded to 10 significant digits (``0.30000000000000004`` is
    written ``0.3``) and never ``-0.0``; missing (``None``, NaN) is ``None``, which the
    writer leaves empty; everything else is unchanged. Every CSV genir-eval writes goes
    through here."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return float(f"{value:.10g}") + 0.0  # + 0.0 turns -0.0 into 0.0
    return value


def _read_json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON: {error.msg}", path=str(path), line=error.lineno
        ) from None
    except (UnicodeDecodeError, RecursionError, OSError) as error:
        raise InputError(_unreadable(error), path=str(path)) from None
    if not isinstance(document, dict):
        raise InputError("expected a JSON object", path=str(path))
    _check_version(document, path, None)
    return document


def _check_version(document: Mapping[str, Any], path: Path, line: int | None) -> None:
    version = document.get("version")
    if version != OUTPUT_VERSION:
        raise InputError(
            f"unsupported output version {version!r} (this genir-eval reads {OUTPUT_VERSION})",
            path=str(path),
            line=line,
        )


def _unreadable(error: BaseException) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at byte {error.start + 1})"
    if isinstance(error, RecursionError):
        return "the JSON is nested too deeply to read"
    return f"cannot read it: {getattr(error, 'strerror', None) or error}"


def _iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8", errors="surrogateescape") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                text.encode("utf-8")
                row = json.loads(text)
            except json.JSONDecodeError as error:
                raise InputError(
                    f"not valid JSON: {error.msg}", path=str(path), line=number
                ) from None
            except (UnicodeEncodeError, RecursionError) as error:
                message = "not UTF-8 text" if isinstance(error, UnicodeEncodeError) else None
                raise InputError(
                    message or _unreadable(error), path=str(path), line=number
                ) from None
            if not isinstance(row, dict):
                raise InputError("expected a JSON object", path=str(path), line=number)
            _check_version(row, path, number)
            yield row
