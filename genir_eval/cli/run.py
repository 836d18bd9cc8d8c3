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
from genir_eval.settings import setting_type

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
        "holding it) as the gold, in place of the input's gold of the kinds people labelled; "
        "the input's other gold is kept (default: the input's gold)",
    )
    parser.add_argument(
        "--sessions",
        metavar="ID,ID",
        default=None,
        help="judge only these sessions of the input, by id, comma-separated (an id the input "
        "does not hold is refused before any call; default: every session)",
    )
    parser.add_argument(
        "--limit",
        metavar="N",
        type=setting_type("limit"),
        default=None,
        help="judge only the first N sessions of the input (the scenario's input.limit; "
        "after --sessions when both are given; default: the scenario's, else every session)",
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


def _read(args: argparse.Namespace) -> Iterator[Session]:
    """The scenario's input, read one session at a time."""
    from genir_eval.ingest import iter_sessions
    from genir_eval.runner.scenario import load_scenario

    given = load_scenario(args.scenario).input
    return iter_sessions(
        given.path,
        format=cast("Format | None", given.format),
        skip_invalid=given.skip_invalid,
        sources=given.sources,
    )


def _chosen_ids(args: argparse.Namespace) -> list[str] | None:
    """``--sessions``: the ids asked for, each checked against the input before any call."""
    if args.sessions is None:
        return None
    from genir_eval.errors import ConfigError

    wanted = [part.strip() for part in args.sessions.split(",") if part.strip()]
    if not wanted:
        raise ConfigError("--sessions: no session id given (ID,ID,...)")
    held = {session.session_id for session in _read(args)}
    absent = [sid for sid in wanted if sid not in held]
    if absent:
        raise ConfigError(
            f"--sessions: the input holds no session {', '.join(map(repr, absent))} "
            f"({len(held)} sessions in it)"
        )
    return wanted


def _chosen_sessions(args: argparse.Namespace) -> Iterator[Session] | None:
    """The sessions to judge when the command line chooses them: the people's labels as
    their gold (``--labels``), only the sessions ``--sessions`` names, the first ``--limit``
    (the scenario's ``input.limit`` otherwise); ``None``: the scenario's input as it is."""
    if not (args.labels or args.sessions is not None or args.limit is not None):
        return None
    import itertools

    wanted = _chosen_ids(args)
    stream = _read(args)
    if args.labels:
        from genir_eval.runner.label.gold import (
            open_people_gold,
            people_gold_note,
            with_people_gold,
        )
        from genir_eval.runner.scenario import load_scenario

        given = load_scenario(args.scenario).input
        people = open_people_gold(args.labels, given.path)
        print(f"genir-eval: {people_gold_note(people, args.labels)}", file=sys.stderr)
        stream = with_people_gold(stream, people, keep_input=True)
    if wanted is not None:
        keep = set(wanted)
        stream = (session for session in stream if session.session_id in keep)
        print(
            f"genir-eval: judging {len(keep)} of the input's sessions (--sessions)",
            file=sys.stderr,
        )
    if args.limit is not None:
        stream = itertools.islice(stream, args.limit)
    return stream


def run(args: argparse.Namespace) -> int:
    # the runner and the report are imported when a run starts, not for `--help`
    from genir_eval.report.summary import format_paths, format_summary
    from genir_eval.rundir.status import failure_lines, raise_if_failed
    from genir_eval.runner.run import run_scenario

    if args.dry_run:
        from genir_eval.runner.dry_run import dry_run, dry_run_text

        estimate = dry_run(
            args.scenario, overrides=overrides_from_args(args), sessions=_chosen_sessions(args)
        )
        sys.stdout.write(dry_run_text(estimate))
        return 0
    result = run_scenario(
        args.scenario,
        sessions=_chosen_sessions(args),
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
