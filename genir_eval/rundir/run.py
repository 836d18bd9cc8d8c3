"""A run folder read back: :class:`Run`, its tables, meta-evaluation and run info, with the
scores by level."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genir_eval.errors import InputError, did_you_mean
from genir_eval.rundir.files import _iter_jsonl
from genir_eval.rundir.rows import (
    EVIDENCE_FILE,
    FAILURES_FILE,
    REPEATS_FILE,
    REPORT_FILE,
    RUN_FILE,
    TABLES,
    CitationRow,
    Level,
    LinkRow,
    SessionRow,
    TableName,
    TurnRow,
    _citation_row_from_dict,
    _link_row_from_dict,
    _number_or_none,
    _session_row_from_dict,
    _turn_row_from_dict,
)
from genir_eval.rundir.verify import _count_failures, _label_counts

if TYPE_CHECKING:
    import numpy as np


__all__ = [
    "Run",
]


@dataclass(frozen=True)
class Run:
    """A run directory read back: its three tables, the meta-evaluation and the run info.

    The tables are read from their JSONL files on first use (``links``, ``turns``,
    ``sessions``: all rows as records). A large run is better read with
    :meth:`iter_rows` (one row at a time) or :meth:`columns` (numbers only), whose memory
    does not depend on the number of rows (beyond the columns asked for).
    """

    directory: Path
    meta: Mapping[str, Any] | None
    info: Mapping[str, Any]

    @property
    def report_path(self) -> Path:
        return self.directory / REPORT_FILE

    @property
    def failures_total(self) -> int:
        """How many judgments of the run are missing."""
        total = self.info.get("failures_total")
        if isinstance(total, int) and not isinstance(total, bool):
            return total
        return len(self.info.get("failures") or [])

    def gate_status(self, *, max_missing: float, allow_permanent: bool) -> dict[str, Any]:
        """The run's status worked out again from its own failures, label counts and
        engines, with the threshold of whoever reads it (``compare``'s and ``assert_run``'s
        ``max_missing`` and ``allow_permanent``, their defaults the engine's), never a looser
        one read from ``run.json``: an edited ``status.max_missing = 1.0`` or
        ``allow_permanent = true`` changes nothing. A stricter threshold the run ran with
        still holds (its stated status was checked against it as the folder was read)."""
        from genir_eval.rundir.status import run_status

        status = self.info.get("status")
        if not isinstance(status, Mapping):
            return {"ok": True, "reasons": []}  # rows written without a judgment missing
        stated_max = status.get("max_missing")
        if isinstance(stated_max, (int, float)) and not isinstance(stated_max, bool):
            max_missing = min(max_missing, float(stated_max))
        allow_permanent = allow_permanent and status.get("allow_permanent") is True
        counts = _label_counts(self.info, _count_failures(self.directory, self.info))
        self._check_label_counts(counts)
        return run_status(
            counts,
            (),
            list(self.info.get("engines") or []),
            max_missing=max_missing,
            allow_permanent=allow_permanent,
        )

    def _check_label_counts(self, counts: Mapping[str, Mapping[str, int]]) -> None:
        """Each judge's label count in ``run.json`` against its judgments in
        ``evidence.jsonl`` (every label of the run, with its reason), when the run wrote one:
        a count edited upwards would make the missing share look small."""
        files = self.info.get("files")
        if not isinstance(files, Mapping) or EVIDENCE_FILE not in files:
            return
        found: Counter[str] = Counter()
        for row in _iter_jsonl(self.directory / EVIDENCE_FILE):
            for judgment in row.get("judgments") or () if isinstance(row, Mapping) else ():
                if isinstance(judgment, Mapping):
                    found[str(judgment.get("judge"))] += 1
        for judge, count in counts.items():
            if found[judge] != count["labels"]:
                raise InputError(
                    f"run.json says judge {judge} gave {count['labels']} labels, its "
                    f"{EVIDENCE_FILE} holds {found[judge]}: edited after the run? run again",
                    path=str(self.directory / RUN_FILE),
                )

    def iter_failures(self) -> Iterator[Mapping[str, Any]]:
        """Every missing judgment (``judge``, ``session_id``, ``turn``, ``item``, ``repeat``,
        ``reason``), in the order the run met them: from ``failures.jsonl`` when the run
        wrote one (``run.json`` then lists only the first :data:`MAX_LISTED_FAILURES`), else
        from ``run.json``."""
        files = self.info.get("files")
        if isinstance(files, Mapping) and FAILURES_FILE in files:
            yield from _iter_jsonl(self.directory / FAILURES_FILE)
            return
        for failure in self.info.get("failures") or []:
            if isinstance(failure, Mapping):
                yield failure

    def iter_rows(self, table: TableName) -> Iterator[dict[str, Any]]:
        """The rows of ``table`` (``links``, ``turns``, ``sessions`` or ``citations``, which
        has none when no citation judge ran) as dicts, in order."""
        path = self.directory / TABLES[table][0]
        if table == "citations" and not path.is_file():
            return
        yield from _iter_jsonl(path)

    @cached_property
    def citations(self) -> tuple[CitationRow, ...]:
        return tuple(_citation_row_from_dict(d) for d in self.iter_rows("citations"))

    @cached_property
    def links(self) -> tuple[LinkRow, ...]:
        return tuple(_link_row_from_dict(d) for d in self.iter_rows("links"))

    @cached_property
    def turns(self) -> tuple[TurnRow, ...]:
        return tuple(_turn_row_from_dict(d) for d in self.iter_rows("turns"))

    @cached_property
    def sessions(self) -> tuple[SessionRow, ...]:
        return tuple(_session_row_from_dict(d) for d in self.iter_rows("sessions"))

    def columns(self, level: Level, names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """Scores of ``level`` as float arrays (NaN where missing), one per name (every score
        when ``names`` is ``None``), plus ``gold_satisfaction``; read in one pass."""
        import numpy as np

        wanted = None if names is None else list(names)
        values: dict[str, list[float]] = {n: [] for n in wanted or ()}
        gold: list[float] = []
        for count, row in enumerate(self.iter_rows("sessions" if level == "session" else "turns")):
            scores = row.get("scores") or {}
            if wanted is None:
                for name in scores:
                    values.setdefault(name, [math.nan] * count)
            for name, column in values.items():
                value = scores.get(name)
                column.append(math.nan if value is None else float(value))
            g = row.get("gold_satisfaction")
            gold.append(math.nan if g is None else float(g))
        out = {name: np.asarray(column, dtype=float) for name, column in values.items()}
        out["gold_satisfaction"] = np.asarray(gold, dtype=float)
        return out

    def score_names(self, level: Level = "session") -> list[str]:
        """The names of the scores present at ``level``, in first-seen order."""
        seen: dict[str, None] = {}
        for row in self.iter_rows("sessions" if level == "session" else "turns"):
            for name in row.get("scores") or {}:
                seen.setdefault(name, None)
        return list(seen)

    def scores(self, name: str, level: Level = "session") -> dict[str, float | None]:
        """``name``'s score per session id (``level="session"``) or per ``"<session>#<turn>"``.

        Raises :class:`KeyError` naming the known scores when ``name`` is not one of them.
        """
        known = self.score_names(level)
        if name not in known:
            raise KeyError(
                f"no score {name!r} at {level} level{did_you_mean(name, known)}; "
                f"known: {', '.join(known) or 'none'}"
            )
        if level == "session":
            return {
                str(row["session_id"]): _number_or_none((row.get("scores") or {}).get(name))
                for row in self.iter_rows("sessions")
            }
        return {
            f"{row['session_id']}#{row['turn']}": _number_or_none(
                (row.get("scores") or {}).get(name)
            )
            for row in self.iter_rows("turns")
        }

    def repeat_scores(self, name: str, level: Level = "session") -> dict[str, list[float | None]]:
        """``name``'s value in each repeat (``run --repeats``; repeat 0 first) per session id
        (or ``"<session>#<turn>"``) of the repeat sample, from ``repeats.jsonl``; empty when
        the run kept no repeats of ``name`` (no ``--repeats``, or no repeated judge feeds it).
        A repeat whose judgment is missing gives ``None``."""
        files = self.info.get("files")
        if not isinstance(files, Mapping) or REPEATS_FILE not in files:
            return {}
        path = self.directory / REPEATS_FILE
        values: dict[str, dict[int, float | None]] = {}
        for number, row in enumerate(_iter_jsonl(path), start=1):
            try:
                session_id, repeat = str(row["session_id"]), int(row["repeat"])
                if level == "session":
                    scores = row["scores"]
                    if name in scores:
                        values.setdefault(session_id, {})[repeat] = _number_or_none(scores[name])
                    continue
                for turn in row["turns"]:
                    if name in turn["scores"]:
                        key = f"{session_id}#{int(turn['turn'])}"
                        values.setdefault(key, {})[repeat] = _number_or_none(turn["scores"][name])
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                raise InputError(
                    f"not a repeat row genir-eval wrote ({type(error).__name__}: {error}); "
                    "run again",
                    path=str(path),
                    line=number,
                ) from None
        return {key: [by[r] for r in sorted(by)] for key, by in values.items()}

    def mean(self, name: str, level: Level = "session") -> float | None:
        """Mean of ``name`` over the rows where it is defined (``None`` when none is)."""
        values = [v for v in self.scores(name, level).values() if v is not None]
        return sum(values) / len(values) if values else None
