"""The run directory: what a run writes, and reading it back.

A run directory holds three tables, each as JSONL and as CSV, plus two JSON documents:

``links.jsonl`` / ``links.csv``
    one row per link of a turn: session, turn, link id, url, each link judge's label (and
    why it is missing), the gold usefulness where known;
``turns.jsonl`` / ``turns.csv``
    one row per turn: query, response, every judge and metric score, gold satisfaction;
``sessions.jsonl`` / ``sessions.csv``
    one row per session likewise;
``citations.jsonl`` / ``citations.csv``
    present when a citation judge ran: one row per (statement, cited link) pair and judge,
    with the support verdict, the evidence quoted from the source, the basis judged on and
    why a verdict is missing;
``meta.json``
    the meta-evaluation (scores against gold), present when gold labels exist;
``evidence.jsonl``
    one row per turn: statements and citations, text units, useful spans (gold and
    judged), every judgment with its reason and raw reply (what the report shows per turn);
``failures.jsonl``
    one row per missing judgment (judge, session, turn, item, repeat, reason), written as
    the run goes, so a run with a million failures neither holds them in memory nor lists
    them in ``run.json``;
``run.json``
    the scenario, versions, provider and model per judge, usage, cost, duration, cache
    hits, the status, and the failures: their total and the first
    :data:`MAX_LISTED_FAILURES` (all of them in a run folder without ``failures.jsonl``).

Every JSONL row, CSV row and JSON document carries ``version`` (:data:`OUTPUT_VERSION`).
JSONL rows nest ``labels`` and ``scores``; CSV flattens them into ``label:<judge>``,
``missing:<judge>`` and ``score:<name>`` columns. :func:`load_run` reads the JSONL.
"""

from __future__ import annotations

import contextlib
import csv as csv_module
import hashlib
import json
import math
import os
import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from genir_eval.errors import InputError, StorageError, did_you_mean
from genir_eval.paths import real_path, why_missing
from genir_eval.stale import remove_stale_parts

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "OUTPUT_VERSION",
    "FAILURES_FILE",
    "MAX_LISTED_FAILURES",
    "RUN_FILES",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "CitationRow",
    "Run",
    "Level",
    "write_run",
    "RunWriter",
    "TABLES",
    "write_json",
    "write_text_atomic",
    "file_digest",
    "csv_cell",
    "load_run",
    "check_writable_folder",
    "remove_stale_parts",
    "link_row_to_dict",
    "turn_row_to_dict",
    "session_row_to_dict",
    "citation_row_to_dict",
]

OUTPUT_VERSION = 1

Level = Literal["turn", "session"]

LINKS_FILE = "links.jsonl"
TURNS_FILE = "turns.jsonl"
SESSIONS_FILE = "sessions.jsonl"
CITATIONS_FILE = "citations.jsonl"
META_FILE = "meta.json"
RUN_FILE = "run.json"
REPORT_FILE = "report.html"
EVIDENCE_FILE = "evidence.jsonl"
# every missing judgment of a run (judge, session_id, turn, item, repeat, reason), streamed as
# the run goes; run.json lists the first MAX_LISTED_FAILURES and the total
FAILURES_FILE = "failures.jsonl"
MAX_LISTED_FAILURES = 100
#: Every file a run writes besides ``run.json``: when one is in the folder, ``run.json`` lists it
#: with its SHA-256 (a table edited and dropped from the list is refused, not read).
RUN_FILES = frozenset(
    [
        *(LINKS_FILE, TURNS_FILE, SESSIONS_FILE, CITATIONS_FILE),
        *("links.csv", "turns.csv", "sessions.csv", "citations.csv"),
        *(META_FILE, REPORT_FILE, EVIDENCE_FILE, FAILURES_FILE),
    ]
)


@dataclass(frozen=True)
class LinkRow:
    """One link of one turn with every link judge's label and the gold label."""

    session_id: str
    turn: int
    link_id: int
    url: str
    title: str = ""
    cited: bool = True
    labels: Mapping[str, float | None] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    gold: float | None = None


@dataclass(frozen=True)
class TurnRow:
    """One turn (query and response) with its scores; ``turn`` is 1-based."""

    session_id: str
    turn: int
    query: str = ""
    response_text: str = ""
    task_type: str | None = None
    scores: Mapping[str, float | None] = field(default_factory=dict)
    gold_satisfaction: float | None = None
    thumbs: int | None = None
    feedback: str | None = None


@dataclass(frozen=True)
class SessionRow:
    """One session with its scores and the user's satisfaction."""

    session_id: str
    task_type: str | None = None
    n_turns: int = 0
    scores: Mapping[str, float | None] = field(default_factory=dict)
    gold_satisfaction: float | None = None


@dataclass(frozen=True)
class CitationRow:
    """One (statement, cited link) pair as one citation judge saw it; ``statement`` is the
    1-based position in the turn's statements, ``value`` 2/1/0 (full/partial/none)."""

    session_id: str
    turn: int
    statement: int
    statement_text: str
    link_id: int
    judge: str
    url: str = ""
    title: str = ""
    support: str | None = None
    value: float | None = None
    evidence: str = ""
    basis: str | None = None
    missing_reason: str | None = None


