"""The run folder's files and table rows: the file names, the output version, one dataclass
per table row (links, turns, sessions, citation pairs) and how each becomes a JSON object and
is read back from one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from genir_eval.kind_names import NUGGETS_FILE

if TYPE_CHECKING:
    pass


__all__ = [
    "OUTPUT_VERSION",
    "Level",
    "LINKS_FILE",
    "TURNS_FILE",
    "SESSIONS_FILE",
    "CITATIONS_FILE",
    "META_FILE",
    "RUN_FILE",
    "REPORT_FILE",
    "EVIDENCE_FILE",
    "FAILURES_FILE",
    "REPEATS_FILE",
    "MAX_LISTED_FAILURES",
    "RUN_FILES",
    "JUDGE_FILES",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "CitationRow",
    "citation_row_to_dict",
    "link_row_to_dict",
    "turn_row_to_dict",
    "session_row_to_dict",
    "TableName",
    "TABLES",
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
# a run with --repeats: one row per (sampled session, repeat) with the score values the
# repeated judges' labels give that session and its turns in that repeat (repeat 0 the run's
# own judgments), so compare can resample a session's repeats (runner/noise.py)
REPEATS_FILE = "repeats.jsonl"
#: Every file a run writes besides ``run.json``: when one is in the folder, ``run.json`` lists it
#: with its SHA-256 (a table edited and dropped from the list is refused, not read).
#: Files a run's judges write into the folder themselves (the nugget judge's nuggets): listed
#: when this run's judges wrote them, removed when it has no such judge.
JUDGE_FILES = frozenset([NUGGETS_FILE])
RUN_FILES = frozenset(
    [
        *(LINKS_FILE, TURNS_FILE, SESSIONS_FILE, CITATIONS_FILE),
        *("links.csv", "turns.csv", "sessions.csv", "citations.csv"),
        *(META_FILE, REPORT_FILE, EVIDENCE_FILE, FAILURES_FILE, REPEATS_FILE),
        *JUDGE_FILES,
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
