"""A run's tables as Parquet, with a documented, versioned schema, and read back as pandas
DataFrames (:func:`load_tables`). pyarrow and pandas are the ``tables`` extra.

The folder holds ``sessions.parquet``, ``turns.parquet``, ``links.parquet``,
``judgments.parquet`` and ``schema.json`` (:data:`SCHEMA_VERSION` and every table's columns
with their type and meaning, :data:`TABLES`). Besides the fixed columns below, a table has
one float column per score (``score.<name>``: ``score.citation_precision``) and, for links,
one per link judge (``label.<judge>``, with ``missing.<judge>`` its reason when missing). A
missing value is null, never 0. When the run's input came from traces, each row carries the
trace and span ids it came from (null otherwise).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genir_eval.errors import ConfigError, InputError
from genir_eval.paths import check_output_path, output_file, write_output
from genir_eval.rundir.files import _iter_jsonl
from genir_eval.rundir.rows import EVIDENCE_FILE
from genir_eval.rundir.run import Run
from genir_eval.runner.export.spans import SpanIndex, TurnSpans, span_index

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SCHEMA_VERSION", "SCHEMA_FILE", "TABLES", "write_parquet_tables", "load_tables"]

#: The version of the folder's layout; a reader refuses another.
SCHEMA_VERSION = 1
SCHEMA_FILE = "schema.json"
#: table -> (column, type, meaning), the fixed columns of each table in order
TABLES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "sessions": (
        ("session_id", "string", "the session's id"),
        ("task_type", "string", "the session's task type, when the log gives one"),
        ("n_turns", "int64", "its number of turns"),
        ("gold_satisfaction", "double", "the user's satisfaction with the session (1-5)"),
        ("trace_id", "string", "the trace of its first turn (traces only)"),
        ("span_id", "string", "the root span of its first turn (traces only)"),
    ),
    "turns": (
        ("session_id", "string", "the session's id"),
        ("turn", "int64", "the turn's position, from 1"),
        ("query", "string", "the user's query"),
        ("response_text", "string", "the answer, its citation markers taken out"),
        ("task_type", "string", "the session's task type"),
        ("gold_satisfaction", "double", "the user's satisfaction with the turn (1-5)"),
        ("thumbs", "int64", "the user's thumbs: 1 up, 0 down, null none"),
        ("feedback", "string", "the user's free-text feedback"),
        ("trace_id", "string", "the turn's trace (traces only)"),
        ("span_id", "string", "the turn's root span (traces only)"),
        ("llm_span_id", "string", "the model call that wrote the answer (traces only)"),
    ),
    "links": (
        ("session_id", "string", "the session's id"),
        ("turn", "int64", "the turn's position, from 1"),
        ("link_id", "int64", "the link's number in the turn (its citation number)"),
        ("url", "string", "the link's url"),
        ("title", "string", "the link's title"),
        ("cited", "bool", "whether the answer cites it"),
        ("gold", "double", "the annotators' usefulness label (0-3)"),
        ("trace_id", "string", "the turn's trace (traces only)"),
        ("span_id", "string", "the retrieval that returned the link (traces only)"),
        ("document_id", "string", "the retrieved document's id (traces only)"),
    ),
    "judgments": (
        ("session_id", "string", "the session's id"),
        ("turn", "int64", "the turn's position, null for a session judgment"),
        ("judge", "string", "the judge's name"),
        ("item", "string", "what was judged: link:N, cite:S:L, stmt:S, session, ..."),
        ("repeat", "int64", "the repeat of the judgment, from 0"),
        ("value", "double", "the judgment's value, null when missing or not a number"),
        ("value_json", "string", "the judgment's value as JSON (a structured label)"),
        ("missing_reason", "string", "why the judgment is missing (null when it is not)"),
        ("reason", "string", "the judge's explanation"),
        ("trace_id", "string", "the judged turn's trace (traces only)"),
        ("span_id", "string", "the span the judgment judges (traces only)"),
    ),
}
_SCORE_COLUMNS = {"sessions", "turns"}


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            "Parquet tables need pyarrow (and pandas to load them): "
            "pip install 'genir-eval[tables]'"
        ) from None
    return pa, pq


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _turn(index: SpanIndex, session_id: str, turn: int | None) -> TurnSpans | None:
    turns = index.get(session_id)
    if not turns:
        return None
    position = (turn or 1) - 1
    return turns[position] if 0 <= position < len(turns) else None


def _rows(run: Run, index: SpanIndex, table: str) -> Iterator[dict[str, Any]]:
    """The rows of ``table``, one at a time."""
    readers = {
        "sessions": _session_rows,
        "turns": _turn_rows,
        "links": _link_rows,
        "judgments": _judgment_rows,
    }
    yield from readers[table](run, index)


def _session_rows(run: Run, index: SpanIndex) -> Iterator[dict[str, Any]]:
    for row in run.iter_rows("sessions"):
        ids = _turn(index, row["session_id"], 1)
        yield (
            {
                "session_id": row["session_id"],
                "task_type": row.get("task_type"),
                "n_turns": row.get("n_turns"),
                "gold_satisfaction": _number(row.get("gold_satisfaction")),
                "trace_id": ids.trace_id if ids else None,
                "span_id": ids.span_id if ids else None,
                **{f"score.{k}": _number(v) for k, v in (row.get("scores") or {}).items()},
            }
        )


def _turn_rows(run: Run, index: SpanIndex) -> Iterator[dict[str, Any]]:
    for row in run.iter_rows("turns"):
        ids = _turn(index, row["session_id"], row["turn"])
        yield (
            {
                **{k: row.get(k) for k in ("session_id", "turn", "query", "response_text")},
                "task_type": row.get("task_type"),
                "gold_satisfaction": _number(row.get("gold_satisfaction")),
                "thumbs": row.get("thumbs"),
                "feedback": row.get("feedback"),
                "trace_id": ids.trace_id if ids else None,
                "span_id": ids.span_id if ids else None,
                "llm_span_id": ids.llm_span_id if ids else None,
                **{f"score.{k}": _number(v) for k, v in (row.get("scores") or {}).items()},
            }
        )


def _link_rows(run: Run, index: SpanIndex) -> Iterator[dict[str, Any]]:
    for row in run.iter_rows("links"):
        ids = _turn(index, row["session_id"], row["turn"])
        link_id = row["link_id"]
        out = {
            **{k: row.get(k) for k in ("session_id", "turn", "link_id", "url", "title", "cited")},
            "gold": _number(row.get("gold")),
            "trace_id": ids.trace_id if ids else None,
            "span_id": ids.link_span(link_id) if ids else None,
            "document_id": ids.document_id(link_id) if ids else None,
        }
        out.update({f"label.{k}": _number(v) for k, v in (row.get("labels") or {}).items()})
        out.update({f"missing.{k}": v for k, v in (row.get("missing") or {}).items()})
        yield out


def _judgment_rows(run: Run, index: SpanIndex) -> Iterator[dict[str, Any]]:
    evidence = run.directory / EVIDENCE_FILE
    for row in _iter_jsonl(evidence) if evidence.is_file() else iter(()):
        turn = row.get("turn") if isinstance(row.get("turn"), int) else None
        ids = _turn(index, row["session_id"], turn)
        for judgment in row.get("judgments") or []:
            value = judgment.get("value")
            item = str(judgment.get("item") or "")
            yield (
                {
                    "session_id": row["session_id"],
                    "turn": turn,
                    "judge": judgment.get("judge"),
                    "item": item,
                    "repeat": judgment.get("repeat"),
                    "value": _number(value),
                    "value_json": None if value is None else json.dumps(value, ensure_ascii=False),
                    "missing_reason": judgment.get("missing_reason"),
                    "reason": judgment.get("reason"),
                    "trace_id": ids.trace_id if ids else None,
                    "span_id": _judged_span(ids, item) if ids else None,
                }
            )


def _judged_span(ids: TurnSpans, item: str) -> str:
    kind, _, rest = item.partition(":")
    if kind == "link" and rest.isdigit():
        return ids.link_span(int(rest)) or ids.span_id
    if kind in ("cite", "stmt") and ids.llm_span_id:
        return ids.llm_span_id
    return ids.span_id


def _schema(pa: Any, table: str, rows: Iterable[dict[str, Any]]) -> Any:
    """The table's columns: the fixed ones, then every score, label and missing column its
    rows hold (a first pass over them)."""
    types = {"string": pa.string(), "int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_()}
    fields = [pa.field(name, types[kind]) for name, kind, _ in TABLES[table]]
    extra: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key.startswith(("score.", "label.", "missing.")):
                extra.setdefault(key, None)
    for key in extra:
        fields.append(pa.field(key, pa.string() if key.startswith("missing.") else pa.float64()))
    return pa.schema(fields)


#: rows a Parquet row group holds: memory is one batch, not the run
BATCH = 10_000


def _write_table(
    pa: Any, pq: Any, path: Path, schema: Any, rows: Iterable[dict[str, Any]], option: str
) -> int:
    """Write ``rows`` to ``path`` a row group of :data:`BATCH` at a time, through
    :func:`genir_eval.paths.output_file` (pyarrow writes into the fresh temporary file's
    handle, renamed onto ``path`` once the table is whole)."""
    count = 0
    with (
        output_file(path, option, binary=True) as handle,
        pq.ParquetWriter(handle, schema) as writer,
    ):
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append({f: row.get(f) for f in schema.names})
            if len(batch) == BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count += len(batch)
                batch = []
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return count + len(batch)


def write_parquet_tables(run: Run, folder: Path, option: str = "--out") -> dict[str, int]:
    """Write the run's four tables and ``schema.json`` into ``folder``, each table read twice
    from the run (its columns, then its rows a batch at a time); returns each table's rows.
    Every file is written through :mod:`genir_eval.paths` (``option``: how the user named
    the folder), and each path is checked before any is written: a device, a FIFO or a link
    standing at one is refused before any work."""
    pa, pq = _pyarrow()
    for name in [*(f"{table}.parquet" for table in TABLES), SCHEMA_FILE]:
        check_output_path(folder / name, option)
    index, _ = span_index(run)
    described: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for name in TABLES:
        schema = _schema(pa, name, _rows(run, index, name))
        counts[name] = _write_table(
            pa, pq, folder / f"{name}.parquet", schema, _rows(run, index, name), option
        )
        fixed = {column: (kind, doc) for column, kind, doc in TABLES[name]}
        described[name] = [
            {
                "name": f,
                "type": fixed.get(f, ("string" if f.startswith("missing.") else "double", ""))[0],
                "doc": fixed[f][1] if f in fixed else _dynamic_doc(f),
            }
            for f in schema.names
        ]
    write_output(
        folder / SCHEMA_FILE,
        json.dumps({"version": SCHEMA_VERSION, "tables": described}, indent=2) + "\n",
        option,
    )
    return counts


def run_tables(run: Run) -> dict[str, pd.DataFrame]:
    """The run's four tables as pandas DataFrames, by name, built in memory with the columns
    and types :func:`write_parquet_tables` writes (so they equal what :func:`load_tables`
    reads back from its export)."""
    pa, _ = _pyarrow()
    _need_pandas("run_tables")
    index, _ = span_index(run)
    frames: dict[str, pd.DataFrame] = {}
    for name in TABLES:
        schema = _schema(pa, name, _rows(run, index, name))
        rows = [{f: row.get(f) for f in schema.names} for row in _rows(run, index, name)]
        frames[name] = pa.Table.from_pylist(rows, schema=schema).to_pandas()
    return frames


def _need_pandas(what: str) -> None:
    try:
        import pandas  # noqa: F401 - to_pandas needs it; say so before it fails
    except ImportError:
        raise ConfigError(f"{what} needs pandas: pip install 'genir-eval[tables]'") from None


def _dynamic_doc(column: str) -> str:
    kind, _, name = column.partition(".")
    return {
        "score": f"the score {name} (null: undefined or its labels missing)",
        "label": f"judge {name}'s usefulness label (null: missing or not judged)",
        "missing": f"why judge {name}'s label is missing",
    }[kind]


def load_tables(path: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of an export folder (``genir-eval export RUN --format parquet``) as pandas
    DataFrames, by name (``sessions``, ``turns``, ``links``, ``judgments``)."""
    _, pq = _pyarrow()
    _need_pandas("load_tables")
    folder = Path(path)
    schema_path = folder / SCHEMA_FILE
    if not schema_path.is_file():
        raise InputError(
            f"not a Parquet export of a run (no {SCHEMA_FILE}); write one with "
            "`genir-eval export RUN_DIR --format parquet -o FOLDER`",
            path=str(folder),
        )
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    if not isinstance(schema, Mapping) or schema.get("version") != SCHEMA_VERSION:
        raise InputError(
            f"schema version {schema.get('version') if isinstance(schema, Mapping) else '?'} "
            f"is not this genir-eval's ({SCHEMA_VERSION})",
            path=str(schema_path),
        )
    return {name: pq.read_table(folder / f"{name}.parquet").to_pandas() for name in TABLES}
