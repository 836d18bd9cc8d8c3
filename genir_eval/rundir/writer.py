"""Writing a run folder: :func:`write_run` for tables held in memory, :class:`RunWriter` for
rows streamed window by window into part files renamed into place at the end."""

from __future__ import annotations

import contextlib
import csv as csv_module
import json
import os
import secrets
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genir_eval.paths import real_path
from genir_eval.rundir.files import (
    _flatten,
    _replace,
    _temporary,
    csv_cell,
    file_digest,
    write_json,
    write_text_atomic,
)
from genir_eval.rundir.rows import (
    EVIDENCE_FILE,
    FAILURES_FILE,
    JUDGE_FILES,
    META_FILE,
    OUTPUT_VERSION,
    REPEATS_FILE,
    REPORT_FILE,
    RUN_FILE,
    RUN_FILES,
    TABLES,
    CitationRow,
    LinkRow,
    SessionRow,
    TableName,
    TurnRow,
    citation_row_to_dict,
    link_row_to_dict,
    session_row_to_dict,
    turn_row_to_dict,
)
from genir_eval.rundir.run import Run
from genir_eval.stale import remove_stale_parts

if TYPE_CHECKING:
    pass


__all__ = [
    "write_run",
    "RunWriter",
]


def write_run(
    directory: str | os.PathLike[str],
    *,
    links: Sequence[LinkRow],
    turns: Sequence[TurnRow],
    sessions: Sequence[SessionRow],
    meta: Mapping[str, Any] | None,
    info: Mapping[str, Any],
    csv: bool = True,
    report: Callable[[Run], str] | None = None,
    citations: Sequence[CitationRow] = (),
    evidence: Iterable[Mapping[str, Any]] | None = None,
) -> Path:
    """Write a run folder from rows already in memory, through :class:`RunWriter`: the
    tables (JSONL and, unless ``csv=False``, CSV), ``evidence.jsonl`` (when
    given: rows of :func:`genir_eval.report.evidence.evidence_rows`), ``meta.json`` (when
    given), ``report.html`` (rendered by ``report`` from the run as written) and
    ``run.json``; ``citations.jsonl`` only when there are citation rows.

    ``run.json`` is the completion marker: it is removed before anything else is written and
    written last, listing the SHA-256 of every file of the run (``files``), so a folder is
    either a finished run whose files belong together or, to :func:`load_run`, clearly not
    one (a killed re-run, two runs writing into one folder).
    """
    writer = RunWriter(directory, csv=csv, evidence=evidence is not None)
    try:
        writer.add(
            links=links,
            turns=turns,
            sessions=sessions,
            citations=citations,
            evidence=evidence if evidence is not None else (),
        )
        writer.finish(meta=meta, info=info, report=report)
    except BaseException:
        writer.abort()
        raise
    return Path(directory)


