"""A run's judgments and scores written back to the traces they judge, as OTLP/JSON.

Each judgment (``evidence.jsonl``) and each turn and session score becomes a
``gen_ai.evaluation.result`` event, the OpenTelemetry GenAI conventions' record of an
evaluation: an OTLP log record whose ``eventName`` is ``gen_ai.evaluation.result``, whose
``traceId`` and ``spanId`` are those of the span it judges (the conventions: the event
"SHOULD be parented to the GenAI operation span being evaluated"), with the attributes
``gen_ai.evaluation.name`` (the judge or score), ``gen_ai.evaluation.score.value`` (a
number), ``gen_ai.evaluation.score.label`` (a judge's own label, as citation support's
``full``/``partial``/``none``) and ``gen_ai.evaluation.explanation`` (the judge's reason). A
missing judgment has no score value, ``error.type`` ``missing`` and its reason as the
explanation.

Which span: a link judgment goes to the retrieval that returned the link, a statement or
citation judgment to the model call that wrote the answer, any other turn judgment and the
turn's scores to the turn's root span, a session judgment and the session's scores to its
first turn's root span (``genir.level`` says which level it is). ``genir.session_id``,
``genir.turn`` and ``genir.item`` name the run's row.

The file is OTLP/JSON's ``ExportLogsServiceRequest``, one a line per row of the run's tables
(a turn's judgments, a turn's scores, a session's scores: what a collector's
``otlpjsonfile`` receiver reads): hex ids, integer enums, built with
``opentelemetry-proto``'s classes and protobuf's ``json_format``.
"""

from __future__ import annotations

import base64
import json
import math
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from genir_eval.errors import InputError
from genir_eval.paths import output_file
from genir_eval.records import PACKAGE_VERSION
from genir_eval.rundir.files import _iter_jsonl
from genir_eval.rundir.rows import EVIDENCE_FILE
from genir_eval.rundir.run import Run
from genir_eval.runner.export.spans import SpanIndex, TurnSpans, span_index

__all__ = ["EVENT_NAME", "write_otlp_scores", "write_otlp_file", "logs_json_line"]

EVENT_NAME = "gen_ai.evaluation.result"
_SEVERITY_INFO = 9


def _value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=str(value))


def _attributes(values: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=_value(v)) for k, v in values.items() if v is not None]


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _label(raw: Any) -> str | None:
    """A judge's own label from its raw reply (``support``, ``label``), when it gives one."""
    if not isinstance(raw, str) or not raw.startswith("{"):
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    if isinstance(parsed, Mapping):
        for key in ("support", "label"):
            if isinstance(parsed.get(key), str):
                return str(parsed[key])
    return None


def _span_for(turn: TurnSpans, item: str) -> str:
    kind, _, rest = item.partition(":")
    if kind == "link" and rest.isdigit():
        return turn.link_span(int(rest)) or turn.span_id
    if kind in ("cite", "stmt") and turn.llm_span_id:
        return turn.llm_span_id
    return turn.span_id


def _record(trace_id: str, span_id: str, attrs: Mapping[str, Any], now: int) -> LogRecord:
    return LogRecord(
        time_unix_nano=now,
        observed_time_unix_nano=now,
        severity_number=_SEVERITY_INFO,  # type: ignore[arg-type]
        severity_text="INFO",
        event_name=EVENT_NAME,
        trace_id=bytes.fromhex(trace_id),
        span_id=bytes.fromhex(span_id),
        attributes=_attributes(attrs),
    )


def _judgment_records(
    row: Mapping[str, Any], turns: tuple[TurnSpans, ...], now: int
) -> Iterator[LogRecord]:
    session_id = row["session_id"]
    turn_number = row.get("turn")
    turn = turns[turn_number - 1] if isinstance(turn_number, int) else turns[0]
    level = "turn" if isinstance(turn_number, int) else "session"
    for judgment in row.get("judgments") or []:
        item = str(judgment.get("item") or "")
        value = judgment.get("value")
        number = _number(value)
        missing = judgment.get("missing_reason")
        attrs: dict[str, Any] = {
            "gen_ai.evaluation.name": judgment.get("judge"),
            "gen_ai.evaluation.score.value": number,
            "gen_ai.evaluation.score.label": _label(judgment.get("raw")),
            "gen_ai.evaluation.explanation": missing or judgment.get("reason") or None,
            "error.type": "missing" if missing else None,
            "genir.level": level,
            "genir.session_id": session_id,
            "genir.turn": turn_number,
            "genir.item": item,
            "genir.repeat": judgment.get("repeat"),
        }
        if value is not None and number is None:  # a structured label: kept whole, as JSON
            attrs["genir.evaluation.value"] = json.dumps(value, ensure_ascii=False)
        yield _record(turn.trace_id, _span_for(turn, item), attrs, now)