def citation_row_to_dict(row: CitationRow) -> dict[str, Any]:
    return {
        "version": OUTPUT_VERSION,
        "session_id": row.session_id,
        "turn": row.turn,
        "statement": row.statement,
        "statement_text": row.statement_text,
        "link_id": row.link_id,
        "url": row.url,
        "title": row.title,
        "judge": row.judge,
        "support": row.support,
        "value": _clean_number(row.value),
        "evidence": row.evidence,
        "basis": row.basis,
        "missing_reason": row.missing_reason,
    }


def _citation_row_from_dict(d: Mapping[str, Any]) -> CitationRow:
    return CitationRow(
        session_id=str(d["session_id"]),
        turn=int(d["turn"]),
        statement=int(d["statement"]),
        statement_text=str(d.get("statement_text") or ""),
        link_id=int(d["link_id"]),
        judge=str(d["judge"]),
        url=str(d.get("url") or ""),
        title=str(d.get("title") or ""),
        support=d.get("support"),
        value=_number_or_none(d.get("value")),
        evidence=str(d.get("evidence") or ""),
        basis=d.get("basis"),
        missing_reason=d.get("missing_reason"),
    )


def _clean_number(value: Any) -> float | None:
    """JSON has no NaN: an undefined score is written as null (missing), never as 0."""
    if value is None:
        return None
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return None
    return number


def link_row_to_dict(row: LinkRow) -> dict[str, Any]:
    return {
        "version": OUTPUT_VERSION,
        "session_id": row.session_id,
        "turn": row.turn,
        "link_id": row.link_id,
        "url": row.url,
        "title": row.title,
        "cited": row.cited,
        "labels": {k: _clean_number(v) for k, v in row.labels.items()},
        "missing": dict(row.missing),
        "gold": _clean_number(row.gold),
    }


def turn_row_to_dict(row: TurnRow) -> dict[str, Any]:
    return {
        "version": OUTPUT_VERSION,
        "session_id": row.session_id,
        "turn": row.turn,
        "task_type": row.task_type,
        "query": row.query,
        "response_text": row.response_text,
        "scores": {k: _clean_number(v) for k, v in row.scores.items()},
        "gold_satisfaction": _clean_number(row.gold_satisfaction),
        "thumbs": row.thumbs,
        "feedback": row.feedback,
    }


def session_row_to_dict(row: SessionRow) -> dict[str, Any]:
    return {
        "version": OUTPUT_VERSION,
        "session_id": row.session_id,
        "task_type": row.task_type,
        "n_turns": row.n_turns,
        "scores": {k: _clean_number(v) for k, v in row.scores.items()},
        "gold_satisfaction": _clean_number(row.gold_satisfaction),
    }


def _number_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _link_row_from_dict(d: Mapping[str, Any]) -> LinkRow:
    return LinkRow(
        session_id=str(d["session_id"]),
        turn=int(d["turn"]),
        link_id=int(d["link_id"]),
        url=str(d.get("url") or ""),
        title=str(d.get("title") or ""),
        cited=bool(d.get("cited", True)),
        labels={str(k): _number_or_none(v) for k, v in (d.get("labels") or {}).items()},
        missing={str(k): str(v) for k, v in (d.get("missing") or {}).items()},
        gold=_number_or_none(d.get("gold")),
    )


def _turn_row_from_dict(d: Mapping[str, Any]) -> TurnRow:
    return TurnRow(
        session_id=str(d["session_id"]),
        turn=int(d["turn"]),
        query=str(d.get("query") or ""),
        response_text=str(d.get("response_text") or ""),
        task_type=d.get("task_type"),
        scores={str(k): _number_or_none(v) for k, v in (d.get("scores") or {}).items()},
        gold_satisfaction=_number_or_none(d.get("gold_satisfaction")),
        thumbs=None if d.get("thumbs") is None else int(d["thumbs"]),
        feedback=None if d.get("feedback") is None else str(d["feedback"]),
    )


def _session_row_from_dict(d: Mapping[str, Any]) -> SessionRow:
    return SessionRow(
        session_id=str(d["session_id"]),
        task_type=d.get("task_type"),
        n_turns=int(d.get("n_turns") or 0),
        scores={str(k): _number_or_none(v) for k, v in (d.get("scores") or {}).items()},
        gold_satisfaction=_number_or_none(d.get("gold_satisfaction")),
    )


TableName = Literal["links", "turns", "sessions", "citations"]
# table name -> its JSONL file and the CSV columns that come first
TABLES: dict[str, tuple[str, list[str]]] = {
    "links": (
        LINKS_FILE,
        ["version", "session_id", "turn", "link_id", "url", "title", "cited", "gold"],
    ),
    "turns": (
        TURNS_FILE,
        ["version", "session_id", "turn", "task_type", "gold_satisfaction", "thumbs"],
    ),
    "sessions": (
        SESSIONS_FILE,
        ["version", "session_id", "task_type", "n_turns", "gold_satisfaction"],
    ),
    # written only when a citation judge ran
    "citations": (
        CITATIONS_FILE,
        ["version", "session_id", "turn", "statement", "link_id", "judge"],
    ),
}


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

    def mean(self, name: str, level: Level = "session") -> float | None:
        """Mean of ``name`` over the rows where it is defined (``None`` when none is)."""
        values = [v for v in self.scores(name, level).values() if v is not None]
        return sum(values) / len(values) if values else None


