"""``genir-eval meta``: run a judge on sessions with gold labels and score it against them."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from functools import partial
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.cli.engine_options import (
    add_engine_arguments,
    config_from_args,
    engine_from_args,
)
from genir_eval.errors import ConfigError, did_you_mean
from genir_eval.figures import number_text, shown
from genir_eval.ingest import FORMATS, load_sessions, read_preferences
from genir_eval.ingest.preferences import check_named
from genir_eval.judges import judge_names, make_judge
from genir_eval.judges.base import Label
from genir_eval.judges.kinds import judge_kind, judge_kinds
from genir_eval.judges.options import parse_judge_options
from genir_eval.judges.prompting import check_template_file
from genir_eval.meta.preferences import agreement_table, label_scores
from genir_eval.meta.prompt_selection import select_prompts
from genir_eval.paths import real_path, why_missing
from genir_eval.report.judge_quality import quality_lines
from genir_eval.rundir.status import failure_lines, raise_if_failed, run_status
from genir_eval.runner.judge_eval import DEFAULT_LINK_BASELINE, evaluate_judge
from genir_eval.runner.progress import Heartbeat
from genir_eval.settings import check_setting, public_url, setting_type

__all__ = ["add_parser", "run", "format_result"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "meta",
        help=COMMANDS["meta"],
        description=(
            "Run a judge on sessions that carry gold labels and report how well it agrees: "
            "link usefulness (Spearman, Kendall, kappa, MAE, AUC), useful spans (P/R/F1) and "
            "satisfaction (Pearson, Spearman, Kendall; combined with sDCG as URGE does)."
        ),
    )
    parser.add_argument("input", metavar="SESSIONS", help="file of sessions (JSONL, URGE CSV, ...)")
    parser.add_argument(
        "--judge", required=True, help="judge name (required; `genir-eval judges` lists them)"
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a judge option, repeatable, e.g. --option judges=5 --option "
        "signals=relevance,behaviour (default: the judge's own defaults)",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="input format (default: from the file name)"
    )
    parser.add_argument(
        "--sources",
        metavar="FILE",
        default=None,
        help="JSONL or CSV file of source texts keyed by url (url, text), attached to the links "
        "(default: none, the texts in the log)",
    )
    parser.add_argument(
        "--preferences",
        metavar="FILE",
        default=None,
        help="people's preferences between two sessions (the README's preferences format): the "
        "judge's labels as scores against them, pair agreement per criterion (default: none)",
    )
    parser.add_argument(
        "--labels",
        metavar="STORE",
        default=None,
        help="people's labels from `genir-eval label` (a labels.sqlite, or the run folder "
        "holding it) as the gold, in place of the file's gold of the kinds people labelled; "
        "the file's other gold is kept (default: the file's gold)",
    )
    parser.add_argument(
        "--link-judge",
        default=DEFAULT_LINK_BASELINE,
        help="offline link judge whose labels give sDCG for a satisfaction judge "
        f"(default: {DEFAULT_LINK_BASELINE})",
    )
    parser.add_argument(
        "--prompt-selection",
        action="store_true",
        help="also compare link_usefulness.dna prompt variants over random query splits",
    )
    parser.add_argument(
        "--paraphrase",
        action="append",
        default=[],
        metavar="FILE",
        help="a paraphrase template, repeatable (default: none)",
    )
    parser.add_argument(
        "--splits",
        type=setting_type("splits"),
        default=200,
        help="random 50/50 splits (default 200)",
    )
    parser.add_argument(
        "--bootstrap",
        type=setting_type("n_boot"),
        default=1000,
        metavar="N",
        help="bootstrap resamples (default: 1000)",
    )
    parser.add_argument(
        "--seed",
        type=setting_type("seed"),
        default=0,
        help="bootstrap and split seed (default: 0)",
    )
    parser.add_argument(
        "--ppi-labelled",
        type=setting_type("ppi_labelled"),
        default=None,
        metavar="K",
        help=(
            "check prediction-powered inference as if only K sessions carried gold: 200 seeded "
            "random draws of K labelled sessions, coverage and widths of the intervals "
            "(default: none)"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_engine_arguments(parser)
    parser.set_defaults(func=run)
    return parser


class _Recorded:
    """A judge that keeps every label it returns, so the command can tell how many are
    missing and why (the run's status) without a second pass."""

    def __init__(self, judge: Any) -> None:
        self._judge = judge
        self.labels: list[Label] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)

    async def __call__(self, session: Any, engine: Any) -> list[Label]:
        labels = await self._judge(session, engine)
        self.labels.extend(labels)
        return labels


