"""Paths given by the user, resolved without surprises.

``Path.resolve()`` raises ``RuntimeError("Symlink loop ...")`` (before Python 3.13) for a
path that is a symbolic link to itself, a traceback instead of an error message.
:func:`real_path` resolves as far as the links go and leaves the rest to the code that
opens the file, which reports an ``OSError`` (ELOOP) in one line; :func:`why_missing` says
what is really there when a file or folder is not.

The output folders a command owns: marked when it makes them, refused when they are not its.

A command that writes a folder of outputs (``run``, ``arena``, ``compare --pairwise --out``,
``parse --format crowdrag``) may replace or remove the files it wrote there before (a resumed
arena, a run whose report is now turned off, a conversion of another dataset), so it must
only ever do so in a folder it made. :func:`claim_folder` makes that sure: a new or empty
folder gets a marker file naming the command (:data:`MARKER`); a folder with the same
command's marker is its own; a folder that holds another command's marker, or files and no
marker, is refused with the folder named and what to do (exit 2): ``arena --out runs/demo``
no longer writes over a run's ``report.html``, and ``output.dir = "."`` no longer removes a
user's own ``meta.json``. A folder written before markers existed is recognised by the
files only that command writes (its ``signature``) and marked then.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError, StorageError

__all__ = [
    "real_path",
    "why_missing",
    "MARKER",
    "claim_folder",
    "release_folder",
    "owned_files",
    "record_files",
]


def real_path(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute, its symbolic links resolved as far as they go (a link that
    loops is left as it is: opening it then fails with a message, never a traceback)."""
    return Path(os.path.realpath(path))


def why_missing(path: str | os.PathLike[str], what: str = "file") -> str:
    """Why there is no ``what`` to read at ``path``, for an error line: ``"no such file"``,
    or what stands in the way (a symbolic link that loops, a file where a folder should be,
    a folder where a file should be)."""
    try:
        status = os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return f"no such {what}: a symbolic link that loops ({error.strerror})"
        if error.errno == errno.ENOENT and os.path.islink(path):
            return f"no such {what}: a symbolic link to {os.readlink(path)!r}, which does not exist"
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"no such {what}"
        return f"cannot read it: {error.strerror or error}"
    if what == "file" and os.path.isdir(path):
        return "a folder, not a file"
    if what == "folder" and not os.path.isdir(path):
        return "not a folder"
    del status
    return f"not a {what}"


#: The marker file a command leaves in a folder it made.
MARKER = ".genir-eval-folder.json"
MARKER_VERSION = 1


def _read_marker(folder: Path) -> dict[str, Any] | None:
    path = folder / MARKER
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("command"), str):
        raise InputError(
            f"its {MARKER} is not one genir-eval wrote (not a JSON object naming a command); "
            "choose another folder",
            path=str(folder),
        )
    return data


def _write_marker(folder: Path, data: dict[str, Any]) -> None:
    path = folder / MARKER
    temporary = folder / f".{MARKER}.{os.getpid()}.marker.tmp"
    temporary.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _visible(folder: Path) -> list[str]:
    """The folder's entries but the marker and a killed writer's private files."""
    return sorted(
        entry.name
        for entry in os.scandir(folder)
        if entry.name != MARKER and not entry.name.endswith((".part", ".tmp"))
    )


def claim_folder(
    folder: Path, command: str, *, signature: Sequence[str], option: str
) -> dict[str, Any]:
    """Make ``folder`` ``command``'s (see the module docstring) or refuse it; returns the
    marker's content. ``signature``: files only ``command`` writes, which make an unmarked
    folder its own (one written before markers existed); ``option``: how the user named the
    folder, for the refusal. ``"new"`` is true in what is returned when the marker was
    written now (see :func:`release_folder`)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        marker = _read_marker(folder)
        if marker is not None:
            if marker["command"] != command:
                raise InputError(
                    f"{option}: this folder holds the outputs of `genir-eval "
                    f"{marker['command']}`, which `genir-eval {command}` would write over; "
                    "choose another folder",
                    path=str(folder),
                )
            return marker
        present = _visible(folder)
        if present and not any(name in present for name in signature):
            shown = ", ".join(present[:3]) + (
                f" and {len(present) - 3} more" if len(present) > 3 else ""
            )
            raise InputError(
                f"{option}: the folder holds files genir-eval did not write here ({shown}); "
                f"`genir-eval {command}` writes, replaces and removes files in its output "
                "folder, so it only writes into a new or empty folder, or one it made; "
                "choose another folder",
                path=str(folder),
            )
        marker = {"version": MARKER_VERSION, "command": command, "files": []}
        _write_marker(folder, marker)
        return {**marker, "new": True}
    except OSError as error:
        raise StorageError(
            f"cannot write to the output folder: {error.strerror or error}; choose another "
            f"folder ({option}) or make this one writable",
            path=str(folder),
        ) from None


def release_folder(folder: Path, claimed: dict[str, Any]) -> None:
    """Take back a claim made now (``claimed["new"]``) when the command wrote nothing: the
    marker goes, and a folder that was empty is empty again."""
    if claimed.get("new"):
        with contextlib.suppress(OSError):
            (folder / MARKER).unlink()


def owned_files(marker: dict[str, Any]) -> list[str]:
    """The files (relative paths) the marker says the command wrote last time."""
    files = marker.get("files")
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def record_files(folder: Path, command: str, files: Iterable[str]) -> None:
    """Say in the marker which files (relative paths) the command wrote this time, so that
    the next time it can remove the ones it no longer writes and no others."""
    _write_marker(
        folder, {"version": MARKER_VERSION, "command": command, "files": sorted(set(files))}
    )
