"""What the report needs from a run folder's tables, read one row at a time.

A run of a million sessions has tables far larger than the memory the report may use, so
the report never holds them as records: each part reads the JSONL files through
:meth:`Run.iter_rows <genir_eval.rundir.folder.Run.iter_rows>` and keeps only what it
shows: score columns as float arrays (:class:`LevelTable`), counts and label pairs
(:class:`LinkFacts`), sorted arrays of row keys (:class:`LinkKeys`), and the few rows it
prints in full (:func:`session_rows`, :func:`turn_rows`, :func:`link_rows`).

A row key is Python's 64-bit ``hash`` of ``session_id`` (a session) or of
``(session_id, turn)`` (a turn), stored in sorted ``int64`` arrays: 8 bytes a row where a
set of tuples costs about 150.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genir_eval.rundir.folder import (
    Level,
    LinkRow,
    Run,
    SessionRow,
    TableName,
    TurnRow,
    _link_row_from_dict,
    _session_row_from_dict,
    _turn_row_from_dict,
)

__all__ = [
    "LevelTable",
    "LinkFacts",
    "LinkKeys",
    "count_rows",
    "read_level",
    "read_links",
    "read_link_keys",
    "session_rows",
    "turn_rows",
    "link_rows",
    "optional",
    "turn_key",
]


def count_rows(run: Run, table: TableName) -> int:
    """The number of rows of ``table``."""
    return sum(1 for _ in run.iter_rows(table))


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def optional(value: float) -> float | None:
    """An array cell as the row holds it: ``None`` for NaN (missing)."""
    return None if math.isnan(value) else value


def turn_key(session_id: str, turn: int) -> int:
    return hash((session_id, turn))


@dataclass(frozen=True)
class LevelTable:
    """The sessions (or turns) table as columns: every score (NaN where missing, in the
    order the scores first appear), the gold satisfaction, the task type of each row (a
    code into ``task_types``), ``n_turns`` per session and whether any turn has thumbs."""

    level: Level
    n: int
    scores: dict[str, np.ndarray]
    gold: np.ndarray
    task_types: list[str | None]
    task_codes: np.ndarray
    n_turns: np.ndarray
    any_thumbs: bool = False

    @property
    def names(self) -> list[str]:
        return list(self.scores)

    def column(self, name: str) -> np.ndarray:
        """``name``'s values, all NaN when the level has no such score."""
        found = self.scores.get(name)
        return found if found is not None else np.full(self.n, math.nan)

    def where_task(self, keep: Callable[[str | None], bool]) -> np.ndarray:
        """A mask of the rows whose task type ``keep`` accepts."""
        codes = [i for i, task in enumerate(self.task_types) if keep(task)]
        return np.isin(self.task_codes, codes)


def read_level(run: Run, level: Level) -> LevelTable:
    """The ``sessions`` (``level="session"``) or ``turns`` table as :class:`LevelTable`,
    read in one pass."""
    columns: dict[str, array[float]] = {}
    gold: array[float] = array("d")
    codes: array[int] = array("i")
    n_turns: array[int] = array("i")
    known: dict[str | None, int] = {}
    any_thumbs = False
    count = 0
    for row in run.iter_rows("sessions" if level == "session" else "turns"):
        scores = row.get("scores") or {}
        for name in scores:
            if name not in columns:
                columns[name] = array("d", [math.nan]) * count
        for name, column in columns.items():
            column.append(_number(scores.get(name)))
        gold.append(_number(row.get("gold_satisfaction")))
        task = row.get("task_type")
        codes.append(known.setdefault(task, len(known)))
        n_turns.append(int(row.get("n_turns") or 0))
        any_thumbs = any_thumbs or row.get("thumbs") is not None
        count += 1
    return LevelTable(
        level=level,
        n=count,
        scores={name: np.frombuffer(column, dtype=float) for name, column in columns.items()},
        gold=np.frombuffer(gold, dtype=float),
        task_types=list(known),
        task_codes=np.frombuffer(codes, dtype=np.int32),
        n_turns=np.frombuffer(n_turns, dtype=np.int32),
        any_thumbs=any_thumbs,
    )


@dataclass
class LinkFacts:
    """The links table reduced to what the report shows: the number of links, the judges
    with labels (first-seen order), whether any link has a gold label, per pair of judges
    their rounded labels on the links both labelled, per judge the (gold, label) counts,
    and per session the absolute differences between two chosen judges' labels."""

    n: int = 0
    judges: dict[str, None] = field(default_factory=dict)
    has_gold: bool = False
    pairs: dict[tuple[str, str], tuple[array[int], array[int]]] = field(default_factory=dict)
    confusion: dict[str, dict[tuple[float, float], int]] = field(default_factory=dict)
    gaps: dict[str, array[float]] = field(default_factory=dict)