async def _run(
    args: argparse.Namespace, sessions: list[Any], judge: _Recorded, options: dict[str, Any]
) -> dict:
    async with engine_from_args(args) as engine:
        heartbeat = None
        if not args.quiet and not _is_tty(sys.stderr):
            heartbeat = Heartbeat(
                lambda: (
                    f"{engine.completed} calls done; waiting for "
                    f"{engine.waiting_for() or 'the judge'}"
                ),
                stream=sys.stderr,
            )
        try:
            result = await evaluate_judge(
                judge,  # type: ignore[arg-type]
                sessions,
                engine,
                options=options,
                link_judge=args.link_judge,
                n_boot=args.bootstrap,
                seed=args.seed,
                ppi_labelled=args.ppi_labelled,
            )
            if args.prompt_selection:
                common = {k: v for k, v in options.items() if k in {"model", "temperature"}}
                result["prompt_selection"] = await select_prompts(
                    sessions,
                    engine,
                    paraphrases=args.paraphrase,
                    n_splits=args.splits,
                    seed=args.seed,
                    common=common,
                )
                result["engine"] = engine.stats()
        finally:
            if heartbeat is not None:
                await heartbeat.aclose()
        where = f"{engine.provider.name}/{engine.model}"
        url = public_url(engine.provider.base_url)
        missing = [label for label in judge.labels if label.value is None]
        config = config_from_args(args)
        result["status"] = run_status(
            {args.judge: {"labels": len(judge.labels), "missing": len(missing)}},
            [
                {"judge": args.judge, "reason": label.missing_reason or "missing"}
                for label in missing
            ],
            [engine.stats()],
            endpoints={args.judge: f"{where} at {url}" if url else where},
            max_missing=config.max_missing,
            allow_permanent=config.allow_permanent,
        )
    return result


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _check_template(options: dict[str, Any]) -> None:
    template = options.get("template")
    if isinstance(template, str) and (template.endswith(".txt") or "/" in template):
        path = real_path(template)
        if not path.is_file():
            raise ConfigError(
                f"--option template: {str(path)!r}: {why_missing(path, 'template file')}"
            )
        options["template"] = str(path)


