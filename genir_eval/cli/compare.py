"""``genir-eval compare RUN_A RUN_B``: a regression gate between two runs."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.cli.engine_options import add_engine_arguments, engine_overrides
from genir_eval.errors import EXIT_CODES, ConfigError
from genir_eval.llm.config import DEFAULT_MAX_MISSING
from genir_eval.meta.multiplicity import CORRECTIONS
from genir_eval.paths import check_output_path
from genir_eval.settings import (
    COMPARE_VERDICT_RULE,
    DEFAULT_MIN_SESSIONS,
    parse_setting,
    setting_type,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "compare",
        help=COMMANDS["compare"],
        description=(
            "Paired comparison of run B against run A (per-session or per-turn deltas, "
            "paired bootstrap interval, randomisation test, Cohen's d_z), usable as a CI "
            f"step. The verdict: {COMPARE_VERDICT_RULE} Exit 2: the runs cannot be compared (bad "
            "input, or a failed run: one whose missing labels exceed --max-missing, or with a "
            "permanent provider error unless --allow-permanent; left out, each is the "
            "scenario's that made the run, when its file is there unchanged, else "
            f"{DEFAULT_MAX_MISSING:g} and no; never what the run folder says of itself). "
            "With --pairwise: B's answers judged against A's by the pairwise judge, exit 1 "
            "when B's win rate is significantly below --min-win-rate."
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
        "--margin",
        metavar="[METRIC=]X",
        type=_margin,
        action="append",
        default=None,
        help="non-inferiority: fail unless the worse end of the paired 95%% interval of the "
        "change lies within X of no change; METRIC=X for one score, X for every score "
        "(repeatable; such a score is not tested for significance; default: none)",
    )
    parser.add_argument(
        "--max-drop",
        type=setting_type("max_drop"),
        default=None,
        help="deprecated: the same as --margin X for every score (it was read against the "
        "mean; it is now read against the interval; default: no bound)",
    )
    parser.add_argument(
        "--alpha",
        type=setting_type("alpha"),
        default=0.05,
        help="fail when a score is worse with p < ALPHA after --correction (default 0.05; 0 "
        "disables)",
    )
    parser.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default=CORRECTIONS[0],
        help="how the error is held across several --metric: holm (Holm's step-down: the "
        "chance of any false alarm at most ALPHA), bh (Benjamini-Hochberg: the expected share "
        "of false alarms among the alarms), none (each score at ALPHA alone) (default: holm)",
    )
    parser.add_argument(
        "--fail-below",
        type=setting_type("fail_below"),
        default=None,
        help="fail when RUN_B's mean is below this (default: no bound)",
    )
    parser.add_argument(
        "--min-sessions",
        metavar="N",
        type=setting_type("min_sessions"),
        default=DEFAULT_MIN_SESSIONS,
        help=f"with fewer compared sessions (turns with --level turn; queries with "
        f"--pairwise) and no regression, the verdict is TOO FEW TO DECIDE, exit 4 (default "
        f"{DEFAULT_MIN_SESSIONS}; 0: never)",
    )
    _add_output_arguments(parser)
    _add_pairwise_arguments(parser)
    add_engine_arguments(parser)
    parser.set_defaults(func=run)


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """How the comparison is drawn and shown: resampling, which sessions, the formats."""
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
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write the comparison as a self-contained HTML page to FILE: the verdict "
        "and its rule, each score's paired delta with its 95%% interval and p, and the "
        "sessions that got worse first with both runs' answers and judges' reasons (with "
        "--pairwise: the pairwise gate's arena page; default: none)",
    )


def _add_pairwise_arguments(parser: argparse.ArgumentParser) -> None:
    """The pairwise gate's own flags (``--pairwise`` and what only it reads)."""
    pairwise = parser.add_argument_group("pairwise gate (--pairwise)")
    pairwise.add_argument(
        "--pairwise",
        action="store_true",
        help="judge each of RUN_B's answers against RUN_A's on the same session and turn with "
        "the pairwise judge (both runs' logs, as their run.json names them, read again) and "
        "gate on B's win rate against A (ties half) with a bootstrap interval over queries",
    )
    pairwise.add_argument(
        "--min-win-rate",
        metavar="P",
        type=setting_type("min_win_rate"),
        default=None,
        help="with --pairwise: exit 1 when B's win rate against A is significantly below P "
        "(its whole 1-ALPHA interval under P; default 0.5: B significantly worse than A)",
    )
    pairwise.add_argument(
        "--out",
        metavar="DIR",
        help="with --pairwise: keep the judged pairs there (pairs.jsonl, arena.json, "
        "report.html; running again resumes; default: a temporary folder, removed)",
    )
    pairwise.add_argument(
        "--option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="with --pairwise: a pairwise judge option (as for arena; default: none)",
    )