def read_links(run: Run, disagreement: tuple[str, str] | None = None) -> LinkFacts:
    """:class:`LinkFacts` of ``run`` in one pass; ``disagreement`` names the two judges
    whose per-session label differences are kept."""
    facts = LinkFacts()
    order: dict[str, int] = {}
    for row in run.iter_rows("links"):
        facts.n += 1
        labels = {
            str(k): (None if v is None else float(v)) for k, v in (row.get("labels") or {}).items()
        }
        gold = row.get("gold")
        gold = None if gold is None else float(gold)
        facts.has_gold = facts.has_gold or gold is not None
        for judge in labels:
            if judge not in order:
                order[judge] = len(order)
                facts.judges[judge] = None
        present = sorted((j for j, v in labels.items() if v is not None), key=order.__getitem__)
        for i, a in enumerate(present):
            for b in present[i + 1 :]:
                xs, ys = facts.pairs.setdefault((a, b), (array("q"), array("q")))
                xs.append(round(labels[a]))  # type: ignore[arg-type]
                ys.append(round(labels[b]))  # type: ignore[arg-type]
            if gold is not None:
                counts = facts.confusion.setdefault(a, defaultdict(int))
                counts[(gold, labels[a])] += 1  # type: ignore[index]
        if disagreement is not None:
            x, y = labels.get(disagreement[0]), labels.get(disagreement[1])
            if x is not None and y is not None:
                facts.gaps.setdefault(str(row["session_id"]), array("d")).append(abs(x - y))
    return facts


def _sorted_keys(keys: array[int]) -> np.ndarray:
    return np.unique(np.frombuffer(keys, dtype=np.int64))


def _contains(keys: np.ndarray, key: int) -> bool:
    at = int(np.searchsorted(keys, key))
    return at < len(keys) and int(keys[at]) == key


@dataclass(frozen=True)
class LinkKeys:
    """The sessions and turns with a cited link, and per judge those where a cited link
    has that judge's label (as sorted key arrays)."""

    cited_turns: np.ndarray
    cited_sessions: np.ndarray
    labelled_turns: dict[str, np.ndarray]
    labelled_sessions: dict[str, np.ndarray]

    def cited(self, session_id: str, turn: int | None = None) -> bool:
        if turn is None:
            return _contains(self.cited_sessions, hash(session_id))
        return _contains(self.cited_turns, turn_key(session_id, turn))

    def labelled(self, judge: str, session_id: str, turn: int | None = None) -> bool:
        if turn is None:
            found = self.labelled_sessions.get(judge)
            return found is not None and _contains(found, hash(session_id))
        found = self.labelled_turns.get(judge)
        return found is not None and _contains(found, turn_key(session_id, turn))


def read_link_keys(run: Run) -> LinkKeys:
    """:class:`LinkKeys` of ``run`` in one pass over its links."""
    cited_turns: array[int] = array("q")
    cited_sessions: array[int] = array("q")
    turns_of: dict[str, array[int]] = defaultdict(lambda: array("q"))
    sessions_of: dict[str, array[int]] = defaultdict(lambda: array("q"))
    for row in run.iter_rows("links"):
        if not bool(row.get("cited", True)):
            continue
        session_id = str(row["session_id"])
        turn, session = turn_key(session_id, int(row["turn"])), hash(session_id)
        cited_turns.append(turn)
        cited_sessions.append(session)
        for judge, value in (row.get("labels") or {}).items():
            if value is not None:
                turns_of[str(judge)].append(turn)
                sessions_of[str(judge)].append(session)
    return LinkKeys(
        cited_turns=_sorted_keys(cited_turns),
        cited_sessions=_sorted_keys(cited_sessions),
        labelled_turns={judge: _sorted_keys(keys) for judge, keys in turns_of.items()},
        labelled_sessions={judge: _sorted_keys(keys) for judge, keys in sessions_of.items()},
    )


def session_rows(
    run: Run, positions: Collection[int] = (), *, first: int = 0
) -> dict[int, SessionRow]:
    """The session rows at ``positions`` and the ``first`` rows, by position."""
    wanted = set(positions)
    last = max(wanted, default=-1)
    found: dict[int, SessionRow] = {}
    for i, row in enumerate(run.iter_rows("sessions")):
        if i >= first and i > last:
            break
        if i < first or i in wanted:
            found[i] = _session_row_from_dict(row)
    return found


def turn_rows(run: Run, sessions: Collection[str]) -> Iterator[TurnRow]:
    """The turn rows of ``sessions`` (ids), in table order."""
    for row in run.iter_rows("turns"):
        if str(row["session_id"]) in sessions:
            yield _turn_row_from_dict(row)


def link_rows(run: Run, sessions: Collection[str]) -> Iterator[LinkRow]:
    """The link rows of ``sessions`` (ids), in table order."""
    for row in run.iter_rows("links"):
        if str(row["session_id"]) in sessions:
            yield _link_row_from_dict(row)
