"""``genir-eval export``: a run's judgments and scores, back where the team looks.

``--format otlp`` writes every judgment and score as a ``gen_ai.evaluation.result`` event
on the span it judges (OTLP/JSON logs, ``evaluations.otlp.jsonl``), for a collector or a
tracing tool to ingest beside the traces; ``--format parquet`` writes the run's session,
turn, link and judgment tables with a versioned schema (``schema.json``), which
``genir_eval.load_tables`` reads back as pandas DataFrames. The output folder is a new or
empty one, or one ``export`` wrote before.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from genir_eval.cli.commands import COMMANDS

__all__ = ["add_parser", "run", "OTLP_FILE"]

OTLP_FILE = "evaluations.otlp.jsonl"
_PARQUET_FILES = ("sessions.parquet", "turns.parquet", "links.parquet", "judgments.parquet")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export",
        help=COMMANDS["export"],
        description=(
            "Write a run's judgments and scores back where a team looks: --format otlp as "
            "OpenTelemetry gen_ai.evaluation.result events on the spans they judge (the run "
            "must have read traces), --format parquet as session, turn, link and judgment "
            "tables with a versioned schema."
        ),
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a finished run's folder")
    parser.add_argument(
        "--format",
        choices=("otlp", "parquet"),
        required=True,
        help="what to write (required): otlp evaluation events, or parquet tables",
    )
    parser.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="FOLDER",
        help=f"folder to write into (required): {OTLP_FILE}, or the tables and schema.json",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from genir_eval.paths import claim_folder, record_files, release_folder
    from genir_eval.rundir.reader import load_run
    from genir_eval.runner.export import write_otlp_file, write_parquet_tables

    run_ = load_run(args.run_dir)
    folder = Path(args.out)
    claimed = claim_folder(folder, "export", signature=(OTLP_FILE, "schema.json"), option="--out")
    try:
        if args.format == "otlp":
            counts = write_otlp_file(run_, folder / OTLP_FILE)
            record_files(folder, "export", [OTLP_FILE])
            print(
                f"wrote {counts['events']} gen_ai.evaluation.result events ({counts['judgments']} "
                f"judgments, {counts['scores']} scores) on the spans of "
                f"{counts['sessions']} sessions -> {folder / OTLP_FILE}",
                file=sys.stderr,
            )
        else:
            rows = write_parquet_tables(run_, folder)
            record_files(folder, "export", [*_PARQUET_FILES, "schema.json"])
            shown = ", ".join(f"{name} {count}" for name, count in rows.items())
            print(f"wrote Parquet tables ({shown} rows) -> {folder}", file=sys.stderr)
    except BaseException:
        release_folder(folder, claimed)
        raise
    return 0
