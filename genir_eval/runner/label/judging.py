"""``POST /api/judge``: a session judged by a named scenario's judges, its labels and scores
returned (the run is made in a temporary folder and read back, as ``genir-eval run`` does)."""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest.jsonl import read_jsonl
from genir_eval.paths import write_output
from genir_eval.runner.run import Overrides, run_scenario

__all__ = ["judge_session"]

_ONE_AT_A_TIME = threading.Lock()


def judge_session(scenario: Path, session: Mapping[str, Any]) -> dict[str, Any]:
    """Judge one canonical-JSONL ``session`` with ``scenario``'s judges; raises
    :class:`~genir_eval.errors.InputError` naming the field when the session is not valid."""
    with tempfile.TemporaryDirectory(prefix="genir-judge-") as folder:
        path = Path(folder) / "session.jsonl"
        write_output(path, json.dumps(session, ensure_ascii=False) + "\n", "the session")
        loaded = read_jsonl(path).sessions
        if len(loaded) != 1:
            raise InputError("session: expected one session")
        with _ONE_AT_A_TIME:
            run = run_scenario(
                scenario,
                out_dir=Path(folder) / "run",
                sessions=loaded,
                overrides=Overrides(cache="none", journal="none"),
            )
        return {
            "version": 1,
            "session_id": loaded[0].session_id,
            "links": [_row(r, "labels") for r in run.iter_rows("links")],
            "citations": [_row(r, "support") for r in run.iter_rows("citations")],
            "turns": [_row(r, "scores") for r in run.iter_rows("turns")],
            "session": [_row(r, "scores") for r in run.iter_rows("sessions")],
        }


def _row(row: Mapping[str, Any], what: str) -> dict[str, Any]:
    keep = ("session_id", "turn", "link_id", "statement", "judge", what, "value", "missing")
    return {k: row[k] for k in keep if k in row}
