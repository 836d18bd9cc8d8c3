"""Errors that reach the user as one clear line instead of a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "GenirError",
    "InputError",
    "ConfigError",
    "StorageError",
    "ClusterError",
    "RunFailed",
    "EXIT_CODES",
    "closest_name",
    "did_you_mean",
]

#: The exit codes of every command.
EXIT_CODES = {
    "ok": 0,
    "regression": 1,  # compare: a metric got worse
    "input": 2,  # bad input, an invalid setting, a storage or cluster fault
    "run_failed": 3,  # too many labels missing, a permanent provider error, an early stop
    "undecided": 4,  # compare: no regression, but too few sessions to call it a pass
    "internal": 5,  # an unexpected error of genir-eval itself: never a decision
}


class GenirError(Exception):
    """Base class: the CLI prints ``str(error)`` and exits with ``exit_code``."""

    exit_code = 2


class InputError(GenirError):
    """Bad input data, located by file, row (or line) and column (or field)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.row = row
        self.line = line
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class ConfigError(GenirError):
    """An invalid scenario or option, named by its key and what was expected."""


class StorageError(GenirError):
    """A file genir-eval writes or keeps (cache, journal, run folder) cannot be used: the
    message names the file, what happened and what to do."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.message = message
        self.path = path
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ClusterError(GenirError):
    """The Ray cluster a run judges on failed during the run (a node or the run's
    coordinator lost for good): the message says what is kept and how to resume."""


class RunFailed(GenirError):
    """A run that ended (its outputs written) with too many labels missing or with a
    permanent provider error: exit code 3, so a script never mistakes it for a success."""

    exit_code = 3


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The name of ``known`` a user most likely meant by the unknown ``name``, or ``None``.

    Never ``name`` itself (it was refused, so it is not what they meant; ``Spans`` gives
    ``spans``).
    A name that ``name`` begins, or that begins with ``name`` (``sdcg`` -> ``sdcg_urge``), comes
    first, the shortest such; else the closest by difflib's ratio (at least 0.6), which ranks
    ``rsdcg_urge`` near ``sdcg`` but should not win over a name it begins."""
    lowered = name.lower()
    by_lower = {k.lower(): k for k in known if k != name}
    prefixed = [k for k in by_lower if k.startswith(lowered) or lowered.startswith(k)]
    if prefixed and len(lowered) >= 3:
        return by_lower[min(prefixed, key=lambda k: (abs(len(k) - len(lowered)), k))]
    close = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` naming :func:`closest_name`, or ``""`` when none is close."""
    close = closest_name(name, known)
    return f" (did you mean {close!r}?)" if close is not None else ""
