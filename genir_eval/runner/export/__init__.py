"""Scores out: a run's judgments and scores written back where a team looks, as
OpenTelemetry ``gen_ai.evaluation.result`` events on the spans they judge (OTLP/JSON) and
as Parquet tables with a versioned schema, read back as pandas DataFrames."""

from genir_eval.runner.export.otlp import EVENT_NAME, write_otlp_file, write_otlp_scores
from genir_eval.runner.export.parquet import (
    SCHEMA_VERSION,
    TABLES,
    load_tables,
    run_tables,
    write_parquet_tables,
)
from genir_eval.runner.export.spans import TurnSpans, span_index

__all__ = [
    "EVENT_NAME",
    "SCHEMA_VERSION",
    "TABLES",
    "TurnSpans",
    "load_tables",
    "run_tables",
    "span_index",
    "write_otlp_file",
    "write_otlp_scores",
    "write_parquet_tables",
]
