"""Reading a run folder back: :func:`load_run`, which verifies it first."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from genir_eval.errors import InputError
from genir_eval.paths import real_path, why_missing
from genir_eval.rundir.files import _iter_jsonl, _read_json
from genir_eval.rundir.rows import (
    CITATIONS_FILE,
    LINKS_FILE,
    META_FILE,
    RUN_FILE,
    SESSIONS_FILE,
    TURNS_FILE,
    _citation_row_from_dict,
    _link_row_from_dict,
    _session_row_from_dict,
    _turn_row_from_dict,
)
from genir_eval.rundir.run import Run
from genir_eval.rundir.verify import _check_files, _check_status

if TYPE_CHECKING:
    pass


__all__ = [
    "load_run",
]


def load_run(directory: str | os.PathLike[str]) -> Run:
    """Read a run directory written by :func:`write_run` (``genir-eval run``).

    Refuses, naming the folder and the file, a folder that is not a finished run: no
    ``run.json`` (never written, or a re-run that stopped before the end), or a file whose
    SHA-256 differs from the one ``run.json`` lists (written by another run). Every row is
    checked in one streaming pass (valid JSON, known version, the fields its record needs);
    the tables themselves are read again when first used, from the folder's absolute path.
    """
    out = real_path(directory)
    if not out.is_dir():
        raise InputError(
            why_missing(out, "folder") if not out.exists() else "not a folder (a run is a folder)",
            path=str(out),
        )
    if not (out / RUN_FILE).is_file():
        raise InputError(
            f"not a finished run directory (no {RUN_FILE}: never run, or a run that stopped "
            "before writing everything); run `genir-eval run` again",
            path=str(out),
        )
    for name in (LINKS_FILE, TURNS_FILE, SESSIONS_FILE):
        if not (out / name).is_file():
            raise InputError(f"run directory is missing {name}", path=str(out))
    info = _read_json(out / RUN_FILE)
    _check_files(out, info)
    _check_status(out, info)
    meta_path = out / META_FILE
    readers: tuple[tuple[str, Callable[[Mapping[str, Any]], Any]], ...] = (
        (LINKS_FILE, _link_row_from_dict),
        (TURNS_FILE, _turn_row_from_dict),
        (SESSIONS_FILE, _session_row_from_dict),
        (CITATIONS_FILE, _citation_row_from_dict),
    )
    try:
        for name, read in readers:
            if (out / name).is_file():
                for row in _iter_jsonl(out / name):
                    read(row)
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"malformed row: {error}", path=str(out)) from None
    return Run(
        directory=out,
        meta=_read_json(meta_path) if meta_path.is_file() else None,
        info=info,
    )