#: compare's options that gate on scores, meaningless for a pairwise gate (its defaults)
_SCORE_ONLY = {
    "metric": None,
    "level": "session",
    "margin": None,
    "correction": CORRECTIONS[0],
    "max_drop": None,
    "fail_below": None,
    "common": False,
}

#: the engine's flags that set the threshold a run is held to (the gate's, for both runs)
_GATE_FLAGS = ("max_missing", "allow_permanent")


def _check_pairwise(args: argparse.Namespace) -> None:
    if not args.pairwise:
        for flag in ("min_win_rate", "out"):
            if getattr(args, flag) is not None:
                raise ConfigError(f"--{flag.replace('_', '-')} needs --pairwise")
        if args.option:
            raise ConfigError("--option needs --pairwise")
        given = [f for f in ("provider", "model", "base_url") if getattr(args, f) is not None]
        given += [f for f in engine_overrides(args, "all") if f not in _GATE_FLAGS]
        if given:
            raise ConfigError(
                f"--{given[0].replace('_', '-')}: the engine options judge pairs, with --pairwise"
            )
        return
    for name, default in _SCORE_ONLY.items():
        if getattr(args, name) != default:
            raise ConfigError(
                f"--{name.replace('_', '-')} gates on scores; a pairwise comparison gates on "
                "B's win rate (--min-win-rate)"
                + (_match_by_query(args) if name == "common" else "")
            )


def _match_by_query(args: argparse.Namespace) -> str:
    """How to judge the two runs' answers matched by query text: ``--match`` is the arena's
    (compare has none), run on the logs the runs read, named from their ``run.json``."""
    logs = []
    for label, folder in (("A", args.run_a), ("B", args.run_b)):
        try:
            info = json.loads((Path(folder) / "run.json").read_text(encoding="utf-8"))
            path = str(info["input"]["path"])
        except (OSError, ValueError, KeyError, TypeError):
            path = f"LOGS_{label}"
        logs.append(f"{label}={shlex.quote(path)}")
    return (
        "; it pairs the turns both runs answered by session id and turn. To match answers by "
        f"query text, run the arena on the runs' logs: `genir-eval arena {' '.join(logs)} "
        "--match query --out DIR`"
    )


def _pairwise(args: argparse.Namespace, run_a: Any, run_b: Any, output: str) -> int:
    """``--pairwise``: the two runs' answers as a two-system arena, gated on B's win rate."""
    from genir_eval.cli.arena import judge_options
    from genir_eval.cli.run import overrides_from_args
    from genir_eval.rundir.status import failure_lines, raise_if_failed
    from genir_eval.runner.arena import ArenaSettings, run_arena, systems_of_runs
    from genir_eval.runner.pairwise_gate import gate_markdown, gate_text

    systems = systems_of_runs(run_a, run_b)
    with contextlib.ExitStack() as stack:
        out = (
            Path(args.out)
            if args.out
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="genir-pairwise-")))
        )
        settings = ArenaSettings(
            systems=systems,
            out=out,
            seed=args.seed,
            resamples=0,
            options=judge_options(args.option),
            baseline=systems[0].name,
            min_win_rate=0.5 if args.min_win_rate is None else args.min_win_rate,
            alpha=args.alpha,
            gate_resamples=args.resamples,
            command="compare --pairwise",
        )
        document = run_arena(
            settings,
            overrides=overrides_from_args(args),
            progress=not args.quiet,
            log=None if args.quiet else sys.stderr,
        )
    gate = document["gate"]
    # the same rule as the score gate: no regression over fewer than --min-sessions queries
    # is too few to call a pass
    gate["undecided"] = list(gate.get("undecided") or []) + [
        f"{c['name']}'s win rate rests on {c.get('queries', 0)} queries, fewer than "
        f"--min-sessions {args.min_sessions}: too few to tell a change from noise"
        for c in gate["candidates"]
        if gate["passed"] and not c.get("undecided") and (c.get("queries") or 0) < args.min_sessions
    ]
    if args.html or (args.out and gate["undecided"]):
        from genir_eval.report.arena import render_arena

        if args.html:
            render_arena(Path(args.html), document)
        if args.out and gate["undecided"]:
            # the folder's page was written before the gate knew it could not decide
            render_arena(Path(args.out) / "report.html", document)
    if output == "json":
        json.dump(
            {
                "version": 1,
                "gate": gate,
                "pairs": document["pairs"],
                "runs": {"a": args.run_a, "b": args.run_b},
                "passed": gate["passed"],
                "verdict": "regression"
                if not gate["passed"]
                else "too few to decide"
                if gate["undecided"]
                else "pass",
            },
            sys.stdout,
            indent=2,
        )
        print()
    elif output == "markdown":
        sys.stdout.write(gate_markdown(gate))
    else:
        sys.stdout.write(gate_text(gate))
    status = document["status"]
    for line in failure_lines(status):
        print(f"genir-eval: {line}", file=sys.stderr)
    raise_if_failed(status, str(out) if args.out else "a temporary folder", shown=True)
    if not gate["passed"]:
        print(
            f"FAIL: {systems[1].name}'s win rate against {systems[0].name} is significantly "
            f"below {gate['threshold']:g}",
            file=sys.stderr,
        )
        return 1
    if gate["undecided"]:
        for reason in gate["undecided"]:
            print(f"TOO FEW TO DECIDE: {reason}", file=sys.stderr)
        if output == "text":
            print(f"TOO FEW TO DECIDE (exit 4): {'; '.join(gate['undecided'])}")
        return EXIT_CODES["undecided"]
    if output == "text":
        print("PASS")
    return 0