def write_text_atomic(path: Path, text: str, digests: dict[str, str] | None = None) -> None:
    """Write ``text`` to ``path`` through a temporary file of a unique name in the same
    folder, renamed into place: a reader sees the old file or the new one, never a part, and
    two writers never share a temporary file. ``digests`` (when given) receives the SHA-256
    of what this call wrote, under the file's name."""
    with _temporary(path, digests) as handle:
        handle.write(text)


@contextlib.contextmanager
def _temporary(path: Path, digests: dict[str, str] | None = None) -> Iterator[TextIO]:
    """A text handle on a fresh temporary file beside ``path``, renamed onto ``path`` when
    the block ends without an error (and removed when it raises). ``digests`` (when given)
    receives the SHA-256 of the temporary file under ``path``'s name."""
    # O_EXCL on a random name, mode 0o666 so the umask applies as to any file (mkstemp's
    # 0o600 would make the outputs private)
    name = str(path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"))
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        _replace(Path(name), path, digests)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def _replace(source: Path, target: Path, digests: dict[str, str] | None) -> None:
    """Rename this writer's private ``source`` onto ``target``, first noting its digest: a
    digest read back from ``target`` could be another writer's file, and a run.json listing
    it would pass a folder mixed from two runs as one."""
    if digests is not None:
        digests[target.name] = file_digest(source)
    os.replace(source, target)


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, as ``run.json`` lists them."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
#: Injection"): such a cell is written with a leading apostrophe, which spreadsheets show
#: as text and do not evaluate.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def write_json(
    path: Path, document: Mapping[str, Any], digests: dict[str, str] | None = None
) -> None:
    """Write ``document`` (which must carry ``version``) as indented UTF-8 JSON."""
    if "version" not in document:
        raise ValueError(f"{path.name}: every output document carries a 'version' field")
    write_text_atomic(
        path, json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n", digests
    )


def _flatten(row: Mapping[str, Any]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in row.items():
        if key == "labels":
            flat.update({f"label:{k}": v for k, v in value.items()})
        elif key == "missing":
            flat.update({f"missing:{k}": v for k, v in value.items()})
        elif key == "scores":
            flat.update({f"score:{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell a spreadsheet may open. Text starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading ``'`` (so it is never run as a
    formula); a float is rounded to 10 significant digits (``0.30000000000000004`` is
    written ``0.3``) and never ``-0.0``; missing (``None``, NaN) is ``None``, which the
    writer leaves empty; everything else is unchanged. Every CSV genir-eval writes goes
    through here."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return float(f"{value:.10g}") + 0.0  # + 0.0 turns -0.0 into 0.0
    return value


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
    ) -> Run:
        """Write the tables, ``meta.json`` (or remove a stale one), ``report.html`` (when
        ``report`` renders it) and ``run.json``; returns the run.

        ``extra_scores`` names, per table, the scores ``amend`` adds to every row (their CSV
        columns follow the first row's own scores)."""
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


def _read_json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON: {error.msg}", path=str(path), line=error.lineno
        ) from None
    except (UnicodeDecodeError, RecursionError, OSError) as error:
        raise InputError(_unreadable(error), path=str(path)) from None
    if not isinstance(document, dict):
        raise InputError("expected a JSON object", path=str(path))
    _check_version(document, path, None)
    return document


def _check_version(document: Mapping[str, Any], path: Path, line: int | None) -> None:
    version = document.get("version")
    if version != OUTPUT_VERSION:
        raise InputError(
            f"unsupported output version {version!r} (this genir-eval reads {OUTPUT_VERSION})",
            path=str(path),
            line=line,
        )


def _unreadable(error: BaseException) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at byte {error.start + 1})"
    if isinstance(error, RecursionError):
        return "the JSON is nested too deeply to read"
    return f"cannot read it: {getattr(error, 'strerror', None) or error}"


def _iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8", errors="surrogateescape") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                text.encode("utf-8")
                row = json.loads(text)
            except json.JSONDecodeError as error:
                raise InputError(
                    f"not valid JSON: {error.msg}", path=str(path), line=number
                ) from None
            except (UnicodeEncodeError, RecursionError) as error:
                message = "not UTF-8 text" if isinstance(error, UnicodeEncodeError) else None
                raise InputError(
                    message or _unreadable(error), path=str(path), line=number
                ) from None
            if not isinstance(row, dict):
                raise InputError("expected a JSON object", path=str(path), line=number)
            _check_version(row, path, number)
            yield row


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
    except OSError as error:
        dangling = os.path.islink(folder) and not os.path.exists(folder)
        problem = why_missing(folder, "folder") if dangling else error.strerror
        raise StorageError(
            f"cannot write to {what}: {problem or error}; choose another folder "
            "(--out DIR) or make this one writable",
            path=str(folder),
        ) from None
