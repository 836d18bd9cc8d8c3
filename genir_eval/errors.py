"""Errors that reach the user as one clear line instead of a traceback."""

from __future__ import annotations

__all__ = ["GenirError", "InputError", "ConfigError"]


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
