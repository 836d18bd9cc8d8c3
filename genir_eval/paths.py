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

Every file a command writes goes through :func:`output_file` (or :func:`write_output`): it is
written to a fresh temporary file beside its path and renamed into place, so what stands at
the path is always a regular file the command created. A path where something other than a
regular file stands (a device such as ``/dev/full``, a FIFO, a socket, a folder, a symbolic
link, a link that loops) is refused with the path and what stands there (exit 2), before any
work when the command calls :func:`check_output_path` first: ``compare --html /dev/full`` no
longer replaces the device, ``parse -o /dev/stdout`` no longer replaces the link. A file
inside an output folder is named through :func:`output_child`, which refuses a name that
would leave the folder (``../x``, an absolute path, a link out of it), and a name taken from
data (a scenario's ``name``, a system's) through :func:`plain_name`.
``tests/test_output_writers.py`` lists every place in the package that writes a file and
fails when one does not go through here.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal, overload

from genir_eval.errors import InputError, StorageError
from genir_eval.figures import UNSAFE

__all__ = [
    "real_path",
    "why_missing",
    "MARKER",
    "claim_folder",
    "release_folder",
    "owned_files",
    "record_files",
    "check_output_path",
    "output_file",
    "write_output",
    "append_output",
    "database_refusal",
    "output_child",
    "plain_name",
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
    write_output(folder / MARKER, json.dumps(data, ensure_ascii=False) + "\n", "the marker")


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
    _check_folder(folder, option)
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


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _standing(path: Path) -> str | None:
    """What stands at ``path`` that is not a regular file (``None``: nothing, or a regular
    file). The path's last part is not followed: a link is a link."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"something that cannot be examined ({error.strerror or error})"
    if stat.S_ISLNK(mode):
        try:
            os.stat(path)
        except OSError as error:
            if error.errno == errno.ELOOP:
                return "a symbolic link that loops"
            return f"a symbolic link to {os.readlink(path)!r}, which does not exist"
        return f"a symbolic link to {os.readlink(path)!r}"
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def check_output_path(
    path: str | os.PathLike[str], option: str, *, folder_exists: bool = True
) -> Path:
    """``path`` as a :class:`Path` when a command may write a file there: nothing stands
    there yet, or a regular file (which the command replaces), and (``folder_exists``) its
    folder exists. Anything else is refused with ``option`` (how the user named the path)
    and what stands there; a command calls this before any work so the refusal costs
    nothing."""
    target = Path(path)
    standing = _standing(target)
    if standing is not None:
        raise InputError(
            f"{option}: {standing} stands there; genir-eval writes only regular files it "
            "creates, never through a device, a pipe, a socket or a link; give the path of "
            "a new or regular file",
            path=str(target),
        )
    parent = target.parent
    if folder_exists and not os.path.isdir(parent):
        raise InputError(
            f"{option}: its folder {str(parent)!r} does not exist "
            f"({why_missing(parent, 'folder')})",
            path=str(target),
        )
    return target


def _check_folder(folder: Path, option: str) -> None:
    """An output folder must be a folder or absent; a link to a folder is followed (a
    user's layout), a link that loops or leads nowhere and a file are refused."""
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        if os.path.islink(folder):
            raise InputError(
                f"{option}: a symbolic link to {os.readlink(folder)!r}, which does not "
                "exist; give a folder",
                path=str(folder),
            ) from None
        return
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise InputError(
                f"{option}: a symbolic link that loops stands there; give a folder",
                path=str(folder),
            ) from None
        raise InputError(
            f"{option}: cannot use it as a folder ({error.strerror or error})", path=str(folder)
        ) from None
    if not stat.S_ISDIR(mode):
        raise InputError(
            f"{option}: {_standing(folder) or 'a file'} stands there, not a folder; give a folder",
            path=str(folder),
        )


@overload
def output_file(
    path: str | os.PathLike[str],
    option: str,
    *,
    binary: Literal[False] = ...,
    before_rename: Callable[[Path], None] | None = ...,
) -> contextlib.AbstractContextManager[IO[str]]: ...
@overload
def output_file(
    path: str | os.PathLike[str],
    option: str,
    *,
    binary: Literal[True],
    before_rename: Callable[[Path], None] | None = ...,
) -> contextlib.AbstractContextManager[IO[bytes]]: ...
def output_file(
    path: str | os.PathLike[str],
    option: str,
    *,
    binary: bool = False,
    before_rename: Callable[[Path], None] | None = None,
) -> contextlib.AbstractContextManager[IO[Any]]:
    """A handle on a fresh temporary file beside ``path`` (``.NAME.<pid>.<random>.tmp``,
    created with ``O_EXCL``, so never through anything already there), renamed onto ``path``
    when the block ends without an error and removed when it raises. ``path`` is checked
    (:func:`check_output_path`) before the temporary file is made and again before the
    rename. ``before_rename`` sees the complete temporary file (to take its digest)."""
    return _output_file(Path(path), option, binary, before_rename)


@contextlib.contextmanager
def _output_file(
    target: Path, option: str, binary: bool, before_rename: Callable[[Path], None] | None
) -> Iterator[IO[Any]]:
    check_output_path(target, option)
    name = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        # mode 0o666 so the umask applies as to any file (mkstemp's 0o600 would make the
        # outputs private)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    except OSError as error:
        raise InputError(
            f"{option}: cannot write there: {error.strerror or error}", path=str(target)
        ) from error  # the cause: what check_writable_folder reports of its folder
    try:
        with open(fd, "wb" if binary else "w", **({} if binary else _TEXT)) as handle:
            yield handle
        if before_rename is not None:
            before_rename(name)
        check_output_path(target, option)
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_TEXT: dict[str, Any] = {"encoding": "utf-8", "newline": ""}


def write_output(path: str | os.PathLike[str], content: str | bytes, option: str) -> None:
    """Write ``content`` (UTF-8 text or bytes) to ``path`` through :func:`output_file`."""
    if isinstance(content, bytes):
        with output_file(path, option, binary=True) as binary:
            binary.write(content)
    else:
        with output_file(path, option) as text:
            text.write(content)


def database_refusal(path: str | os.PathLike[str]) -> str | None:
    """What stands at ``path`` that an SQLite file (a cache, a journal) must not be opened
    or created through: a device, a FIFO, a socket, a link that loops (``None`` when nothing
    stands there, a regular file does, or a link to one: a user's layout; a path SQLite
    cannot open for another reason is left for it to report)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        return "a symbolic link that loops" if error.errno == errno.ELOOP else None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None  # a folder is reported by the store as it always was
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


@contextlib.contextmanager
def append_output(path: str | os.PathLike[str], option: str) -> Iterator[IO[str]]:
    """A text handle appending to ``path``, a regular file this command created earlier
    (through :func:`output_file`): a link put there since is not followed
    (``O_NOFOLLOW``) and anything but a regular file is refused."""
    target = Path(path)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | _NOFOLLOW)
    except OSError as error:
        raise InputError(
            f"{option}: cannot append to it: {_standing(target) or error.strerror or error}",
            path=str(target),
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{option}: not a regular file any more", path=str(target))
    with open(fd, "a", **_TEXT) as handle:
        yield handle


def plain_name(name: str, what: str) -> str:
    """``name`` when it can be one file or folder name inside an output folder: not empty,
    not ``.`` or ``..``, no path separator, no control character; refused otherwise with
    ``what`` (where the name comes from, e.g. ``"name"`` for a scenario's)."""
    problem = None
    if name in ("", ".", ".."):
        problem = "is not a name a file can have"
    elif "/" in name or "\\" in name:
        problem = "holds a path separator"
    elif UNSAFE.search(name):
        problem = "holds a control or bidirectional control character"
    if problem:
        raise InputError(
            f"{what}: {name!r} {problem}; it names a file or folder inside the output "
            "folder, so it must be one plain name (letters, digits, '-', '_', '.')"
        )
    return name


def output_child(folder: Path, relative: str | os.PathLike[str], option: str) -> Path:
    """``folder / relative`` when that stays inside ``folder``: ``relative`` is not
    absolute, has no ``..`` part, and no link on the way leads out of the folder."""
    parts = Path(relative).parts
    if Path(relative).is_absolute() or ".." in parts or not parts:
        raise InputError(
            f"{option}: {str(relative)!r} would be written outside the output folder",
            path=str(folder),
        )
    child = folder.joinpath(*parts)
    inside = os.path.realpath(folder)
    reached = os.path.realpath(child.parent)
    if os.path.commonpath([inside, reached]) != inside:
        raise InputError(
            f"{option}: {str(relative)!r} leads outside the output folder (through a link)",
            path=str(folder),
        )
    return child
