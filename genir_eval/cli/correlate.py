"""``genir-eval correlate``: URGE's link-based correlation table for a file of sessions."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.errors import ConfigError
from genir_eval.ingest import FORMATS, load_sessions
from genir_eval.meta.urge_table import urge_table
from genir_eval.settings import setting_type

__all__ = ["add_parser", "run", "format_table"]

LABEL_SOURCES: tuple[str, ...] = ("gold",)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "correlate",
        help=COMMANDS["correlate"],
        description=(
            "Compute URGE's query- and session-level usefulness measures from link labels and "
            "correlate them with the users' satisfaction (Pearson with a bootstrap interval, "
            "Spearman, Kendall tau-b)."
        ),
    )
    parser.add_argument("input", metavar="SESSIONS", help="file of sessions (JSONL, URGE CSV, ...)")
    parser.add_argument(
        "--labels",
        default="gold",
        metavar="SOURCE",
        help="where the link labels come from: 'gold', the annotators' labels in the file "
        "(default: gold)",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="input format (default: from the file name)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--bootstrap",
        type=setting_type("n_boot"),
        default=1000,
        metavar="N",
        help="bootstrap resamples, 0 for none (default: 1000)",
    )
    parser.add_argument(
        "--seed",
        type=setting_type("seed"),
        default=0,
        metavar="S",
        help="bootstrap seed (default: 0)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.labels not in LABEL_SOURCES:
        raise ConfigError(
            f"--labels: unknown label source {args.labels!r}; expected one of {LABEL_SOURCES}"
        )
    result = load_sessions(args.input, format=args.format)
    table = urge_table(result.sessions, n_boot=args.bootstrap, seed=args.seed)
    if args.json:
        json.dump(table, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_table(table))
    return 0


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _interval(bounds: list[float] | None) -> str:
    return "" if bounds is None else f"[{bounds[0]:+.2f}, {bounds[1]:+.2f}]"


METHODS = ("pearson", "spearman", "kendall")
SECTIONS = (
    ("query level (turns vs query satisfaction)", "query_level"),
    ("session level (sessions vs session satisfaction)", "session_level"),
    (
        "users' own ratings, a ceiling and not a metric (their query satisfaction averaged "
        "per session, vs their session satisfaction)",
        "users_own_ratings",
    ),
)


def format_table(table: dict[str, Any]) -> str:
    """The overall rows of :func:`urge_table` as aligned text: query level, session level,
    and apart the users' own ratings (the ceiling), each coefficient with its interval."""
    header = ("metric", "n", "Pearson", "95% CI", "Spearman", "95% CI", "Kendall", "95% CI")
    sections = [(title, table.get(key) or {}) for title, key in SECTIONS]
    rows: list[tuple[str, ...]] = []
    for _, block in sections:
        for name, stats in block.items():
            cells = [name, str(stats["n"])]
            for method in METHODS:
                cells += [_number(stats[method]), _interval(stats["ci95"][method])]
            rows.append(tuple(cells))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    out: list[str] = []
    position = 0
    for title, block in sections:
        if not block:
            continue
        out.append(title)
        out.append(line(header))
        out.extend(line(r) for r in rows[position : position + len(block)])
        out.append("")
        position += len(block)
    out.append(
        "Kendall is tau-b; the CIs are percentile bootstraps; the q2s_ rows are the users' own "
        "ratings (an upper reference for the metrics, not one of them); --json adds per task "
        "type."
    )
    return "\n".join(out) + "\n"
