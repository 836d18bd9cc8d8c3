"""Quality and cost of judges on sessions with gold: one row per judge.

Runs each chosen judge on a sample that carries gold labels (the URGE sample by default)
through an engine built from the usual options (``--provider``, ``--base-url``, ``--model``,
``--concurrency``, ``--cache`` ...), scores it with the code behind ``genir-eval meta`` and
prints, per judge:

- quality: link Spearman, weighted and binary kappa and pairwise AUC, each with a 95%
  interval from the bootstrap over sessions (links of a session are not independent), and
  the same for the expected (probability-weighted) label when the judge gives one; the
  link labels' MAE before and after isotonic calibration fitted leaving sessions out; span
  F1 against the users' and the annotators' marks; satisfaction Pearson r at query and
  session level;
- health: missing, parse-failure and repair rates, collapse flags (constant labels,
  reasons copied from the prompt);
- cost: provider calls, input and output tokens per call, wall seconds per call (with
  ``--concurrency 1`` against a local server this is the latency of one judgment).

    python bench/bench_judges.py --provider offline
    python bench/bench_judges.py --base-url http://127.0.0.1:8091/v1 --model local \\
        --concurrency 1 --timeout 600 --sessions urge-4,urge-5,urge-7,urge-11 --max-turns 2 \\
        --judges link_usefulness.dna link_usefulness.true

``--json FILE`` also writes every judge's full meta-evaluation and, for a link judge, its
label per gold-labelled link (``bench/bench_ensemble.py`` combines such files). Use ``--cache-mode off`` to
time calls (cache hits make a rerun free and its seconds meaningless).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from genir_eval.cli.engine_options import add_engine_arguments, engine_from_args
from genir_eval.ingest import load_sessions
from genir_eval.judges import judge_sessions, make_judge
from genir_eval.judges.options import parse_judge_option
from genir_eval.meta.evaluate import link_pairs
from genir_eval.meta.resample import session_bootstrap
from genir_eval.meta.stats import binarize, cohen_kappa, correlations, pairwise_auc
from genir_eval.records import Session
from genir_eval.runner.judge_eval import evaluate_labels

ROOT = Path(__file__).resolve().parent.parent
URGE_SAMPLE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"
DEFAULT_JUDGES = (
    "link_usefulness.dna",
    "link_usefulness.true",
    "link_usefulness.listwise",
    "spans",
    "satisfaction.geval",
    "satisfaction.urs",
    "satisfaction.gah",
)


def select(sessions: Sequence[Session], wanted: str | None, max_turns: int | None) -> list[Session]:
    """The sessions named in ``wanted`` (comma-separated ids, or row numbers), in that order,
    each cut to its first ``max_turns`` turns (gold per turn is positional, so it stays
    aligned; the session-level gold still rates the whole session)."""
    chosen = list(sessions)
    if wanted:
        by_id = {s.session_id: s for s in sessions}
        chosen = []
        for item in wanted.split(","):
            item = item.strip()
            key = item if item in by_id else f"urge-{item}"
            if key not in by_id:
                raise SystemExit(f"--sessions: no session {item!r} (ids: {', '.join(by_id)})")
            chosen.append(by_id[key])
    if max_turns is not None:
        chosen = [dataclasses.replace(s, turns=s.turns[:max_turns]) for s in chosen]
    return chosen


def _rounded(values: list[Any]) -> list[int | None]:
    return [None if v is None else int(min(3, max(0, round(v)))) for v in values]


def _spearman(p: list[Any], g: list[Any]) -> float | None:
    return correlations(p, g, n_boot=0)["spearman"]


def _kappa_w(p: list[Any], g: list[Any]) -> float | None:
    return cohen_kappa(_rounded(p), g, weights="linear", labels=[0, 1, 2, 3])


def _kappa_bin(p: list[Any], g: list[Any]) -> float | None:
    return cohen_kappa(binarize(_rounded(p)), binarize(g), labels=[0, 1])


STATISTICS = (
    ("spearman", _spearman),
    ("kappa_w", _kappa_w),
    ("kappa_bin", _kappa_bin),
    ("auc", pairwise_auc),
)


def link_quality(
    pred: list[Any], gold: list[int], groups: list[str], n_boot: int, seed: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, statistic in STATISTICS:
        out[name] = statistic(pred, gold)
        out[f"{name}_ci"] = session_bootstrap(
            statistic, pred, gold, groups, n_boot=n_boot, seed=seed
        )
    return out


async def bench_one(
    args: argparse.Namespace, name: str, options: dict[str, Any], sessions: list[Session]
) -> dict[str, Any]:
    judge = make_judge(name, **options)
    async with engine_from_args(args) as engine:
        started = time.perf_counter()
        labels = await judge_sessions(judge, sessions, engine)
        wall = time.perf_counter() - started
        result = await evaluate_labels(
            judge, sessions, labels, engine, n_boot=args.bootstrap, seed=args.seed
        )
    row: dict[str, Any] = {"judge": name, "options": options, "wall_s": wall, "meta": result}
    if judge.kind == "link_usefulness":
        pairs = link_pairs(sessions, labels)
        # Per gold-labelled link (session, turn, link order), for bench_ensemble.py.
        row["pairs"] = dataclasses.asdict(pairs)
        row["link"] = link_quality(pairs.pred, pairs.gold, pairs.groups, args.bootstrap, args.seed)
        if any(e is not None for e in pairs.expected):
            row["link_expected"] = link_quality(
                pairs.expected, pairs.gold, pairs.groups, args.bootstrap, args.seed
            )
    return row


def _f(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(value: Any, ci: Any) -> str:
    if value is None:
        return "-"
    if not ci:
        return _f(value)
    return f"{value:.3f} [{ci[0]:.2f},{ci[1]:.2f}]"


def format_row(row: dict[str, Any]) -> list[str]:
    meta = row["meta"]
    engine = meta.get("engine") or {}
    replies = meta.get("replies") or {}
    calls = engine.get("calls") or 0
    lines = [f"{row['judge']} {row['options'] or ''}".rstrip()]
    for key, title in (("link", "label"), ("link_expected", "expected")):
        q = row.get(key)
        if q:
            lines.append(
                f"  link {title:8s} spearman {_ci(q['spearman'], q['spearman_ci'])}  "
                f"kappa_w {_ci(q['kappa_w'], q['kappa_w_ci'])}  "
                f"kappa_bin {_ci(q['kappa_bin'], q['kappa_bin_ci'])}  "
                f"auc {_ci(q['auc'], q['auc_ci'])}"
            )
    link = meta.get("link_usefulness") or {}
    for title, block in (("label", link), ("expected", link.get("expected") or {})):
        cal = block.get("calibration")
        if cal:
            lines.append(
                f"  link {title:8s} mae {_f(cal['raw']['mae'])} -> {_f(cal['calibrated']['mae'])} "
                f"calibrated (isotonic, leave-sessions-out; kappa_w "
                f"{_f(cal['raw']['cohen_kappa_weighted'])} -> "
                f"{_f(cal['calibrated']['cohen_kappa_weighted'])})"
            )
    spans = meta.get("spans")
    if spans:
        lines.append(
            f"  spans F1 vs user {_f(spans['vs_user']['f1'])}  vs annotators "
            f"{_f(spans['vs_annotators']['f1'])}  (user vs annotators "
            f"{_f(spans['human_reference_user_vs_annotators']['f1'])})"
        )
    for reading, block in (meta.get("satisfaction") or {}).items():
        if reading == "sdcg_urge" or not isinstance(block, dict) or "query_level" not in block:
            continue
        q, s = block["query_level"], block["session_level"]
        lines.append(
            f"  satisfaction {reading:14s} r query {_ci(q['pearson'], q['ci95']['pearson'])} "
            f"(n {q['n']})  session {_ci(s['pearson'], s['ci95']['pearson'])} (n {s['n']})"
        )
    flags = (meta.get("degenerate") or {}).get("flags") or []
    lines.append(
        f"  missing {_f(replies.get('missing_rate'))}  parse failures "
        f"{_f(replies.get('parse_failure_rate'))}  repairs {_f(replies.get('repair_rate'))}  "
        f"truncations {_f(replies.get('truncation_rate'))}  flags {','.join(flags) or 'none'}"
    )
    lines.append(
        f"  calls {calls} (cache hits {engine.get('cache_hits', 0)}, journal "
        f"{engine.get('journal_hits', 0)})  tokens/call in "
        f"{_f((engine.get('input_tokens') or 0) / calls if calls else None, 0)} out "
        f"{_f((engine.get('output_tokens') or 0) / calls if calls else None, 0)}  "
        f"s/call {_f(row['wall_s'] / calls if calls else None, 1)}  wall {row['wall_s']:.0f} s"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", nargs="?", default=str(URGE_SAMPLE), help="sessions with gold")
    parser.add_argument("--judges", nargs="+", default=list(DEFAULT_JUDGES), metavar="NAME")
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="for every judge"
    )
    parser.add_argument("--sessions", help="comma-separated session ids or row numbers")
    parser.add_argument("--max-turns", type=int, help="keep each session's first N turns")
    parser.add_argument("--bootstrap", type=int, default=1000, help="session resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the full results")
    add_engine_arguments(parser)
    args = parser.parse_args(argv)
    args.journal = "none"
    options = dict(parse_judge_option(None, o) for o in args.option)
    sessions = select(load_sessions(args.input).sessions, args.sessions, args.max_turns)
    n_links = sum(len(t.cited_link_ids) for s in sessions for t in s.turns)
    print(
        f"{len(sessions)} sessions, {sum(len(s.turns) for s in sessions)} turns, "
        f"{n_links} cited links; intervals: 95% bootstrap over sessions ({args.bootstrap})"
    )
    rows = []
    for name in args.judges:
        row = asyncio.run(bench_one(args, name, options, sessions))
        rows.append(row)
        print("\n".join(format_row(row)), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
