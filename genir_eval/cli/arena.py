"""``genir-eval arena FILE... --out DIR``: rank systems by pairwise preferences."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.cli.engine_options import add_engine_arguments
from genir_eval.cli.run import overrides_from_args
from genir_eval.errors import EXIT_CODES, ConfigError
from genir_eval.settings import check_setting, setting_type

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "arena",
        help=COMMANDS["arena"],
        description=(
            "Judge every pair of systems on every query they all answered with the pairwise "
            "judge (both orders), rank them (Bradley-Terry with ties, bootstrap intervals over "
            "queries, style control) and write pairs.jsonl, arena.json and report.html to DIR. "
            "Running it again into the same DIR resumes. Exit codes: 0 ok, 1 the pairwise gate "
            "failed (--min-win-rate), 2 bad input or setting, 3 the run failed (too many "
            "verdicts missing, a permanent provider error), 4 the gate had too few to decide (a "
            "system's win rate rests on fewer than two queries)."
        ),
    )
    parser.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="one system's logs (any input format), named by the file's stem or NAME=PATH",
    )
    parser.add_argument("--out", metavar="DIR", required=True, help="output folder (required)")
    parser.add_argument(
        "--match",
        choices=("session", "query"),
        default="session",
        help="match answers by session id and turn (default), or by normalised query text "
        "(unmatched answers are counted and left out)",
    )
    parser.add_argument(
        "--pairs",
        metavar="FILE",
        help="judge only the pairs listed (JSONL: session_id, turn, a, b; default: all pairs)",
    )
    parser.add_argument(
        "--max-pairs",
        metavar="N",
        type=setting_type("max_pairs"),
        help="judge a seeded sample of N pairs (default: all)",
    )
    parser.add_argument(
        "--seed",
        type=setting_type("seed"),
        default=0,
        help="sampling and bootstrap seed (default 0)",
    )
    parser.add_argument(
        "--resamples",
        type=setting_type("n_boot"),
        default=200,
        help="bootstrap resamples for the score intervals (default 200; 0: no intervals)",
    )
    parser.add_argument(
        "--option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a pairwise judge option (genir-eval judges lists them; value as JSON or text; "
        "default: none)",
    )
    _add_nugget_arguments(parser)
    parser.add_argument(
        "--gold",
        metavar="FILE",
        help="people's preferences (canonical preferences JSONL): report agreement (default: none)",
    )
    parser.add_argument(
        "--gold-criterion",
        default="quality_overall",
        help="the gold rows' criterion compared (default quality_overall; rows without a "
        "criterion always count)",
    )
    parser.add_argument(
        "--baseline",
        metavar="NAME",
        help="the system the gate compares the others with (default: the first)",
    )
    parser.add_argument(
        "--min-win-rate",
        metavar="P",
        type=setting_type("min_win_rate"),
        help="gate: exit 1 when a system's win rate against the baseline is significantly "
        "below P; exit 4, too few to decide, when it rests on fewer than two queries (the "
        "interval resamples queries) (default: no gate)",
    )
    parser.add_argument(
        "--alpha",
        type=setting_type("alpha"),
        default=0.05,
        help="the gate's interval level 1-ALPHA (default 0.05)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text, json (arena.json) or markdown for a pull-request comment (default: text)",
    )
    add_engine_arguments(parser)
    parser.set_defaults(func=run)


def _add_nugget_arguments(parser: argparse.ArgumentParser) -> None:
    """``--nuggets`` and ``--nugget-option``: each system's nugget scores beside the ranking."""
    parser.add_argument(
        "--nuggets",
        action="store_true",
        help="also score every system's answers with the nugget judge (each query's nuggets "
        "pooled over all systems' cited sources; TREC 2024 RAG's scores with 95%% intervals), "
        "shown beside the ranking (default: off)",
    )
    parser.add_argument(
        "--nugget-option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a nugget judge option with --nuggets, e.g. max_nuggets=20 (default: none)",
    )


def judge_options(pairs: list[str]) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs -> the pairwise judge's options, each value read as its
    table declares (:func:`~genir_eval.judges.options.parse_judge_options`)."""
    from genir_eval.judges.options import parse_judge_options
    from genir_eval.judges.pairwise import PairwiseJudge

    return parse_judge_options(PairwiseJudge, pairs)


def _check(args: argparse.Namespace) -> None:
    if args.max_pairs is not None and args.max_pairs < 1:
        raise ConfigError(f"--max-pairs: expected an integer >= 1, got {args.max_pairs}")
    if not 0 <= args.resamples <= 100_000:
        raise ConfigError(f"--resamples: expected 0 to 100000, got {args.resamples}")
    check_setting("seed", args.seed)
    if args.min_win_rate is not None and not 0 <= args.min_win_rate <= 1:
        raise ConfigError(f"--min-win-rate: expected a number in [0, 1], got {args.min_win_rate}")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha: expected a number in (0, 1), got {args.alpha}")
    if args.nugget_option and not args.nuggets:
        raise ConfigError(
            f"--nugget-option {args.nugget_option[0]}: nugget options are read only with "
            "--nuggets (add it, or drop the option)"
        )


def _nugget_options(pairs: list[str]) -> dict[str, Any]:
    """``--nugget-option KEY=VALUE`` pairs -> the nugget judge's options, each value read as
    its table declares."""
    from genir_eval.judges.nuggets.judge import NuggetJudge
    from genir_eval.judges.options import parse_judge_options

    return parse_judge_options(NuggetJudge, pairs)


def _interval(ci: Any, digits: int) -> str:
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "[-]"


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """The ranking's lines, its columns aligned: the names to the left, the figures to the
    right (a figure's digits under each other's)."""
    widths = [max(len(cell) for cell in column) for column in zip(head, *rows, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        first, *rest = cells
        return "  ".join(
            [first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))]
        ).rstrip()

    return [line(head), *(line(row) for row in rows)]


def _markdown(document: dict[str, Any]) -> str:
    """The ranking as a pull-request comment: each system's name as literal text (HTML and
    Markdown's punctuation escaped, genir_eval.figures), never markup."""
    from genir_eval.figures import markdown_text

    lines = [
        "### Arena",
        "",
        "| system | score [95% interval] | win rate [95% interval] | wins/ties/losses |",
        "| --- | ---: | ---: | ---: |",
    ]
    for s in document["systems"]:
        rate = (
            "–"
            if s.get("win_rate") is None
            else f"{s['win_rate']:.2f} {_interval(s.get('win_rate_ci95'), 2)}"
        )
        lines.append(
            f"| {markdown_text(s['name'])} | {s['score']:.1f} {_interval(s.get('ci95'), 1)} | "
            f"{rate} | {s['wins']}/{s['ties']}/{s['losses']} |"
        )
    return "\n".join(lines) + "\n"


