"""A run folder read once into columns the viewer pages, filters and sorts in memory.

The session table becomes one float array per column (each score, the users' satisfaction,
the failed and missing judgments, each judge's disagreement with people), the session ids,
task types and the queries and answers as lists, and each session's rows in the other files
as byte offsets, so a session page reads back only its own lines. Every query then costs a
few vectorised passes over the arrays, whatever the run's size.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from genir_eval.errors import InputError
from genir_eval.kind_names import LINK_USEFULNESS
from genir_eval.rundir import load_run
from genir_eval.rundir.rows import (
    CITATIONS_FILE,
    EVIDENCE_FILE,
    FAILURES_FILE,
    LINKS_FILE,
    SESSIONS_FILE,
    TURNS_FILE,
)

__all__ = ["RunIndex", "Spans", "open_index", "USERS", "ANNOTATORS", "FIXED_COLUMNS"]

USERS = "users"
ANNOTATORS = "annotators"
#: Columns every run has besides its scores (sortable and filterable like them).
FIXED_COLUMNS = ("n_turns", "failed", "missing", "gold_satisfaction")
_SPAN_TABLES = (TURNS_FILE, LINKS_FILE, CITATIONS_FILE, EVIDENCE_FILE, FAILURES_FILE)


@dataclass(frozen=True)
class Spans:
    """Where a file's rows are, grouped by session: rows ``start[i]`` to ``start[i + 1]``
    of ``offset`` and ``length`` (bytes) are session ``i``'s, in file order."""

    start: np.ndarray
    offset: np.ndarray
    length: np.ndarray

    @classmethod
    def of(cls, rows: array[int], offsets: array[int], lengths: array[int], size: int) -> Spans:
        sessions = np.frombuffer(rows, dtype=np.int64)
        order = np.argsort(sessions, kind="stable")
        start = np.searchsorted(sessions[order], np.arange(size + 1))
        return cls(
            start,
            np.frombuffer(offsets, dtype=np.int64)[order],
            np.frombuffer(lengths, dtype=np.int64)[order],
        )


