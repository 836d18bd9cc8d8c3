"""Checking a run folder before it is read: every file against ``run.json``'s digests, the
status against the failures and label counts it states, and a folder's writability before a run
starts."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genir_eval.errors import InputError, StorageError
from genir_eval.paths import why_missing
from genir_eval.rundir.files import _iter_jsonl, _temporary, file_digest
from genir_eval.rundir.rows import FAILURES_FILE, RUN_FILE, RUN_FILES

if TYPE_CHECKING:
    pass


__all__ = [
    "check_writable_folder",
]


def _check_files(out: Path, info: Mapping[str, Any]) -> None:
    """``run.json``'s status, when it has one, says whether the run succeeded, and it lists
    exactly the run's files: every file a run writes (:data:`RUN_FILES`) that is in the
    folder, each there with the same SHA-256, and nothing else."""
    status = info.get("status")
    if status is not None and (
        not isinstance(status, Mapping) or not isinstance(status.get("ok"), bool)
    ):
        # a status of another shape ("ok": "false") would let a failed run pass for a result
        raise InputError(
            "'status' is not an object with 'ok': true or false; run again",
            path=str(out / RUN_FILE),
        )
    files = info.get("files")
    if not isinstance(files, Mapping) or not files:
        raise InputError(
            "'files' is not an object of file names and their SHA-256; not a run genir-eval "
            "wrote; run again",
            path=str(out / RUN_FILE),
        )
    for name, digest in files.items():
        if not isinstance(name, str) or Path(name).name != name or name in (".", ".."):
            raise InputError(
                f"run.json lists {name!r}, which is not a file of its folder; run again",
                path=str(out / RUN_FILE),
            )
        if name not in RUN_FILES:
            raise InputError(
                f"run.json lists {name!r}, which is not a file a run writes (run.json edited "
                "after the run?); run again",
                path=str(out / RUN_FILE),
            )
        path = out / name
        if not path.is_file():
            raise InputError(
                f"run.json lists {name}, which is missing: not a complete run; run again",
                path=str(out),
            )
        if file_digest(path) != digest:
            raise InputError(
                f"{name} does not belong to this run.json (changed after the run, or written "
                "by another run into the same folder); run again",
                path=str(out),
            )
    for name in sorted(RUN_FILES - set(files)):
        if (out / name).exists():
            # a table edited and dropped from the list would otherwise be read unchecked
            raise InputError(
                f"{name} is in the folder but run.json does not list it (added or changed "
                "after the run, or left by another run); run again",
                path=str(out),
            )


def _count_failures(out: Path, info: Mapping[str, Any]) -> Counter[str]:
    """The run's missing judgments by judge: from ``failures.jsonl`` when the run wrote one,
    else from ``run.json``'s list."""
    files = info.get("files")
    if isinstance(files, Mapping) and FAILURES_FILE in files:
        rows: Iterable[Any] = _iter_jsonl(out / FAILURES_FILE)
        where = out / FAILURES_FILE
    else:
        rows = info.get("failures") or []
        where = out / RUN_FILE
        if not isinstance(rows, list):
            raise InputError("'failures' is not a list; run again", path=str(where))
    counts: Counter[str] = Counter()
    for number, row in enumerate(rows, start=1):
        judge = row.get("judge") if isinstance(row, Mapping) else None
        if not isinstance(judge, str):
            raise InputError(
                f"failure {number} has no judge; not a run genir-eval wrote; run again",
                path=str(where),
            )
        counts[judge] += 1
    return counts


def _label_counts(info: Mapping[str, Any], missing: Counter[str]) -> dict[str, dict[str, int]]:
    """Each judge's labels (``run.json``'s count, checked as the folder was read) and missing
    labels (counted from the run's failures)."""
    return {
        str(judge["id"]): {"labels": int(judge["labels"]), "missing": missing[str(judge["id"])]}
        for judge in info.get("judges") or []
        if isinstance(judge, Mapping)
    }