def _margin(text: str) -> tuple[str | None, float]:
    """``--margin``'s value: ``X`` (every score) or ``METRIC=X``."""
    metric, _, number = text.rpartition("=")
    try:
        value = parse_setting("max_drop", number)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return (metric or None), value


def _margins(args: argparse.Namespace, metrics: list[str]) -> dict[str, float]:
    """Each compared score's margin: its own ``--margin METRIC=X``, else ``--margin X``; a
    margin naming no compared score is refused. The deprecated ``--max-drop`` is said on
    stderr (the gate reads it as the margin of every other score)."""
    given = dict(args.margin or [])
    unknown = sorted(set(given) - set(metrics) - {None})
    if unknown:
        raise ConfigError(
            f"--margin {unknown[0]}=...: not a compared score; compared: {', '.join(metrics)}"
        )
    if args.max_drop is not None:
        print(
            f"genir-eval: --max-drop is deprecated: it is --margin {args.max_drop:g} (the worse "
            "end of the paired 95% interval of the change must lie within it; it was the mean)",
            file=sys.stderr,
        )
    margins = {}
    for metric in metrics:
        margin = given.get(metric, given.get(None))
        if margin is not None:
            margins[metric] = margin
    return margins


def _margins_text(args: argparse.Namespace) -> str | None:
    parts = [f"{m}={x:g}" if m else f"{x:g}" for m, x in args.margin or []]
    if args.max_drop is not None:
        parts.append(f"{args.max_drop:g} (as --max-drop)")
    return ", ".join(parts) or None


def _check_html(path: Path, runs: tuple[Path, Path]) -> None:
    """``--html FILE`` is refused before any work when it cannot be written or would replace
    a file of either run folder (its report, a table: the run's digests would not match)."""
    if path.is_dir() and not path.is_symlink():
        raise ConfigError(
            f"--html {path}: a folder; give a file name, e.g. {path / 'compare.html'}"
        )
    check_output_path(path, "--html")
    for folder in runs:
        if path.exists() and path.resolve().parent == folder.resolve():
            raise ConfigError(
                f"--html {path}: a file of the run folder {folder}; write the page elsewhere"
            )


def _write_html(
    args: argparse.Namespace, documents: list[dict[str, Any]], verdict: str, run_a: Any, run_b: Any
) -> None:
    """``--html FILE``: the comparison page (:mod:`genir_eval.report.comparison`)."""
    from genir_eval.report.comparison import render_comparison, write_comparison

    options = {
        "--level": args.level,
        "--alpha": args.alpha,
        "--margin": _margins_text(args),
        "--correction": args.correction,
        "--fail-below": args.fail_below,
        "--min-sessions": args.min_sessions,
        "--resamples": args.resamples,
        "--seed": args.seed,
        "--common": "yes" if args.common else None,
    }
    page = render_comparison(
        documents,
        verdict=verdict,
        rule=COMPARE_VERDICT_RULE,
        run_a=run_a,
        run_b=run_b,
        worst=args.worst,
        options=options,
    )
    write_comparison(Path(args.html), page)


