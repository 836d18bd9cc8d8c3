"""``genir-eval judges [--json]``: every judge a scenario can name, with its options."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "run", "format_judges"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "judges",
        help="list every judge with its kind, options and their defaults",
        description=(
            "List every judge a scenario ([[judges]] name = ...) or `genir-eval meta --judge` "
            "can name: its kind (what it labels), what it does, and each option with its "
            "default and bound or choices (set them with options = {...} in a scenario, "
            "--option KEY=VALUE in meta)."
        ),
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON array instead of text (default: text)"
    )
    parser.set_defaults(func=run)
    return parser


def _default(value: Any) -> str:
    return "-" if value is None else json.dumps(value)


def _bound(option: Any) -> str:
    if option.choices is not None:
        return " (" + " | ".join(_default(c) for c in option.choices) + ")"
    if option.range is not None:
        low, high = (_default(int(v) if float(v).is_integer() else v) for v in option.range)
        return f" ({low} to {high})"
    return ""


def format_judges(entries: Any) -> str:
    lines = []
    for entry in entries:
        lines.append(f"{entry.name}  [{entry.kind}]")
        if entry.summary:
            lines.append(f"  {entry.summary}")
        width = max((len(o.name) for o in entry.options), default=0)
        for option in entry.options:
            lines.append(
                f"    {option.name.ljust(width)}  default {_default(option.default)}"
                f"{_bound(option)}: {option.help}"
            )
        lines.append("")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from genir_eval.judges.catalog import judge_catalog

    entries = judge_catalog()
    if args.json:
        json.dump([e.to_dict() for e in entries], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_judges(entries))
    return 0