class _Part:
    """Rows appended to a part file beside ``name`` (a unique name, renamed or removed at
    the end)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / f".{name}.{os.getpid()}.{secrets.token_hex(6)}.part"
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self.handle = open(fd, "w", encoding="utf-8")  # closed by finish() or abort()
        self.rows = 0

    def write(self, row: Mapping[str, Any]) -> None:
        self.handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        self.rows += 1


class _Table:
    """One table being written: JSONL rows go to a part file as they come; the CSV columns
    (fixed columns, then every key in first-seen order) are gathered on the way."""

    def __init__(self, directory: Path, name: str) -> None:
        self.name = name
        self.file, self.base = TABLES[name]
        self.part_file = _Part(directory, self.file)
        self.part, self.handle = self.part_file.path, self.part_file.handle
        self.columns: dict[str, None] = dict.fromkeys(self.base)
        self.first_scores_end: int | None = None  # column after the first row's scores
        self.rows = 0

    def write(self, row: Mapping[str, Any]) -> None:
        self.handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        for key in _flatten(row):
            self.columns.setdefault(key, None)
            if self.rows == 0 and key.startswith("score:"):
                # a score added to every row at the end goes after the first row's scores
                self.first_scores_end = list(self.columns).index(key) + 1
        if self.rows == 0 and self.first_scores_end is None:
            self.first_scores_end = len(self.columns)
        self.rows += 1


def _csv_value(value: Any) -> Any:
    return "" if value is None else csv_cell(value)


class RunWriter:
    """Writes a run directory as its rows come, in memory that does not grow with the rows.

    ``add(links=..., turns=..., sessions=...)`` appends rows (records or dicts) to part
    files beside the tables; :meth:`finish` makes the tables in one more streaming pass:
    each row may be amended by ``amend(table, row)`` (scores that need every row first, as
    z-score combinations do), JSONL and CSV are written through unique temporary names and
    renamed into place, then ``meta.json``, ``report.html`` and ``run.json`` last with the
    SHA-256 of every file (:func:`write_run` is this writer given every row at once).
    ``run.json`` is removed when the writer is created, so an
    interrupted run never looks finished; :meth:`abort` removes the part files.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        csv: bool = True,
        evidence: bool = False,
        failures: bool = False,
    ) -> None:
        self.directory = real_path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            (self.directory / RUN_FILE).unlink()
        # what a killed run left here (its table parts, half-written files) goes now
        self.removed_stale = remove_stale_parts(self.directory, {*RUN_FILES, RUN_FILE})
        self.csv = csv
        self._tables = {name: _Table(self.directory, name) for name in TABLES}
        # evidence.jsonl (rows of genir_eval.report.evidence.evidence_rows), when kept
        self._evidence = _Part(self.directory, EVIDENCE_FILE) if evidence else None
        # failures.jsonl (the missing judgments), when the caller streams them here rather
        # than listing them all in run.json
        self._failures = _Part(self.directory, FAILURES_FILE) if failures else None

    def rows(self, table: TableName) -> int:
        """Rows written so far to ``table``."""
        return self._tables[table].rows

    def add(
        self,
        *,
        links: Iterable[LinkRow | Mapping[str, Any]] = (),
        turns: Iterable[TurnRow | Mapping[str, Any]] = (),
        sessions: Iterable[SessionRow | Mapping[str, Any]] = (),
        citations: Iterable[CitationRow | Mapping[str, Any]] = (),
        evidence: Iterable[Mapping[str, Any]] = (),
        failures: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        if self._evidence is not None:
            for row in evidence:
                self._evidence.write(row)
        if self._failures is not None:
            for row in failures:
                self._failures.write({"version": OUTPUT_VERSION, **row})
        parts: tuple[tuple[str, Iterable[Any], Callable[[Any], dict[str, Any]]], ...] = (
            ("links", links, link_row_to_dict),
            ("turns", turns, turn_row_to_dict),
            ("sessions", sessions, session_row_to_dict),
            ("citations", citations, citation_row_to_dict),
        )
        for name, rows, to_dict in parts:
            table = self._tables[name]
            for row in rows:
                table.write(row if isinstance(row, Mapping) else to_dict(row))

    def finish(
        self,
        *,
        meta: Mapping[str, Any] | None,
        info: Mapping[str, Any],
        amend: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
        extra_scores: Mapping[str, Sequence[str]] | None = None,
        report: Callable[[Run], str] | None = None,
        judge_files: Collection[str] = (),
        repeats: Sequence[Mapping[str, Any]] | None = None,
    ) -> Run:
        """Write the tables, ``meta.json`` (or remove a stale one), ``report.html`` (when
        ``report`` renders it) and ``run.json``; returns the run.

        ``extra_scores`` names, per table, the scores ``amend`` adds to every row (their CSV
        columns follow the first row's own scores). ``judge_files`` names the files this
        run's judges wrote into the folder themselves (:data:`JUDGE_FILES`): they are listed
        with their digests, and any other of those files, an earlier run's, is removed.
        ``repeats``: the rows of ``repeats.jsonl`` (a run with ``--repeats``; each carries
        ``version``), else an earlier run's file is removed."""
        out = self.directory
        written: list[str] = []
        digests: dict[str, str] = {}
        for table in self._tables.values():
            table.handle.close()
            if table.name == "citations" and not table.rows:
                # no citation judge: no citations table (nor a stale one)
                table.part.unlink()
                for stale in (table.file, table.file.replace(".jsonl", ".csv")):
                    with contextlib.suppress(FileNotFoundError):
                        (out / stale).unlink()
                continue
            added = [f"score:{n}" for n in (extra_scores or {}).get(table.name, ())]
            columns = list(table.columns)
            at = table.first_scores_end if table.first_scores_end is not None else len(columns)
            columns[at:at] = [c for c in added if c not in table.columns]
            written.extend(self._rewrite(table, columns, amend, digests))
        for part, name in ((self._evidence, EVIDENCE_FILE), (self._failures, FAILURES_FILE)):
            if part is not None:
                part.handle.close()
                _replace(part.path, out / name, digests)
                written.append(name)
            else:  # not kept by this run: a stale one from an earlier run must not linger
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
        for name in sorted(JUDGE_FILES):
            if name in judge_files and (out / name).is_file():
                digests[name] = file_digest(out / name)
                written.append(name)
            else:  # an earlier run's: this run's judges did not write it
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
        if repeats is not None:
            text = "".join(
                json.dumps({"version": OUTPUT_VERSION, **row}, ensure_ascii=False, allow_nan=False)
                + "\n"
                for row in repeats
            )
            write_text_atomic(out / REPEATS_FILE, text, digests)
            written.append(REPEATS_FILE)
        else:  # an earlier run's repeats must not pass for this run's
            with contextlib.suppress(FileNotFoundError):
                (out / REPEATS_FILE).unlink()
        meta_path = out / META_FILE
        if meta is not None:
            write_json(meta_path, meta, digests)
            written.append(META_FILE)
        else:
            # a stale meta-evaluation from an earlier run must not linger
            with contextlib.suppress(FileNotFoundError):
                meta_path.unlink()
        if report is not None:
            # the report sees the run as load_run will read it back (meta as JSON reads it)
            run = Run(
                directory=out,
                meta=json.loads(json.dumps(meta)) if meta is not None else None,
                info={**info, "files": {name: digests[name] for name in written}},
            )
            write_text_atomic(out / REPORT_FILE, report(run), digests)
            written.append(REPORT_FILE)
        else:  # an earlier run's report must not linger beside this run's tables
            with contextlib.suppress(FileNotFoundError):
                (out / REPORT_FILE).unlink()
        files = {name: digests[name] for name in written}
        write_json(out / RUN_FILE, {**info, "files": files})
        return Run(directory=out, meta=meta, info={**info, "files": files})

    def _rewrite(
        self,
        table: _Table,
        columns: list[str],
        amend: Callable[[str, dict[str, Any]], dict[str, Any]] | None,
        digests: dict[str, str],
    ) -> list[str]:
        """The table's JSONL (the part file itself, renamed, when no row is amended) and
        its CSV, in one pass over the part file (read before it is renamed, so the CSV is
        built from this writer's rows)."""
        jsonl_path = self.directory / table.file
        csv_path = jsonl_path.with_name(table.file.replace(".jsonl", ".csv"))
        with contextlib.ExitStack() as stack:
            source = stack.enter_context(table.part.open(encoding="utf-8"))
            jsonl = (
                stack.enter_context(_temporary(jsonl_path, digests)) if amend is not None else None
            )
            writer = None
            if self.csv:
                handle = stack.enter_context(_temporary(csv_path, digests))
                writer = csv_module.writer(handle)
                writer.writerow([csv_cell(c) for c in columns])
            if jsonl is not None or writer is not None:
                for text in source:
                    row = json.loads(text)
                    if jsonl is not None and amend is not None:
                        row = amend(table.name, row)
                        jsonl.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
                    if writer is not None:
                        flat = _flatten(row)
                        writer.writerow([_csv_value(flat.get(c)) for c in columns])
        if amend is None:
            _replace(table.part, jsonl_path, digests)
        else:
            table.part.unlink()
        if self.csv:
            return [table.file, csv_path.name]
        with contextlib.suppress(FileNotFoundError):
            csv_path.unlink()
        return [table.file]

    def abort(self) -> None:
        """Remove the part files (the run stopped before :meth:`finish`)."""
        for part in [*(t.part_file for t in self._tables.values()), self._evidence, self._failures]:
            if part is not None:
                # closing flushes: on a full disk that fails too, and the part goes all the same
                with contextlib.suppress(OSError):
                    part.handle.close()
                with contextlib.suppress(FileNotFoundError):
                    part.path.unlink()