def run(args: argparse.Namespace) -> int:
    # every number was checked as the command line was read (genir_eval.settings): a
    # negative --worst would slice the list from its end, all but the last sessions
    from genir_eval.report.html import headline_score
    from genir_eval.rundir.folder import load_run
    from genir_eval.runner.compare import (
        Comparison,
        compare_runs,
        describe,
        gate_all,
        gate_threshold,
        refuse_failed,
        verdict_of,
    )

    _check_pairwise(args)
    output = "json" if args.json else args.format
    run_a, run_b = load_run(args.run_a), load_run(args.run_b)
    if args.html:
        _check_html(Path(args.html), (run_a.directory, run_b.directory))
    for run in (run_a, run_b):
        threshold = gate_threshold(
            run, max_missing=args.max_missing, allow_permanent=args.allow_permanent
        )
        refuse_failed(run, threshold)
    if args.pairwise:
        return _pairwise(args, run_a, run_b, output)
    metrics = args.metric or [headline_score(run_b)]
    if metrics == [None]:
        raise ConfigError("--metric: RUN_B has no scores to compare")
    comparisons: list[Comparison] = []
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
        comparisons.append(comparison)
        if output == "text":
            print(describe(comparison, worst=args.worst))
    results = gate_all(
        comparisons,
        alpha=args.alpha,
        correction=args.correction,
        margins=_margins(args, metrics),
        fail_below=args.fail_below,
        min_pairs=args.min_sessions,
        max_drop=args.max_drop,
    )
    verdict = verdict_of(results)
    _report(args, output, comparisons, results, verdict, (run_a, run_b))
    return EXIT_CODES[{"pass": "ok", "too few to decide": "undecided"}.get(verdict, "regression")]


def _report(
    args: argparse.Namespace,
    output: str,
    comparisons: list[Any],
    results: list[Any],
    verdict: str,
    runs: tuple[Any, Any],
) -> None:
    """What ``compare`` writes once it has decided: the HTML page, the JSON document or the
    markdown comment, the notes, the rule and the verdict line, and the reasons on stderr."""
    from genir_eval.report.card import score_evidence, score_kind_words
    from genir_eval.runner.compare import across_words, markdown_summary

    failures = [reason for r in results for reason in r.reasons]
    run_a, run_b = runs
    # what each compared score rests on, as its measure or judge kind declares it
    kinds = {c.metric: score_evidence(run_b, c.metric) for c in comparisons}
    documents = [
        {
            **c.to_dict(),
            "evidence": getattr(kinds[c.metric], "name", None),
            "kind": score_kind_words(kinds[c.metric]),
            "passed": r.passed,
            "verdict": r.verdict,
            "reasons": list(r.reasons),
            "undecided": list(r.undecided),
            "notes": list(r.notes),
            "p_adjusted": r.p_adjusted,
            "correction": args.correction,
        }
        for c, r in zip(comparisons, results, strict=True)
    ]
    if args.html:
        _write_html(args, documents, verdict, run_a, run_b)
    if output == "json":
        json.dump(
            {
                "version": 1,
                "comparisons": documents,
                "passed": not failures,
                "verdict": verdict,
                "rule": COMPARE_VERDICT_RULE,
            },
            sys.stdout,
            indent=2,
        )
        print()
    elif output == "markdown":
        sys.stdout.write(
            markdown_summary(
                comparisons,
                results,
                run_a=args.run_a,
                run_b=args.run_b,
                worst=args.worst,
                correction=args.correction,
            )
        )
    if output in ("text", "markdown"):
        for metric, evidence in kinds.items():
            says = f": it says {evidence.says}" if evidence is not None else ""
            print(
                f"{'- ' if output == 'markdown' else ''}{metric} is {score_kind_words(evidence)}{says}"
            )
    if output == "text":
        for note in (n for r in results for n in r.notes):
            print(f"  note: {note}")
        print(across_words(args.correction, len(comparisons)))
        print(f"rule: {COMPARE_VERDICT_RULE}")
    for reason in failures:
        print(f"FAIL: {reason}", file=sys.stderr)
    if verdict == "too few to decide":
        for reason in (u for r in results for u in r.undecided):
            print(f"TOO FEW TO DECIDE: {reason}", file=sys.stderr)
    if output == "text" and verdict == "pass":
        print("PASS")
    elif output == "text" and verdict == "too few to decide":
        print(f"TOO FEW TO DECIDE (exit 4): {'; '.join(u for r in results for u in r.undecided)}")