def _score_records(
    row: Mapping[str, Any], level: str, turn: TurnSpans, now: int
) -> Iterator[LogRecord]:
    for name, value in (row.get("scores") or {}).items():
        number = _number(value)
        yield _record(
            turn.trace_id,
            turn.span_id,
            {
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": number,
                "error.type": "missing" if number is None else None,
                "gen_ai.evaluation.explanation": "no value: the score is undefined for this "
                f"{level} (its labels are missing or it has nothing to score)"
                if number is None
                else None,
                "genir.level": level,
                "genir.session_id": row["session_id"],
                "genir.turn": row.get("turn"),
            },
            now,
        )


def logs_json_line(records: list[LogRecord]) -> str:
    """One OTLP/JSON ``ExportLogsServiceRequest`` line holding ``records``."""
    request = ExportLogsServiceRequest()
    resource = request.resource_logs.add()
    resource.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value="genir-eval"))
    )
    scope = resource.scope_logs.add()
    scope.scope.name = "genir-eval"
    scope.scope.version = PACKAGE_VERSION
    scope.log_records.extend(records)
    data = json_format.MessageToDict(request, use_integers_for_enums=True)
    for resource_logs in data.get("resourceLogs", []):
        for scope_logs in resource_logs.get("scopeLogs", []):
            for record in scope_logs.get("logRecords", []):
                for key in ("traceId", "spanId"):
                    if key in record:  # OTLP/JSON: hex, not proto3 JSON's base64
                        record[key] = base64.b64decode(record[key]).hex()
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _check_ids(index: SpanIndex, source: str | None) -> None:
    for session_id, turns in index.items():
        for turn in turns:
            ids = [turn.trace_id, turn.span_id, *(s for _, s in turn.documents if s)]
            sizes = [32] + [16] * (len(ids) - 1)
            for value, size in zip(ids, sizes, strict=True):
                if len(value) != size or any(c not in "0123456789abcdef" for c in value):
                    raise InputError(
                        f"session {session_id!r}: id {value[:40]!r} is not an OpenTelemetry "
                        f"{'trace' if size == 32 else 'span'} id ({size} hex digits): the run's "
                        f"input is {source} traces; write them with --format parquet",
                    )


def write_otlp_scores(run: Run, out: IO[str]) -> dict[str, int]:
    """Write every judgment and score of ``run`` to ``out`` as OTLP/JSON log lines; returns
    the counts (``events``, ``judgments``, ``scores``, ``sessions``)."""
    index, source = span_index(run)
    if not index:
        raise InputError(
            "the run's input holds no trace ids (it was not read from traces): there is no "
            "span to attach the scores to; use --format parquet",
            path=str((run.info.get("input") or {}).get("path")),
        )
    _check_ids(index, source)
    now = time.time_ns()
    counts = {"events": 0, "judgments": 0, "scores": 0, "sessions": 0}
    sessions: set[str] = set()

    def write(session_id: str, records: list[LogRecord], kind: str) -> None:
        # a line a row of the run's tables: memory stays one row's events
        if records:
            out.write(logs_json_line(records) + "\n")
            counts["events"] += len(records)
            counts[kind] += len(records)
            sessions.add(session_id)

    evidence = run.directory / EVIDENCE_FILE
    for row in _iter_jsonl(evidence) if evidence.is_file() else iter(()):
        turns = _turns(index, row["session_id"])
        write(row["session_id"], list(_judgment_records(row, turns, now)), "judgments")
    for row in run.iter_rows("turns"):
        turn = _turns(index, row["session_id"])[row["turn"] - 1]
        write(row["session_id"], list(_score_records(row, "turn", turn, now)), "scores")
    for row in run.iter_rows("sessions"):
        first = _turns(index, row["session_id"])[0]
        write(row["session_id"], list(_score_records(row, "session", first, now)), "scores")
    counts["sessions"] = len(sessions)
    return counts


def _turns(index: SpanIndex, session_id: str) -> tuple[TurnSpans, ...]:
    turns = index.get(session_id)
    if not turns:
        raise InputError(
            f"session {session_id!r} of the run is not in its input's traces (the input "
            "changed, or the run read other sessions)"
        )
    return turns


def write_otlp_file(run: Run, path: Path, option: str = "--out") -> dict[str, int]:
    """:func:`write_otlp_scores` into ``path``, which appears only once it is whole: through
    :func:`genir_eval.paths.output_file` (a fresh temporary file renamed into place), so a
    device, a FIFO or a link standing at ``path`` is refused, never written through."""
    with output_file(path, option) as out:
        return write_otlp_scores(run, out)