def _check_status(out: Path, info: Mapping[str, Any]) -> None:
    """The verdict comes from the run's contents, not from its flag: the status is worked out
    again from the run's own failures, label counts and engines with the threshold it ran
    with (:func:`genir_eval.rundir.status.run_status`), and a ``run.json`` whose stated
    status, label counts or failure total disagree with them is refused."""
    from genir_eval.rundir.status import run_status

    where = str(out / RUN_FILE)
    status = info.get("status")
    judges = info.get("judges")
    missing = _count_failures(out, info)
    if status is None:
        if missing or info.get("failures_total"):
            raise InputError(
                "run.json lists missing judgments but no 'status': not a run genir-eval "
                "wrote, or edited after the run; run again",
                path=where,
            )
        return  # rows written without a judgment missing (write_run): nothing failed
    assert isinstance(status, Mapping)  # _check_files checked its shape
    max_missing = status.get("max_missing")
    allow_permanent = status.get("allow_permanent")
    if (
        isinstance(max_missing, bool)
        or not isinstance(max_missing, (int, float))
        or not 0 <= max_missing <= 1
        or not isinstance(allow_permanent, bool)
    ):
        raise InputError(
            "'status' lacks the threshold the run ran with ('max_missing' in [0, 1], "
            "'allow_permanent' true or false); run again",
            path=where,
        )
    engines = info.get("engines") or []
    if (
        not isinstance(judges, list)
        or not isinstance(engines, list)
        or not all(isinstance(e, Mapping) for e in engines)
    ):
        raise InputError("'judges' or 'engines' is not a list of objects; run again", path=where)
    counts: dict[str, dict[str, int]] = {}
    for judge in judges:
        name = judge.get("id") if isinstance(judge, Mapping) else None
        labels = judge.get("labels") if isinstance(judge, Mapping) else None
        if not isinstance(name, str):
            raise InputError(f"a judge without an id: {judge!r}; run again", path=where)
        if isinstance(labels, bool) or not isinstance(labels, int) or labels < missing[name]:
            raise InputError(
                f"judge {name!r}: its label count {labels!r} is not a whole number at least "
                f"its {missing[name]} failures; run.json edited after the run? run again",
                path=where,
            )
        stated = judge.get("missing")
        if stated != missing[name]:
            raise InputError(
                f"judge {name}: run.json says {stated!r} labels missing, the run's failures "
                f"list {missing[name]}; run.json edited after the run? run again",
                path=where,
            )
        counts[name] = {"labels": labels, "missing": missing[name]}
    unknown = sorted(set(missing) - set(counts))
    if unknown:
        raise InputError(
            f"failures of judge {unknown[0]!r}, which run.json does not list; run again",
            path=where,
        )
    total = info.get("failures_total")
    if total is not None and total != sum(missing.values()):
        raise InputError(
            f"run.json says {total!r} judgments missing, its failures list "
            f"{sum(missing.values())}; run again",
            path=where,
        )
    verdict = run_status(
        counts, (), engines, max_missing=float(max_missing), allow_permanent=allow_permanent
    )
    if verdict["ok"] != status["ok"] or verdict["reasons"] != status.get("reasons"):
        said = "succeeded" if status["ok"] else "failed"
        if verdict["ok"] == status["ok"]:
            said += " for other reasons"
        why = "; ".join(verdict["reasons"]) or "no judge over its threshold, no engine stopped"
        raise InputError(
            f"run.json says the run {said}, but its own failures say otherwise ({why}); "
            "edited after the run? its scores are not a result; run again",
            path=where,
        )


def check_writable_folder(folder: Path, what: str) -> None:
    """Create ``folder`` if needed and write and remove a small file in it, so a read-only
    or full folder is reported before any paid call rather than after all of them."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _temporary(folder / ".genir-eval-write-check") as handle:
            handle.write("genir-eval checks that it can write here\n")
        (folder / ".genir-eval-write-check").unlink()
    except InputError as error:
        # output_file refuses the check's file it could not create, its OSError the cause:
        # the folder is what the user chose and can change, not the check's hidden file
        if not isinstance(error.__cause__, OSError):
            raise
        raise _unwritable(folder, what, error.__cause__) from None
    except OSError as error:
        raise _unwritable(folder, what, error) from None


def _unwritable(folder: Path, what: str, error: OSError) -> StorageError:
    dangling = os.path.islink(folder) and not os.path.exists(folder)
    problem = why_missing(folder, "folder") if dangling else error.strerror
    return StorageError(
        f"cannot write to {what}: {problem or error}; choose another folder "
        "(--out DIR) or make this one writable",
        path=str(folder),
    )
