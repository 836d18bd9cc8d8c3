"""``genir-eval failures RUN [--json]``: a run's missing judgments grouped by cause.

Each cause (:mod:`genir_eval.rundir.causes`: connection refused, timeout, HTTP 429, no
source text...) with how many judgments it cost, the judges it hit, the endpoints, its most
frequent reason, the first sessions and a hint of what to check; above them, each judge's
missing share as ``max_missing`` reads it, and whether the run failed and why. Read from the
run folder alone (``failures.jsonl``, else ``run.json``), a failed run too; exit 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.figures import counted

__all__ = ["add_parser", "run", "failure_report"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "failures",
        help=COMMANDS["failures"],
        description=(
            "Print RUN's missing judgments grouped by cause: for each, how many, the judges it "
            "hit, the endpoints, its most frequent reason, the first sessions and what to "
            "check; each judge's missing share against max_missing; whether the run failed."
        ),
    )
    parser.add_argument("run_dir", metavar="RUN", help="a run folder (genir-eval run's --out)")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document instead of text"
    )
    parser.set_defaults(func=run)


def failure_report(run: Any) -> dict[str, Any]:
    """The document ``--json`` prints: the status, each judge's share, the groups."""
    from genir_eval.report.html import failure_groups, run_status

    status = run_status(run)
    groups, _ = failure_groups(run, limit=None)
    judges = []
    for judge in run.info.get("judges") or []:
        if isinstance(judge, Mapping):
            total, missing = int(judge.get("labels") or 0), int(judge.get("missing") or 0)
            share = missing / total if total else None
            judges.append(
                {"judge": judge.get("id"), "missing": missing, "labels": total, "share": share}
            )
    return {
        "version": 1,
        "run": str(run.directory),
        "ok": bool(status.get("ok", True)),
        "reasons": list(status.get("reasons") or ()),
        "max_missing": status.get("max_missing"),
        "missing": run.failures_total,
        "judges": judges,
        "causes": [group.__dict__ for group in groups],
    }


def _text(report: Mapping[str, Any]) -> str:
    lines = [f"{report['run']}: {counted(report['missing'], 'judgment')} missing"]
    if not report["ok"]:
        lines.append("the run FAILED:")
        lines += [f"  {reason}" for reason in report["reasons"]]
    limit = report["max_missing"]
    allowed = f" (max_missing {limit:.1%} of each judge's labels)" if limit is not None else ""
    lines.append(f"missing per judge{allowed}:")
    for judge in report["judges"]:
        share = f" ({judge['share']:.1%})" if judge["share"] is not None else ""
        lines.append(f"  {judge['judge']}: {judge['missing']} of {judge['labels']}{share}")
    if not report["causes"]:
        lines.append("no judgment is missing")
    for group in report["causes"]:
        where = f" at {', '.join(group['endpoints'])}" if group["endpoints"] else ""
        lines.append(
            f"{group['count']} x {group['cause']}{where}: judges hit {', '.join(group['judges'])}"
        )
        lines.append(f"    most frequent reason: {group['reason']}")
        if group["sessions"]:
            lines.append(f"    e.g. sessions: {', '.join(group['sessions'])}")
        if group["hint"]:
            lines.append(f"    hint: {group['hint']}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from genir_eval.rundir.folder import load_run

    report = failure_report(load_run(args.run_dir))
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_text(report))
    return 0
