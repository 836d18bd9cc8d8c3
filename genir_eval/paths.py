"""Paths given by the user, resolved without surprises.

``Path.resolve()`` raises ``RuntimeError("Symlink loop ...")`` (before Python 3.13) for a
path that is a symbolic link to itself, a traceback instead of an error message.
:func:`real_path` resolves as far as the links go and leaves the rest to the code that
opens the file, which reports an ``OSError`` (ELOOP) in one line; :func:`why_missing` says
what is really there when a file or folder is not.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["real_path", "why_missing"]


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