def run(args: argparse.Namespace) -> int:
    if args.judge not in judge_names():
        raise ConfigError(
            f"--judge: unknown judge {args.judge!r}{did_you_mean(args.judge, judge_names())}; "
            f"expected one of {', '.join(judge_names())}"
        )
    for name, value in (("n_boot", args.bootstrap), ("splits", args.splits), ("seed", args.seed)):
        try:
            check_setting(name, value)
        except ValueError as error:
            option = {"n_boot": "--bootstrap"}.get(name, f"--{name}")
            raise ConfigError(f"{option}: {error}") from None
    options = parse_judge_options(make_judge(args.judge), args.option)
    _check_template(options)
    # paraphrase templates are read now, not after the judge's calls
    args.paraphrase = [str(real_path(p)) for p in args.paraphrase]
    for paraphrase in args.paraphrase:
        try:
            check_template_file(paraphrase)
        except ConfigError as error:
            raise ConfigError(f"--paraphrase: {error}") from None
    if not _is_link_judge(args.link_judge):
        links = [n for n in judge_names() if _is_link_judge(n)]
        raise ConfigError(
            f"--link-judge: {args.link_judge!r} is not a link judge; expected one of {links}"
        )
    try:
        judge = _Recorded(make_judge(args.judge, **options))
    except (ConfigError, TypeError, ValueError) as error:
        raise ConfigError(f"--option: {error}") from None
    preferences = read_preferences(args.preferences, form="run") if args.preferences else None
    sessions = list(load_sessions(args.input, format=args.format, sources=args.sources).sessions)
    if args.labels:
        from genir_eval.runner.label.gold import (
            open_people_gold,
            people_gold_note,
            with_people_gold,
        )

        people = open_people_gold(args.labels, args.input)
        sessions = list(with_people_gold(sessions, people, keep_input=True))
        print(f"genir-eval: {people_gold_note(people, args.labels)}", file=sys.stderr)
    if preferences is not None:  # before any call: a row naming no session is refused
        turns = {session.session_id: len(session.turns) for session in sessions}
        check_named(preferences, args.preferences, turns.get, "the input")
    bind = getattr(judge, "bind_run", None)
    if bind is not None:  # a judge reading all the sessions first (nuggets pool each query's)
        bind(lambda: iter(sessions), None)
    for note in getattr(judge, "notes", ()):  # what it notes of its files, a line each
        print(f"genir-eval: {note}", file=sys.stderr)
    try:
        result = asyncio.run(_run(args, sessions, judge, options))
    except ValueError as error:
        if args.ppi_labelled is not None and "PPI" in str(error):
            raise ConfigError(f"--ppi-labelled: {error}") from None
        raise
    if preferences is not None:
        kind = judge_kind(str(judge.kind))
        by_session, by_turn = label_scores(
            judge.labels, args.judge, value=lambda v: kind.turn_value(v, 0)
        )
        result["preferences"] = agreement_table(
            preferences, by_session, by_turn, n_boot=args.bootstrap, seed=args.seed
        )
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_result(result))
    for line in failure_lines(result["status"]):
        print(f"genir-eval: {line}", file=sys.stderr)
    raise_if_failed(result["status"], f"meta {args.judge}", shown=True)
    return 0


def _is_link_judge(name: str) -> bool:
    return name in judge_names() and judge_kind(make_judge(name).kind).feeds_link_measures


def format_result(result: dict[str, Any]) -> str:
    n = partial(number_text, missing="n/a")
    judge = result["judge"]
    lines = [f"judge {judge['name']} ({judge['provider']}/{judge['model']})"]
    if result.get("baseline_note"):
        lines.append(f"  baseline: {result['baseline_note']}")
    for kind in judge_kinds():
        lines += kind.meta_lines(result)
    feedback = result.get("feedback")
    if feedback:
        for name, b in feedback["turn"].items():
            auc_ci = (b.get("ci95") or {}).get("auc") or (None, None)
            lines.append(
                f"thumbs vs {feedback['score']} ({name}): auc {n(b.get('auc'))} "
                f"[{n(auc_ci[0])}, {n(auc_ci[1])}]  point-biserial r "
                f"{n(b.get('point_biserial'))}  n {b['n']} ({b['n_up']} up, "
                f"{b['n_down']} down)"
            )
    orderings = result.get("orderings")
    if orderings:
        lines.append(
            f"hardest queries: rbo {n(orderings['rbo'])} kendall {n(orderings['kendall_tau'])}"
        )
    for criterion, table in (result.get("preferences") or {}).items():
        for level in ("session", "turn"):
            for name, b in (table.get(level) or {}).items():
                ci = b.get("ci95") or (None, None)
                lines.append(
                    f"preferences {shown(criterion)} ({level}) {shown(name)}: agreement "
                    f"{n(b['agreement'])} [{n(ci[0])}, {n(ci[1])}] over {b['decided']} "
                    f"decided pairs, score ties {b['score_ties']}, kappa {n(b['kappa'])}, "
                    f"missing {b['missing']}"
                )
    lines += quality_lines(result)
    replies = result.get("replies")
    if replies:
        lines.append(
            f"replies: parse failures {n(replies['parse_failure_rate'])}, repairs "
            f"{n(replies['repair_rate'])}, truncations {n(replies['truncation_rate'])}"
        )
    selection = result.get("prompt_selection")
    if selection:
        lines.append(
            f"prompt selection: best-on-half beats baseline on the other half in "
            f"{n(selection['best_beats_baseline_rate'])} of {selection['n_splits']} splits; "
            f"most frequent winner {selection['most_frequent_winner']}"
        )
    return "\n".join(lines) + "\n"
