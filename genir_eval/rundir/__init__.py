"""The run folder: what a run writes and how it is read back, a module of its own.

:mod:`~genir_eval.rundir.folder` holds the format (the table rows, the writer, the reader
that checks every file against ``run.json``'s digests) and :mod:`~genir_eval.rundir.status`
the run's status (its verdict from its failures, label counts and engines). The runner writes
run folders with it; the report, ``compare`` and ``assert_run`` read them with it. It imports
nothing of genir-eval but the base modules.
"""

from genir_eval.rundir.folder import (
    OUTPUT_VERSION,
    CitationRow,
    LinkRow,
    Run,
    RunWriter,
    SessionRow,
    TurnRow,
    load_run,
    write_run,
)
from genir_eval.rundir.status import failure_lines, raise_if_failed, run_status

__all__ = [
    "OUTPUT_VERSION",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "CitationRow",
    "Run",
    "RunWriter",
    "write_run",
    "load_run",
    "run_status",
    "failure_lines",
    "raise_if_failed",
]
