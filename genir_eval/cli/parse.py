"""``genir-eval parse``: read logs in any supported format, write canonical JSONL."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from genir_eval.ingest import FORMATS, load_sessions, write_jsonl

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "parse",
        help="read sessions (URGE CSV, JSONL or Markdown) and write canonical JSONL",
        description=(
            "Read search sessions and write them as canonical JSONL, one session a line. "
            "The input format is taken from the extension (.csv URGE, .jsonl, .md Markdown) "
            "unless --format says otherwise."
        ),
    )
    parser.add_argument("input", metavar="INPUT", help="file of sessions to read")
    parser.add_argument(
        "-o", "--output", required=True, metavar="SESSIONS.jsonl", help="JSONL file to write"
    )
    parser.add_argument("--format", choices=FORMATS, default=None, help="input format")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out invalid sessions (each is listed on stderr) instead of stopping",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    result = load_sessions(args.input, format=args.format, skip_invalid=args.skip_invalid)
    write_jsonl(result.sessions, args.output)
    for error in result.skipped:
        print(f"genir-eval: skipped: {error}", file=sys.stderr)
    turns = sum(len(s.turns) for s in result.sessions)
    links = sum(len(t.links) for s in result.sessions for t in s.turns)
    print(
        f"parsed {len(result.sessions)} sessions, {turns} turns, {links} links, "
        f"{len(result.skipped)} skipped -> {args.output}",
        file=sys.stderr,
    )
    return 0
