"""``genir-eval run SCENARIO [--out DIR]``: judge, score and report one scenario.

Prints a summary of the run on stdout (correlations with user satisfaction, judges against
gold labels, failures, engine use, paths written); ``--quiet`` prints only the paths.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from genir_eval.cli import COMMANDS
from genir_eval.llm.options import add_engine_arguments, setting_type

if TYPE_CHECKING:
    from genir_eval.runner.run import Overrides

__all__ = ["add_parser", "run"]

# Engine options whose command-line defaults must not hide the scenario's own settings:
# left unset, the scenario decides.
_SCENARIO_DECIDES = (
    "provider",
    "concurrency",
    "cache",
    "cache_mode",
    "max_attempts",
    "timeout",
    "deadline",
    "max_missing",
    "allow_permanent",
    "stop_after",
    "give_up_after",
)


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
    add_engine_arguments(
        parser,
        cache_help="cache file, 'none' for no cache (default: the scenario's engine.cache, "
        "else .genir-cache/cache.sqlite beside the scenario's folder)",
        journal_help="resume journal file, 'none' for no journal (default: the scenario's "
        "engine.journal, else journal.sqlite in the output folder)",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="where the judging runs: this process (local, the default) or a Ray cluster "
        '(ray; needs pip install "genir-eval[ray]")',
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help='the Ray cluster to join ("auto": the one `ray start` runs here; '
        "ray://host:10001 for a remote one); default: a new local cluster",
    )
    parser.add_argument(
        "--ray-workers",
        metavar="N",
        type=setting_type("ray_workers"),
        help="shards of sessions, one Ray task each (default: the cluster's CPUs)",
    )
    parser.set_defaults(func=run, **{name: None for name in _SCENARIO_DECIDES})


def overrides_from_args(args: argparse.Namespace) -> Overrides:
    from genir_eval.runner.run import Overrides

    return Overrides(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        concurrency=args.concurrency,
        rpm=args.rpm,
        tpm=args.tpm,
        max_attempts=args.max_attempts,
        timeout=args.timeout,
        deadline=args.deadline,
        cache=args.cache,
        cache_mode=args.cache_mode,
        journal=args.journal,
        prices=args.prices,
        max_missing=args.max_missing,
        allow_permanent=args.allow_permanent,
        stop_after=args.stop_after,
        give_up_after=args.give_up_after,
        executor=args.executor,
        ray_address=args.ray_address,
        ray_workers=args.ray_workers,
    )


def run(args: argparse.Namespace) -> int:
    # the runner and the report are imported when a run starts, not for `--help`
    from genir_eval.report.summary import format_paths, format_summary
    from genir_eval.runner.run import run_scenario
    from genir_eval.runner.status import failure_lines, raise_if_failed

    result = run_scenario(
        args.scenario,
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
