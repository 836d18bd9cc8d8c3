"""The run directory: what a run writes, and reading it back.

A run directory holds three tables, each as JSONL and as CSV, plus two JSON documents:

``links.jsonl`` / ``links.csv``
    one row per link of a turn: session, turn, link id, url, each link judge's label (and
    why it is missing), the gold usefulness where known;
``turns.jsonl`` / ``turns.csv``
    one row per turn: query, response, every judge and metric score, gold satisfaction;
``sessions.jsonl`` / ``sessions.csv``
    one row per session likewise;
``meta.json``
    the meta-evaluation (scores against gold), present when gold labels exist;
``run.json``
    the scenario, versions, provider and model per judge, usage, cost, duration, cache
    hits and failures.

Every JSONL row, CSV row and JSON document carries ``version`` (:data:`OUTPUT_VERSION`).
JSONL rows nest ``labels`` and ``scores``; CSV flattens them into ``label:<judge>``,
``missing:<judge>`` and ``score:<name>`` columns. :func:`load_run` reads the JSONL.
"""

from __future__ import annotations

import csv as csv_module
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from genir_eval.errors import InputError

__all__ = [
    "OUTPUT_VERSION",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "Run",
    "Level",
    "write_run",
    "write_json",
    "load_run",
    "link_row_to_dict",
    "turn_row_to_dict",
    "session_row_to_dict",
]

OUTPUT_VERSION = 1

Level = Literal["turn", "session"]

LINKS_FILE = "links.jsonl"
TURNS_FILE = "turns.jsonl"
SESSIONS_FILE = "sessions.jsonl"
META_FILE = "meta.json"
RUN_FILE = "run.json"
REPORT_FILE = "report.html"


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


@dataclass(frozen=True)
class SessionRow:
    """One session with its scores and the user's satisfaction."""

    session_id: str
    task_type: str | None = None
    n_turns: int = 0
    scores: Mapping[str, float | None] = field(default_factory=dict)
    gold_satisfaction: float | None = None


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
    )


def _session_row_from_dict(d: Mapping[str, Any]) -> SessionRow:
    return SessionRow(
        session_id=str(d["session_id"]),
        task_type=d.get("task_type"),
        n_turns=int(d.get("n_turns") or 0),
        scores={str(k): _number_or_none(v) for k, v in (d.get("scores") or {}).items()},
        gold_satisfaction=_number_or_none(d.get("gold_satisfaction")),
    )


@dataclass(frozen=True)
class Run:
    """A run directory read back: its three tables, the meta-evaluation and the run info."""

    directory: Path
    links: tuple[LinkRow, ...]
    turns: tuple[TurnRow, ...]
    sessions: tuple[SessionRow, ...]
    meta: Mapping[str, Any] | None
    info: Mapping[str, Any]

    @property
    def report_path(self) -> Path:
        return self.directory / REPORT_FILE

    def score_names(self, level: Level = "session") -> list[str]:
        """The names of the scores present at ``level``, in first-seen order."""
        rows: Sequence[TurnRow | SessionRow] = self.sessions if level == "session" else self.turns
        seen: dict[str, None] = {}
        for row in rows:
            for name in row.scores:
                seen.setdefault(name, None)
        return list(seen)

    def scores(self, name: str, level: Level = "session") -> dict[str, float | None]:
        """``name``'s score per session id (``level="session"``) or per ``"<session>#<turn>"``.

        Raises :class:`KeyError` naming the known scores when ``name`` is not one of them.
        """
        known = self.score_names(level)
        if name not in known:
            raise KeyError(
                f"no score {name!r} at {level} level; known: {', '.join(known) or 'none'}"
            )
        if level == "session":
            return {row.session_id: row.scores.get(name) for row in self.sessions}
        return {f"{row.session_id}#{row.turn}": row.scores.get(name) for row in self.turns}

    def mean(self, name: str, level: Level = "session") -> float | None:
        """Mean of ``name`` over the rows where it is defined (``None`` when none is)."""
        values = [v for v in self.scores(name, level).values() if v is not None]
        return sum(values) / len(values) if values else None


