"""``load_run``, the public way in to a finished run: its record, or its tables as pandas
DataFrames (read from a Parquet export, or built from the run folder itself)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from genir_eval.rundir.folder import Run
from genir_eval.rundir.folder import load_run as _load_record

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["load_run"]

#: the file a Parquet export folder holds beside its tables (genir_eval/runner/export/parquet.py)
_EXPORT_SCHEMA = "schema.json"
_RUN_FILE = "run.json"


@overload
def load_run(directory: str | os.PathLike[str], *, tables: Literal[False] = ...) -> Run: ...
@overload
def load_run(
    directory: str | os.PathLike[str], *, tables: Literal[True]
) -> dict[str, pd.DataFrame]: ...
def load_run(
    directory: str | os.PathLike[str], *, tables: bool = False
) -> Run | dict[str, pd.DataFrame]:
    """A finished run.

    - A run folder (``genir-eval run``): its :class:`Run` record, every file checked against
      ``run.json``'s digests; with ``tables=True``, its ``sessions``, ``turns``, ``links``
      and ``judgments`` tables as pandas DataFrames, by name, with the columns and types of
      the Parquet export (``docs/guide/traces.md``).
    - A Parquet export folder (``genir-eval export RUN_DIR --format parquet -o FOLDER``):
      its tables as DataFrames, by name, its schema version checked (``tables`` is implied).

    The DataFrames need the ``tables`` extra (pandas and pyarrow); without it a
    :class:`~genir_eval.errors.ConfigError` says so.
    """
    folder = Path(directory)
    is_export = (folder / _EXPORT_SCHEMA).is_file() and not (folder / _RUN_FILE).exists()
    if is_export:
        from genir_eval.runner.export.parquet import load_tables

        return load_tables(folder)
    record = _load_record(folder)
    if not tables:
        return record
    from genir_eval.runner.export.parquet import run_tables

    return run_tables(record)