@dataclass
class RunIndex:
    """One run folder, indexed: row ``i`` of every array is the ``i``-th session of
    ``sessions.jsonl``."""

    directory: Path
    title: str
    info: Mapping[str, Any]
    ids: list[str]
    tasks: list[str]
    #: each numeric column by name (NaN where the value is missing)
    columns: dict[str, np.ndarray]
    #: the session scores, in first-seen order (no fixed or disagreement column)
    scores: list[str]
    #: disagreement column -> (judge or score, ``users`` or ``annotators``)
    disagreements: dict[str, tuple[str, str]]
    #: judge -> whether it judged each session (a label or a failure of its own)
    judged_by: dict[str, np.ndarray]
    #: judge -> the failed judgments it has in each session
    failed_by: dict[str, np.ndarray]
    text: list[str] = field(repr=False)
    first_query: list[str] = field(repr=False)
    #: each run file's rows by session: ``Spans`` arrays, not a Python object a row (a
    #: million small objects would make every garbage collection walk them all)
    spans: dict[str, Spans] = field(repr=False)
    position: dict[str, int] = field(repr=False)
    _orders: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def judges(self) -> list[str]:
        return [str(j.get("id") or j.get("name")) for j in self.info.get("judges") or []]

    @property
    def headline(self) -> str | None:
        name = (self.info.get("headline") or {}).get("score")
        return str(name) if name in self.columns else (self.scores[0] if self.scores else None)

    def sortable(self) -> list[str]:
        return ["session_id", "task_type", *self.columns]

    def order(self, column: str, *, desc: bool = False) -> np.ndarray:
        """Row numbers by ``column`` (a session id or task type too), ascending or
        descending, missing values last either way, ties in file order; computed once."""
        cached = self._orders.get(f"{int(desc)}{column}")
        if cached is not None:
            return cached
        if column in ("session_id", "task_type"):
            keys = self.ids if column == "session_id" else self.tasks
            ranks = np.empty(len(keys), dtype=np.int64)
            ranks[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
            values = ranks.astype(float)
        else:
            values = self.columns[column]
        values = -values if desc else values
        found = np.argsort(np.where(np.isnan(values), np.inf, values), kind="stable")
        self._orders[f"{int(desc)}{column}"] = found
        return found

    def lines(self, table: str, row: int) -> Iterator[dict[str, Any]]:
        """The rows of ``table`` (a run file) that belong to session ``row``."""
        spans = self.spans[table]
        first, last = int(spans.start[row]), int(spans.start[row + 1])
        if first == last:
            return
        with (self.directory / table).open("rb") as handle:
            for k in range(first, last):
                handle.seek(int(spans.offset[k]))
                yield json.loads(handle.read(int(spans.length[k])))

    def row_of(self, session_id: str) -> int:
        try:
            return self.position[session_id]
        except KeyError:
            raise LookupError(f"{self.title}: no session {session_id!r}") from None


def _scan(path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Each row of a JSONL file with its byte offset and length (load_run checked them)."""
    if not path.is_file():
        return
    offset = 0
    with path.open("rb") as handle:
        for line in handle:
            start, offset = offset, offset + len(line)
            if line.strip():
                yield start, len(line), json.loads(line)


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) else math.nan


def _percentile_ranks(values: np.ndarray) -> np.ndarray:
    """Each value's mid-rank among the present ones, scaled to [0, 1] (NaN stays NaN)."""
    out = np.full(values.shape, np.nan)
    present = ~np.isnan(values)
    count = int(present.sum())
    if count < 2:
        return out
    # mid-ranks (ties share the mean of their places), 1-based: scipy's rankdata("average"),
    # without importing scipy.stats (seconds at start-up)
    _, inverse, counts = np.unique(values[present], return_inverse=True, return_counts=True)
    mid = np.cumsum(counts) - (counts - 1) / 2
    out[present] = (mid[inverse] - 1) / (count - 1)
    return out


@dataclass
class _Sessions:
    """sessions.jsonl read into lists (the first pass)."""

    ids: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    fixed: dict[str, list[float]] = field(
        default_factory=lambda: {name: [] for name in FIXED_COLUMNS}
    )


def _read_sessions(path: Path) -> _Sessions:
    found = _Sessions()
    for _, _, row in _scan(path):
        count = len(found.ids)
        found.ids.append(str(row["session_id"]))
        found.tasks.append(str(row.get("task_type") or ""))
        scores = row.get("scores") or {}
        for name in scores:
            found.scores.setdefault(name, [math.nan] * count)
        for name, column in found.scores.items():
            column.append(_number(scores.get(name)))
        found.fixed["n_turns"].append(float(row.get("n_turns") or 0))
        found.fixed["missing"].append(float(sum(1 for v in scores.values() if v is None)))
        found.fixed["gold_satisfaction"].append(_number(row.get("gold_satisfaction")))
    return found


@dataclass
class _Rows:
    """What the other files add, session by session (the second pass)."""

    size: int
    spans: dict[str, Spans] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    first_query: list[str] = field(default_factory=list)
    judged_by: dict[str, np.ndarray] = field(default_factory=dict)
    failed_by: dict[str, np.ndarray] = field(default_factory=dict)
    gaps: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.text = [""] * self.size
        self.first_query = [""] * self.size

    def add(self, table: str, row: Mapping[str, Any], where: int) -> None:
        if table == TURNS_FILE:
            query = str(row.get("query") or "")
            if not self.first_query[where]:
                self.first_query[where] = query
            self.text[where] += f"\n{query}\n{row.get('response_text') or ''}".lower()
        elif table == LINKS_FILE:
            _add_link_gaps(row, where, self.gaps, self.size)
        elif table == EVIDENCE_FILE:
            for judgment in row.get("judgments") or ():
                self._judged(str(judgment.get("judge")))[where] = True
        elif table == FAILURES_FILE:
            judge = str(row.get("judge"))
            if judge not in self.failed_by:
                self.failed_by[judge] = np.zeros(self.size, dtype=np.int64)
            self.failed_by[judge][where] += 1
            self._judged(judge)[where] = True

    def _judged(self, judge: str) -> np.ndarray:
        if judge not in self.judged_by:
            self.judged_by[judge] = np.zeros(self.size, dtype=bool)
        return self.judged_by[judge]


def _read_rows(folder: Path, position: Mapping[str, int]) -> _Rows:
    found = _Rows(len(position))
    for table in _SPAN_TABLES:
        rows, offsets, lengths = array("q"), array("q"), array("q")
        for offset, length, row in _scan(folder / table):
            where = position.get(str(row.get("session_id")))
            if where is None:
                raise InputError(
                    f"session {row.get('session_id')!r} is not in {SESSIONS_FILE}",
                    path=str(folder / table),
                )
            rows.append(where)
            offsets.append(offset)
            lengths.append(length)
            found.add(table, row, where)
        found.spans[table] = Spans.of(rows, offsets, lengths, found.size)
    return found


def open_index(directory: str | Path) -> RunIndex:
    """Read the run folder ``directory`` once (load_run checks every file first)."""
    run = load_run(directory)
    folder = run.directory
    sessions = _read_sessions(folder / SESSIONS_FILE)
    position = {sid: i for i, sid in enumerate(sessions.ids)}
    if len(position) != len(sessions.ids):
        raise InputError(
            "a session id appears twice in the table", path=str(folder / SESSIONS_FILE)
        )
    rows = _read_rows(folder, position)
    columns = {name: np.asarray(v, dtype=float) for name, v in sessions.scores.items()}
    columns.update({name: np.asarray(v, dtype=float) for name, v in sessions.fixed.items()})
    failed = list(rows.failed_by.values())
    columns["failed"] = np.sum(failed, axis=0).astype(float) if failed else np.zeros(len(position))
    disagreements = _disagreements(columns, list(sessions.scores), rows.gaps, run.info)
    return RunIndex(
        directory=folder,
        title=str((run.info.get("scenario") or {}).get("name") or folder.name),
        info=run.info,
        ids=sessions.ids,
        tasks=sessions.tasks,
        columns=columns,
        scores=list(sessions.scores),
        disagreements=disagreements,
        judged_by=rows.judged_by,
        failed_by=rows.failed_by,
        text=rows.text,
        first_query=rows.first_query,
        spans=rows.spans,
        position=position,
    )


def _add_link_gaps(
    row: Mapping[str, Any], where: int, gaps: dict[str, np.ndarray], size: int
) -> None:
    gold = _number(row.get("gold"))
    if math.isnan(gold):
        return
    for judge, label in (row.get("labels") or {}).items():
        value = _number(label)
        if not math.isnan(value):
            if judge not in gaps:
                gaps[judge] = np.zeros((2, size))
            gaps[judge][0, where] += abs(value - gold)
            gaps[judge][1, where] += 1


def _disagreements(
    columns: dict[str, np.ndarray],
    scores: list[str],
    gaps: Mapping[str, np.ndarray],
    info: Mapping[str, Any],
) -> dict[str, tuple[str, str]]:
    """Adds each judge-vs-people column to ``columns``: a link judge against the annotators'
    link labels (the mean absolute gap over a session's labelled links, on the 0-3 scale),
    each score against the users' session satisfaction (the gap between the two percentile
    ranks, 0-1: both rank the session alike at 0, at opposite ends at 1)."""
    found: dict[str, tuple[str, str]] = {}
    kinds = {str(j.get("id") or j.get("name")): j.get("kind") for j in info.get("judges") or []}
    for judge, (total, count) in sorted(gaps.items()):
        if kinds.get(judge, LINK_USEFULNESS) != LINK_USEFULNESS:
            continue
        name = f"disagree:{ANNOTATORS}:{judge}"
        with np.errstate(invalid="ignore", divide="ignore"):
            columns[name] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        found[name] = (judge, ANNOTATORS)
    users = _percentile_ranks(columns["gold_satisfaction"])
    if not np.isnan(users).all():
        for score in scores:
            if score.startswith("gold:"):
                continue
            name = f"disagree:{USERS}:{score}"
            columns[name] = np.abs(_percentile_ranks(columns[score]) - users)
            found[name] = (score, USERS)
    return found