def _write_atomic(path: Path, text: str) -> None:
    # A partial file must never look like a finished run: write aside, then rename.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    """Write ``document`` (which must carry ``version``) as indented UTF-8 JSON."""
    if "version" not in document:
        raise ValueError(f"{path.name}: every output document carries a 'version' field")
    _write_atomic(path, json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n")


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows)
    _write_atomic(path, text)


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


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]], base: Sequence[str]) -> None:
    flat = [_flatten(r) for r in rows]
    columns = list(base)
    for r in flat:
        for key in r:
            if key not in columns:
                columns.append(key)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        writer = csv_module.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        for r in flat:
            writer.writerow({k: "" if v is None else v for k, v in r.items()})
    os.replace(tmp, path)


def write_run(
    directory: str | os.PathLike[str],
    *,
    links: Sequence[LinkRow],
    turns: Sequence[TurnRow],
    sessions: Sequence[SessionRow],
    meta: Mapping[str, Any] | None,
    info: Mapping[str, Any],
    csv: bool = True,
) -> Path:
    """Write the tables (JSONL and, unless ``csv=False``, CSV), ``meta.json`` (when given)
    and ``run.json``.

    ``run.json`` is written last: its presence marks a complete run directory.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tables: list[tuple[str, list[dict[str, Any]], list[str]]] = [
        (
            LINKS_FILE,
            [link_row_to_dict(r) for r in links],
            ["version", "session_id", "turn", "link_id", "url", "title", "cited", "gold"],
        ),
        (
            TURNS_FILE,
            [turn_row_to_dict(r) for r in turns],
            ["version", "session_id", "turn", "task_type", "gold_satisfaction"],
        ),
        (
            SESSIONS_FILE,
            [session_row_to_dict(r) for r in sessions],
            ["version", "session_id", "task_type", "n_turns", "gold_satisfaction"],
        ),
    ]
    for name, rows, base in tables:
        _write_jsonl(out / name, rows)
        csv_path = out / name.replace(".jsonl", ".csv")
        if csv:
            _write_csv(csv_path, rows, base)
        elif csv_path.exists():
            csv_path.unlink()
    meta_path = out / META_FILE
    if meta is not None:
        write_json(meta_path, meta)
    elif meta_path.exists():
        meta_path.unlink()  # a stale meta-evaluation from an earlier run must not linger
    write_json(out / RUN_FILE, info)
    return out


def _read_json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON: {error.msg}", path=str(path), line=error.lineno
        ) from None
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


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as error:
                raise InputError(
                    f"not valid JSON: {error.msg}", path=str(path), line=number
                ) from None
            if not isinstance(row, dict):
                raise InputError("expected a JSON object", path=str(path), line=number)
            _check_version(row, path, number)
            rows.append(row)
    return rows


def load_run(directory: str | os.PathLike[str]) -> Run:
    """Read a run directory written by :func:`write_run` (``genir-eval run``)."""
    out = Path(directory)
    if not (out / RUN_FILE).is_file():
        raise InputError(
            f"not a finished run directory (no {RUN_FILE}); run `genir-eval run` first",
            path=str(out),
        )
    for name in (LINKS_FILE, TURNS_FILE, SESSIONS_FILE):
        if not (out / name).is_file():
            raise InputError(f"run directory is missing {name}", path=str(out))
    meta_path = out / META_FILE
    try:
        links = tuple(_link_row_from_dict(d) for d in _read_jsonl(out / LINKS_FILE))
        turns = tuple(_turn_row_from_dict(d) for d in _read_jsonl(out / TURNS_FILE))
        sessions = tuple(_session_row_from_dict(d) for d in _read_jsonl(out / SESSIONS_FILE))
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"malformed row: {error}", path=str(out)) from None
    return Run(
        directory=out,
        links=links,
        turns=turns,
        sessions=sessions,
        meta=_read_json(meta_path) if meta_path.is_file() else None,
        info=_read_json(out / RUN_FILE),
    )
