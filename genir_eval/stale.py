"""The part and temporary files a killed writer leaves, and removing them.

A run's tables are written to ``.NAME.<pid>.<random>.part`` files and every atomic write
(a run's JSON and CSV, a ``parse``'s output) to ``.NAME.<pid>.<random>.tmp``, renamed into
place at the end. A writer killed before that leaves them behind; the next writer into the
same place calls :func:`remove_stale_parts`. Kept apart from the run folder's module so that
``genir-eval parse`` imports nothing of the runner or the report.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["remove_stale_parts"]

# a writer's private file beside NAME: ".NAME.<pid>.<random>.part" (RunWriter's tables) or
# ".NAME.<pid>.<random>.tmp" (an atomic write, a parse's output)
_PRIVATE = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[0-9A-Za-z_]+\.(?:part|tmp)")


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or a pid we cannot ask about: leave it
    return True


def remove_stale_parts(folder: Path, names: Iterable[str]) -> list[str]:
    """Remove the part and temporary files that a killed writer left beside ``names`` in
    ``folder`` (a killed run's table parts, a killed ``parse``'s output): those whose writer,
    the process id in their name, is no longer running. Another writer's files in the same
    folder are left alone while it runs. Returns the names removed."""
    wanted = set(names)
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _PRIVATE.fullmatch(entry.name)
        if match is None or match["name"] not in wanted or _running(int(match["pid"])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.name)
    return sorted(removed)
