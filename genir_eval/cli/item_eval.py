"""``python -m genir_eval.cli.item_eval SESSIONS``: the ITEM variants next to one-shot judging
and the RUBRIC judges on a log with gold link usefulness, as tables (or ``--json``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

from genir_eval.meta.item_eval import (
    ITEM_JUDGES,
    RUBRIC_JUDGES,
    format_item_table,
    format_rubric_table,
)
from genir_eval.runner.judge_eval import compare_item

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m genir_eval.cli.item_eval SESSIONS``: ITEM variants next to one-shot
    judging on a log with gold link usefulness (offline unless engine options say
    otherwise)."""
    from genir_eval.cli.engine_options import add_engine_arguments, engine_from_args
    from genir_eval.ingest import load_sessions

    parser = argparse.ArgumentParser(prog="python -m genir_eval.cli.item_eval")
    parser.add_argument("sessions", help="a session log (URGE CSV, canonical JSONL, ...)")
    parser.add_argument(
        "--judges", nargs="+", default=list(ITEM_JUDGES), choices=ITEM_JUDGES + RUBRIC_JUDGES
    )
    parser.add_argument("--gold-min", type=int, default=3, choices=(1, 2, 3))
    parser.add_argument("-k", type=int, default=5, help="nDCG cut-off (default 5)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    add_engine_arguments(parser)
    args = parser.parse_args(argv)
    sessions = list(load_sessions(args.sessions).sessions)

    async def run() -> dict[str, dict[str, Any]]:
        async with engine_from_args(args) as engine:
            return await compare_item(
                sessions, engine, args.judges, gold_min=args.gold_min, k=args.k
            )

    reports = asyncio.run(run())
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
        return 0
    item = {name: r for name, r in reports.items() if "final" in r}
    rubric = {name: r for name, r in reports.items() if "binary" in r}
    if item:
        print(format_item_table(item))
    if rubric:
        print(format_rubric_table(rubric))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