def _text(document: dict[str, Any]) -> str:
    from genir_eval.runner.compare import shown  # names from the logs, escaped for a terminal

    lines = _table(
        ("system", "score [95% interval]", "win rate [95% interval]", "wins/ties/losses"),
        [
            (
                shown(s["name"]),
                f"{s['score']:.1f} {_interval(s.get('ci95'), 1)}",
                "-"
                if s.get("win_rate") is None
                else f"{s['win_rate']:.2f} {_interval(s.get('win_rate_ci95'), 2)}",
                f"{s['wins']}/{s['ties']}/{s['losses']}",
            )
            for s in document["systems"]
        ],
    )
    style = document.get("style_control")
    if style:
        lines.append(
            "style control coefficients: "
            + ", ".join(f"{k} {v:+.3f}" for k, v in style["coefficients"].items())
        )
    c = document["consistency"]
    pc = c["position_consistency"]
    lines.append(
        f"position consistency: {'-' if pc is None else f'{pc:.3f}'} "
        f"({c['pairs_in_both_orders']} pairs"
        + (
            f"; {c['mirrored_pairs']} mirrored by the offline twin"
            if c.get("mirrored_pairs")
            else ""
        )
        + "); intransitive cycles: "
        f"{c['intransitive_cycles']} of {c['decided_triads']} triads"
    )
    gold = document.get("gold")
    if gold and gold["rate"] is not None:
        lines.append(
            f"agreement with people: {gold['rate']:.3f} of {gold['judged']} decided gold pairs "
            f"({gold['unjudged']} unjudged)"
            + (
                f"; {gold['rows_of_other_criteria']} rows of other criteria than "
                f"{gold['criterion']!r} not compared"
                if gold.get("rows_of_other_criteria")
                else ""
            )
        )
    for name, row in ((document.get("nuggets") or {}).get("systems") or {}).items():
        ci = (row.get("ci95") or {}).get("nugget_recall") or [None, None]
        value = row.get("nugget_recall")
        recall = "-" if value is None else f"{value:.3f}"
        interval = "" if ci[0] is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"
        lines.append(
            f"nugget recall {shown(name)}: {recall}{interval} over {row['answers']} answers "
            f"({row['missing']} missing)"
        )
    unmatched = {k: v for k, v in document["unmatched"].items() if v}
    if unmatched:
        lines.append(
            "unmatched answers left out: "
            + ", ".join(f"{shown(k)} {v}" for k, v in unmatched.items())
        )
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    _check(args)
    from genir_eval.rundir.status import failure_lines, raise_if_failed
    from genir_eval.runner.arena import ArenaSettings, run_arena, system_args
    from genir_eval.runner.pairwise_gate import gate_markdown, gate_text

    settings = ArenaSettings(
        systems=system_args(args.files),
        out=Path(args.out),
        match=args.match,
        pairs=Path(args.pairs) if args.pairs else None,
        max_pairs=args.max_pairs,
        seed=args.seed,
        resamples=args.resamples,
        options=judge_options(args.option),
        gold=Path(args.gold) if args.gold else None,
        gold_criterion=args.gold_criterion or None,
        baseline=args.baseline,
        min_win_rate=args.min_win_rate,
        alpha=args.alpha,
        nuggets=_nugget_options(args.nugget_option) if args.nuggets else None,
    )
    if settings.baseline is not None and settings.baseline not in {
        s.name for s in settings.systems
    }:
        raise ConfigError(f"--baseline: no system is named {settings.baseline!r}")
    document = run_arena(
        settings,
        overrides=overrides_from_args(args),
        progress=not args.quiet,
        log=None if args.quiet else sys.stderr,
    )
    gate = document.get("gate")
    if args.format == "json":
        json.dump(document, sys.stdout, indent=2)
        print()
    elif args.format == "markdown":
        sys.stdout.write(gate_markdown(gate) if gate else _markdown(document))
    else:
        sys.stdout.write(_text(document) + (gate_text(gate) if gate else ""))
    status = document["status"]
    for line in failure_lines(status):
        print(f"genir-eval: {line}", file=sys.stderr)
    raise_if_failed(status, str(settings.out), shown=True)
    if gate is None:
        return 0
    if not gate["passed"]:
        return 1
    if gate.get("undecided"):
        for reason in gate["undecided"]:
            print(f"TOO FEW TO DECIDE: {reason}", file=sys.stderr)
        return EXIT_CODES["undecided"]
    return 0
