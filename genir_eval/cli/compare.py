"""``genir-eval compare RUN_A RUN_B``: a regression gate between two runs."""

from __future__ import annotations

import argparse
import json
import sys

from genir_eval.cli import COMMANDS
from genir_eval.errors import ConfigError, InputError
from genir_eval.settings import setting_type

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "compare",
        help=COMMANDS["compare"],
        description=(
            "Paired comparison of run B against run A (per-session or per-turn deltas, "
            "paired bootstrap interval, randomisation test, Cohen's d_z). Exits 1 when a "
            "chosen metric's mean drops by more than --max-drop, drops significantly at "
            "--alpha, or falls below --fail-below; 0 otherwise. Usable as a CI step."
        ),
    )
    parser.add_argument("run_a", metavar="RUN_A", help="the baseline run directory")
    parser.add_argument("run_b", metavar="RUN_B", help="the candidate run directory")
    parser.add_argument(
        "--metric",
        action="append",
        default=None,
        help="score to compare (repeatable); default: the headline score of RUN_B",
    )
    parser.add_argument(
        "--level",
        choices=("session", "turn"),
        default="session",
        help="pair sessions or turns (default: session)",
    )
    parser.add_argument(
        "--max-drop",
        type=setting_type("max_drop"),
        default=None,
        help="fail when the mean drops by more than this (default: no bound)",
    )
    parser.add_argument(
        "--alpha",
        type=setting_type("alpha"),
        default=0.05,
        help="fail when the mean drops with randomisation p < ALPHA (default 0.05; 0 disables)",
    )
    parser.add_argument(
        "--fail-below",
        type=setting_type("fail_below"),
        default=None,
        help="fail when RUN_B's mean is below this (default: no bound)",
    )
    parser.add_argument(
        "--resamples",
        type=setting_type("resamples"),
        default=10_000,
        help="bootstrap/randomisation draws (default: 10000)",
    )
    parser.add_argument(
        "--seed", type=setting_type("seed"), default=0, help="seed of the resampling (default: 0)"
    )
    parser.add_argument(
        "--worst",
        type=setting_type("worst"),
        default=5,
        help="how many worse sessions to list (default: 5)",
    )
    parser.add_argument(
        "--common",
        action="store_true",
        help="compare the sessions (turns) both runs share and say how many were left out "
        "(default: runs over different sessions are an error)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text for a terminal, json, or markdown for a pull-request comment (default: text)",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # every number was checked as the command line was read (genir_eval.settings): a
    # negative --worst would slice the list from its end, all but the last sessions
    from genir_eval.report.html import headline_score
    from genir_eval.report.outputs import load_run
    from genir_eval.runner.compare import (
        Comparison,
        GateResult,
        compare_runs,
        describe,
        gate,
        markdown_summary,
    )

    output = "json" if args.json else args.format
    run_a, run_b = load_run(args.run_a), load_run(args.run_b)
    for run in (run_a, run_b):
        status = run.info.get("status") or {}
        if not status.get("ok", True):
            raise InputError(
                "a failed run (exit code 3 when it ran): "
                f"{'; '.join(status.get('reasons', ()))}; its scores are not a result to compare",
                path=str(run.directory),
            )
    metrics = args.metric or [headline_score(run_b)]
    if metrics == [None]:
        raise ConfigError("--metric: RUN_B has no scores to compare")
    failures: list[str] = []
    comparisons: list[Comparison] = []
    results: list[GateResult] = []
    for metric in metrics:
        comparison = compare_runs(
            run_a,
            run_b,
            metric=metric,
            level=args.level,
            n_resamples=args.resamples,
            seed=args.seed,
            common=args.common,
        )
        result = gate(
            comparison, max_drop=args.max_drop, alpha=args.alpha, fail_below=args.fail_below
        )
        failures.extend(result.reasons)
        comparisons.append(comparison)
        results.append(result)
        if output == "text":
            print(describe(comparison, worst=args.worst))
    if output == "json":
        documents = [
            {**c.to_dict(), "passed": r.passed, "reasons": list(r.reasons)}
            for c, r in zip(comparisons, results, strict=True)
        ]
        json.dump(
            {"version": 1, "comparisons": documents, "passed": not failures}, sys.stdout, indent=2
        )
        print()
    elif output == "markdown":
        sys.stdout.write(
            markdown_summary(
                comparisons, results, run_a=args.run_a, run_b=args.run_b, worst=args.worst
            )
        )
    for reason in failures:
        print(f"FAIL: {reason}", file=sys.stderr)
    if not failures and output == "text":
        print("PASS")
    return 1 if failures else 0
