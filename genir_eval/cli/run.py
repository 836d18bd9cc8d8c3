"""``genir-eval run SCENARIO [--out DIR]``: judge, score and report one scenario.

Prints a summary of the run on stdout (correlations with user satisfaction, judges against
gold labels, failures, engine use, paths written); ``--quiet`` prints only the paths.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from genir_eval.cli.commands import COMMANDS
from genir_eval.cli.engine_options import add_engine_arguments, engine_overrides

if TYPE_CHECKING:
    from genir_eval.ingest.loader import Format
    from genir_eval.records import Session
    from genir_eval.runner.run import Overrides

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "run",
        help=COMMANDS["run"],
        description=(
            "Run SCENARIO (a scenarios/*.toml file): load its sessions, run its judges "
            "concurrently through the engine, aggregate the link metrics, meta-evaluate "
            "against gold labels when present, and write links/turns/sessions (JSONL and "
            "CSV), meta.json, run.json and report.html to DIR, and print a summary (--quiet: "
            "the paths only). Running it again into the same DIR resumes. Engine options "
            "given here override the scenario's. Exit codes: 0 ok, 2 bad input, setting or "
            "storage fault, 3 the run failed (too many labels missing, a permanent provider "
            "error, an early stop; the outputs are still written)."
        ),
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="the scenario file (TOML)")
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default: the scenario's output.dir, else runs/<name> beside "
        "the scenario's folder)",
    )
    parser.add_argument(
        "--labels",
        metavar="STORE",
        default=None,
        help="people's labels from `genir-eval label` (a labels.sqlite, or the run folder "
        "holding it) as the gold, in place of the input's (default: the input's gold)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="make no call and write nothing: print per judge the calls the run would make "
        "(cache hits apart), their prompt and answer tokens and their cost by the price table "
        "(--prices), with how tokens were counted (default: run)",
    )
    add_engine_arguments(parser, "run")
    parser.set_defaults(func=run)


def overrides_from_args(args: argparse.Namespace) -> Overrides:
    """What the command line says, over the scenario: the provider options and every engine
    setting given (the rest is the scenario's)."""
    from genir_eval.runner.run import Overrides

    return Overrides(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        engine=engine_overrides(args, "run"),
    )


def _people_gold_sessions(args: argparse.Namespace) -> Iterator[Session] | None:
    """The scenario's sessions with the people's labels as their gold (``--labels``), or
    ``None``: the scenario's input as it is."""
    if not args.labels:
        return None
    from genir_eval.ingest import iter_sessions
    from genir_eval.runner.label.gold import open_people_gold, with_people_gold
    from genir_eval.runner.scenario import load_scenario

    people = open_people_gold(args.labels)
    given = load_scenario(args.scenario).input
    print(
        f"genir-eval: gold from people's labels: {len(people)} items in {args.labels}",
        file=sys.stderr,
    )
    reader = iter_sessions(
        given.path,
        format=cast("Format | None", given.format),
        skip_invalid=given.skip_invalid,
        sources=given.sources,
    )
    return with_people_gold(reader, people)


def run(args: argparse.Namespace) -> int:
    # the runner and the report are imported when a run starts, not for `--help`
    from genir_eval.report.summary import format_paths, format_summary
    from genir_eval.rundir.status import failure_lines, raise_if_failed
    from genir_eval.runner.run import run_scenario

    if args.dry_run:
        from genir_eval.runner.dry_run import dry_run, dry_run_text

        estimate = dry_run(
            args.scenario, overrides=overrides_from_args(args), sessions=_people_gold_sessions(args)
        )
        sys.stdout.write(dry_run_text(estimate))
        return 0
    result = run_scenario(
        args.scenario,
        sessions=_people_gold_sessions(args),
        out_dir=args.out,
        overrides=overrides_from_args(args),
        progress=not args.quiet,
        log=None if args.quiet else sys.stderr,
    )
    # stdout carries the results (summary and paths); notices and progress go to stderr
    sys.stdout.write(format_paths(result) if args.quiet else format_summary(result))
    status = result.info.get("status") or {}
    for line in failure_lines(status):
        print(f"genir-eval: {line}", file=sys.stderr)
    raise_if_failed(status, str(result.directory), shown=True)
    return 0
