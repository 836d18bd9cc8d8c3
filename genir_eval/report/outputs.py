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
``run.json``
    the scenario, versions, provider and model per judge, usage, cost, duration, cache
    hits and failures.

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from genir_eval.errors import InputError, StorageError

__all__ = [
    "OUTPUT_VERSION",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "CitationRow",
    "Run",
    "Level",
    "write_run",
    "write_json",
    "write_text_atomic",
    "file_digest",
    "csv_cell",
    "load_run",
    "check_writable_folder",
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


@dataclass(frozen=True)
class Run:
    """A run directory read back: its three tables, the meta-evaluation and the run info."""

    directory: Path
    links: tuple[LinkRow, ...]
    turns: tuple[TurnRow, ...]
    sessions: tuple[SessionRow, ...]
    meta: Mapping[str, Any] | None
    info: Mapping[str, Any]
    citations: tuple[CitationRow, ...] = ()

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


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file of a unique name in the same
    folder, renamed into place: a reader sees the old file or the new one, never a part, and
    two writers never share a temporary file."""
    with _temporary(path) as handle:
        handle.write(text)


@contextlib.contextmanager
def _temporary(path: Path) -> Iterator[TextIO]:
    """A text handle on a fresh temporary file beside ``path``, renamed onto ``path`` when
    the block ends without an error (and removed when it raises)."""
    # O_EXCL on a random name, mode 0o666 so the umask applies as to any file (mkstemp's
    # 0o600 would make the outputs private)
    name = str(path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"))
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


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


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    """Write ``document`` (which must carry ``version``) as indented UTF-8 JSON."""
    if "version" not in document:
        raise ValueError(f"{path.name}: every output document carries a 'version' field")
    write_text_atomic(
        path, json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    )


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows)
    write_text_atomic(path, text)


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


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]], base: Sequence[str]) -> None:
    flat = [_flatten(r) for r in rows]
    columns = list(base)
    for r in flat:
        for key in r:
            if key not in columns:
                columns.append(key)
    with _temporary(path) as handle:
        writer = csv_module.DictWriter(
            handle, fieldnames=[csv_cell(c) for c in columns], restval=""
        )
        writer.writeheader()
        for r in flat:
            writer.writerow({csv_cell(k): csv_cell(v) for k, v in r.items()})


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
    """Write the tables (JSONL and, unless ``csv=False``, CSV), ``evidence.jsonl`` (when
    given: rows of :func:`genir_eval.report.evidence.evidence_rows`), ``meta.json`` (when
    given), ``report.html`` (rendered by ``report`` from the run as written) and
    ``run.json``; ``citations.jsonl`` only when there are citation rows.

    ``run.json`` is the completion marker: it is removed before anything else is written and
    written last, listing the SHA-256 of every file of the run (``files``), so a folder is
    either a finished run whose files belong together or, to :func:`load_run`, clearly not
    one (a killed re-run, two runs writing into one folder).
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        (out / RUN_FILE).unlink()
    written: list[str] = []
    tables: list[tuple[str, list[dict[str, Any]], list[str]]] = [
        (
            LINKS_FILE,
            [link_row_to_dict(r) for r in links],
            ["version", "session_id", "turn", "link_id", "url", "title", "cited", "gold"],
        ),
        (
            TURNS_FILE,
            [turn_row_to_dict(r) for r in turns],
            ["version", "session_id", "turn", "task_type", "gold_satisfaction", "thumbs"],
        ),
        (
            SESSIONS_FILE,
            [session_row_to_dict(r) for r in sessions],
            ["version", "session_id", "task_type", "n_turns", "gold_satisfaction"],
        ),
    ]
    citation_base = ["version", "session_id", "turn", "statement", "link_id", "judge"]
    tables.append((CITATIONS_FILE, [citation_row_to_dict(r) for r in citations], citation_base))
    for name, rows, base in tables:
        if name == CITATIONS_FILE and not rows:
            for stale in (name, name.replace(".jsonl", ".csv")):
                with contextlib.suppress(FileNotFoundError):
                    (out / stale).unlink()
            continue
        _write_jsonl(out / name, rows)
        written.append(name)
        csv_name = name.replace(".jsonl", ".csv")
        if csv:
            _write_csv(out / csv_name, rows, base)
            written.append(csv_name)
        else:
            with contextlib.suppress(FileNotFoundError):
                (out / csv_name).unlink()
    if evidence is not None:
        _write_jsonl(out / EVIDENCE_FILE, evidence)
        written.append(EVIDENCE_FILE)
    else:
        with contextlib.suppress(FileNotFoundError):
            (out / EVIDENCE_FILE).unlink()
    meta_path = out / META_FILE
    if meta is not None:
        write_json(meta_path, meta)
        written.append(META_FILE)
    else:
        # a stale meta-evaluation from an earlier run must not linger
        with contextlib.suppress(FileNotFoundError):
            meta_path.unlink()
    if report is not None:
        run = Run(
            directory=out,
            links=tuple(_link_row_from_dict(r) for r in tables[0][1]),
            turns=tuple(_turn_row_from_dict(r) for r in tables[1][1]),
            sessions=tuple(_session_row_from_dict(r) for r in tables[2][1]),
            meta=json.loads(json.dumps(meta)) if meta is not None else None,
            info=dict(info),
            citations=tuple(_citation_row_from_dict(r) for r in tables[3][1]),
        )
        write_text_atomic(out / REPORT_FILE, report(run))
        written.append(REPORT_FILE)
    files = {name: file_digest(out / name) for name in written}
    write_json(out / RUN_FILE, {**info, "files": files})
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
    """Read a run directory written by :func:`write_run` (``genir-eval run``).

    Refuses, naming the folder and the file, a folder that is not a finished run: no
    ``run.json`` (never written, or a re-run that stopped before the end), or a file whose
    SHA-256 differs from the one ``run.json`` lists (written by another run)."""
    out = Path(directory)
    if not out.is_dir():
        raise InputError(
            "no such folder" if not out.exists() else "not a folder (a run is a folder)",
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
    meta_path = out / META_FILE
    try:
        links = tuple(_link_row_from_dict(d) for d in _read_jsonl(out / LINKS_FILE))
        turns = tuple(_turn_row_from_dict(d) for d in _read_jsonl(out / TURNS_FILE))
        sessions = tuple(_session_row_from_dict(d) for d in _read_jsonl(out / SESSIONS_FILE))
        citations = tuple(
            _citation_row_from_dict(d)
            for d in (_read_jsonl(out / CITATIONS_FILE) if (out / CITATIONS_FILE).is_file() else [])
        )
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"malformed row: {error}", path=str(out)) from None
    return Run(
        directory=out,
        links=links,
        turns=turns,
        sessions=sessions,
        meta=_read_json(meta_path) if meta_path.is_file() else None,
        info=info,
        citations=citations,
    )


def _check_files(out: Path, info: Mapping[str, Any]) -> None:
    """Every file ``run.json`` lists is there with the same SHA-256 (a run written before
    ``files`` existed is taken as it is)."""
    files = info.get("files")
    if files is None:
        return
    if not isinstance(files, Mapping):
        raise InputError("'files' is not an object", path=str(out / RUN_FILE))
    for name, digest in files.items():
        path = out / str(name)
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


def check_writable_folder(folder: Path, what: str) -> None:
    """Create ``folder`` if needed and write and remove a small file in it, so a read-only
    or full folder is reported before any paid call rather than after all of them."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _temporary(folder / ".genir-eval-write-check") as handle:
            handle.write("genir-eval checks that it can write here\n")
        (folder / ".genir-eval-write-check").unlink()
    except OSError as error:
        raise StorageError(
            f"cannot write to {what}: {error.strerror or error}; choose another folder "
            "(--out DIR) or make this one writable",
            path=str(folder),
        ) from None
