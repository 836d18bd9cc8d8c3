"""Nugget evaluation: how its scores meet people's preferences, and what its assignment costs.

``agreement``: converts a CrowdRAG folder (``genir-eval parse DIR --format crowdrag``), runs
the nugget judge over one session per answer with each topic's nuggets pooled over its six
answers (``pool = "run"``), and prints, per nugget score (TREC 2024 RAG's all/vital, strict
and partial), its pair agreement with people's gold preferences on ``quality_overall``,
``coverage_broad`` and ``coverage_deep`` (share of people's decided pairs the score orders the
same way, score ties apart, 95% bootstrap interval over topics), and the Kendall tau-b of the
six systems ordered by mean score against people's win rates. ``--halves`` runs the twin's
a-priori designs (:data:`DESIGNS`), chooses one on the first half of the topics (sorted ids)
by its ``quality_overall`` agreement, and reports every design on the second half.

``calls``: nugget assignment for ``--answers`` answers x ``--nuggets`` nuggets (a nugget file
given, so only assignment runs) against the local fake server in its own process speaking the
OpenAI protocol: the provider calls made (``answers x ceil(nuggets / assign_batch)``, the
batching bound) and the wall time.

    python bench/bench_nuggets.py agreement ../shared/crowdrag
    python bench/bench_nuggets.py agreement ../shared/crowdrag --halves
    python bench/bench_nuggets.py agreement ../shared/crowdrag --topics 1 --answers 2 \\
        --base-url http://127.0.0.1:8091/v1 --model local     # the local LLM, one at a time
    python bench/bench_nuggets.py calls --answers 1000 --nuggets 20 --assign-batch 10
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scipy.stats import kendalltau

from genir_eval.ingest import load_sessions, read_preferences, write_jsonl
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.ingest.preferences import Preference, write_preferences
from genir_eval.judges.nuggets import twin
from genir_eval.judges.offline.semantic import evidence_name
from genir_eval.meta.preferences import pair_agreement
from genir_eval.runner import parse_scenario, run_scenario

CRITERIA = ("quality_overall", "coverage_broad", "coverage_deep")
SCORES = (
    "nugget_recall",
    "nugget_recall(partial=0)",
    "vital_nugget_recall",
    "vital_nugget_recall(partial=0)",
)
#: The twin's a-priori creation designs: what one nugget is cut from (the assignment's design
#: is chosen on labelled pairs by ``bench/nugget_assignment_cv.py``).
DESIGNS: dict[str, dict[str, Any]] = {
    "clauses": {"NUGGET_UNIT": "clause"},
    "sentences": {"NUGGET_UNIT": "sentence"},
}


@contextmanager
def design(changes: dict[str, Any]) -> Iterator[None]:
    saved = {name: getattr(twin, name) for name in changes}
    try:
        for name, value in changes.items():
            setattr(twin, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(twin, name, value)


def _subset(out: Path, topics: int | None, per_topic: int | None) -> tuple[Path, Path]:
    sessions = load_sessions(out / "answers.jsonl").sessions
    order = sorted({str(s.meta["topic"]) for s in sessions})
    keep = set(order if topics is None else order[:topics])
    taken: Counter[str] = Counter()
    chosen = []
    for s in sessions:
        topic = str(s.meta["topic"])
        if topic in keep and (per_topic is None or taken[topic] < per_topic):
            taken[topic] += 1
            chosen.append(s)
    ids = {s.session_id for s in chosen}
    answers, preferences = out / "bench-answers.jsonl", out / "bench-preferences.jsonl"
    write_jsonl(chosen, answers)
    rows = [
        p
        for p in read_preferences(out / "preferences.jsonl")
        if str(p.session_a) in ids and str(p.session_b) in ids
    ]
    with preferences.open("wb") as stream:
        write_preferences(rows, stream)
    return answers, preferences


def _run(answers: Path, preferences: Path, run_dir: Path, args: argparse.Namespace) -> Any:
    document: dict[str, Any] = {
        "version": 1,
        "name": "bench-nuggets",
        "input": {"path": str(answers), "format": "jsonl", "preferences": str(preferences)},
        "engine": {
            "concurrency": args.concurrency,
            **({"cache": args.cache} if args.cache else {"cache_mode": "off"}),
            "journal": False,
        },
        "judges": [
            {
                "name": "nuggets",
                "options": {
                    "pool": "run",
                    "max_nuggets": args.max_nuggets,
                    "max_source_chars": args.max_source_chars,
                    **({"response_format": args.response_format} if args.response_format else {}),
                },
            }
        ],
        "aggregate": {"measures": list(SCORES)},
        "meta": {"enabled": False},
        "output": {"dir": str(run_dir), "report": False},
    }
    if args.base_url:
        document["llm"] = {"provider": "openai", "base_url": args.base_url, "model": args.model}
        document["engine"].update({"timeout": 900.0, "give_up_after": 3600.0, "max_missing": 1.0})
    return run_scenario(parse_scenario(document, base_dir=run_dir), out_dir=run_dir)


def _win_rates(rows: list[Preference]) -> dict[str, float]:
    wins: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for p in rows:
        if p.winner not in ("a", "b"):
            continue
        a, b = str(p.system_a), str(p.system_b)
        seen[a] += 1
        seen[b] += 1
        wins[a if p.winner == "a" else b] += 1
    return {name: wins[name] / seen[name] for name in seen}


def figures(run: Any, rows: list[Preference], topics: set[str]) -> dict[str, dict[str, Any]]:
    """Per score: agreement per criterion (with its interval) and the systems' Kendall tau
    on ``quality_overall``, over the preferences of ``topics``."""
    scores: dict[str, dict[str, float | None]] = defaultdict(dict)
    for session in run.sessions:
        for name in SCORES:
            scores[name][session.session_id] = session.scores.get(name)
    out: dict[str, dict[str, Any]] = {}
    for name in SCORES:
        values = scores[name]
        entry: dict[str, Any] = {}
        for criterion in CRITERIA:
            subset = [p for p in rows if p.criterion == criterion and p.query in topics]
            entry[criterion] = pair_agreement(
                subset,
                [values.get(str(p.session_a)) for p in subset],
                [values.get(str(p.session_b)) for p in subset],
                n_boot=1000,
            )
        people = _win_rates([p for p in rows if p.criterion == CRITERIA[0] and p.query in topics])
        by_system: dict[str, list[float]] = defaultdict(list)
        for session_id, value in values.items():
            topic, _, system = session_id.partition("/")
            if value is not None and topic in topics:
                by_system[system].append(value)
        names = sorted(set(people) & set(by_system))
        means = {n: statistics.fmean(by_system[n]) for n in names}
        tau = kendalltau([means[n] for n in names], [people[n] for n in names]).statistic
        entry["tau"] = None if tau is None or math.isnan(tau) else float(tau)
        entry["means"] = means
        entry["people"] = {n: people[n] for n in names}
        out[name] = entry
    return out


def _cell(block: dict[str, Any]) -> str:
    value, ci = block.get("agreement"), block.get("ci95")
    if value is None:
        return "-"
    interval = f" [{ci[0]:.2f},{ci[1]:.2f}]" if ci else ""
    return f"{value:.1%}{interval} of {block['decided']}"


def _print(table: dict[str, dict[str, Any]], title: str) -> None:
    print(title)
    print(f"  {'score':<32}" + "".join(f"{c:>30}" for c in CRITERIA) + f"{'tau':>8}")
    for name, entry in table.items():
        tau = "-" if entry["tau"] is None else f"{entry['tau']:.3f}"
        print(f"  {name:<32}" + "".join(f"{_cell(entry[c]):>30}" for c in CRITERIA) + f"{tau:>8}")


def agreement(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        convert_crowdrag(Path(args.folder), work / "crowdrag")
        answers, prefs = _subset(work / "crowdrag", args.topics, args.answers)
        rows = list(read_preferences(prefs))
        topics = sorted({str(s.meta["topic"]) for s in load_sessions(answers).sessions})
        print(f"offline evidence: {evidence_name()}; {len(topics)} topics")
        if not args.halves:
            started = time.perf_counter()
            run = _run(answers, prefs, work / "run", args)
            wall = time.perf_counter() - started
            table = figures(run, rows, set(topics))
            _print(table, f"all {len(topics)} topics (run {wall:.1f} s)")
            means = table[SCORES[0]]
            print("  systems, mean nugget_recall vs people's quality_overall win rate:")
            for name in sorted(means["means"], key=lambda n: -means["means"][n]):
                print(f"    {name:<14} {means['means'][name]:.3f}  {means['people'][name]:.3f}")
            return 0
        middle = len(topics) // 2
        first, second = set(topics[:middle]), set(topics[middle:])
        results = {}
        for label, changes in DESIGNS.items():
            with design(changes):
                run = _run(answers, prefs, work / re.sub(r"\W+", "-", label), args)
            results[label] = (figures(run, rows, first), figures(run, rows, second))
        print(
            f"first half: {sorted(first)[0]}..{sorted(first)[-1]}; second: "
            f"{sorted(second)[0]}..{sorted(second)[-1]}"
        )
        for label, (one, _) in results.items():
            print(
                f"  {label:<16} first half quality_overall: "
                f"{_cell(one[SCORES[0]][CRITERIA[0]])}, tau {one[SCORES[0]]['tau']}"
            )
        chosen = max(
            results, key=lambda k: results[k][0][SCORES[0]][CRITERIA[0]]["agreement"] or 0.0
        )
        print(f"chosen on the first half: {chosen}")
        _print(results[chosen][1], f"second half, design {chosen!r}")
        for label, (_, two) in results.items():
            if label != chosen:
                print(
                    f"  (second half, {label}: {_cell(two[SCORES[0]][CRITERIA[0]])}, "
                    f"tau {two[SCORES[0]]['tau']})"
                )
    return 0


def _assign_reply(request: Any) -> str:
    """The fake server's assignment: every nugget of the prompt supported (module level:
    the server runs in its own process)."""
    ids = re.findall(r"<<<BEGIN NUGGET (\S+?)>>>", request.last_user_text)
    return json.dumps({"assignments": {i: {"assignment": "support", "reason": "r"} for i in ids}})


def calls(args: argparse.Namespace) -> int:
    from genir_eval.records import Link, Session, Statement, Turn
    from genir_eval.testing.fake_llm_server import FakeLLMServerProcess

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sessions = []
        nuggets = []
        for i in range(args.answers):
            text = f"Answer {i} says that fact {i % 7} holds [1]."
            link = Link(1, f"https://e.example/{i}", "t", "a source")
            turn = Turn(1, f"query {i}", text, (Statement(text, (1,)),), (link,))
            sessions.append(Session(f"a{i}", (turn,), language="en"))
            for k in range(1, args.nuggets + 1):
                nuggets.append(
                    {
                        "version": 1,
                        "qid": f"a{i}",
                        "query": f"query {i}",
                        "nugget_id": f"n{k}",
                        "text": f"fact {k} of query {i}",
                        "importance": "vital" if k <= 5 else "okay",
                        "origin": "bench",
                    }
                )
        log, given = work / "answers.jsonl", work / "nuggets.jsonl"
        write_jsonl(sessions, log)
        given.write_text("".join(json.dumps(r) + "\n" for r in nuggets), encoding="utf-8")
        server = FakeLLMServerProcess(reply=_assign_reply).start()
        try:
            document = {
                "version": 1,
                "name": "bench-nugget-calls",
                "input": {"path": str(log), "format": "jsonl"},
                "llm": {
                    "provider": "openai",
                    "base_url": server.openai_base_url,
                    "model": "fake-model",
                },
                "engine": {"concurrency": args.concurrency, "cache_mode": "off", "journal": False},
                "judges": [
                    {
                        "name": "nuggets",
                        "options": {"nuggets": str(given), "assign_batch": args.assign_batch},
                    }
                ],
                "meta": {"enabled": False},
                "output": {"dir": str(work / "run"), "report": False},
            }
            import os

            os.environ.setdefault("OPENAI_API_KEY", server.api_key)
            started = time.perf_counter()
            run = run_scenario(parse_scenario(document, base_dir=work), out_dir=work / "run")
            wall = time.perf_counter() - started
            made = server.stats().total
        finally:
            server.stop()
        bound = args.answers * math.ceil(args.nuggets / args.assign_batch)
        scored = sum(1 for v in run.scores("nugget_recall").values() if v is not None)
        print(
            f"{args.answers} answers x {args.nuggets} nuggets, assign_batch {args.assign_batch}: "
            f"{made} provider calls (bound {bound}; unbatched {args.answers * args.nuggets}), "
            f"{scored} answers scored, wall {wall:.1f} s (concurrency {args.concurrency})"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("agreement")
    one.add_argument("folder")
    one.add_argument("--halves", action="store_true")
    one.add_argument("--topics", type=int)
    one.add_argument("--answers", type=int, help="answers per topic (default: all six)")
    one.add_argument("--base-url")
    one.add_argument("--model", default="local")
    one.add_argument("--concurrency", type=int, default=8)
    one.add_argument("--max-nuggets", type=int, default=30)
    one.add_argument("--max-source-chars", type=int, default=2000)
    one.add_argument(
        "--response-format",
        choices=("json_object", "json_schema"),
        help="the judge's response_format (json_schema: each reply's schema, for servers that "
        "constrain decoding to it)",
    )
    one.add_argument(
        "--cache",
        help="the engine's cache file, so that a long --base-url run resumes where it stopped "
        "(default: no cache)",
    )
    two = sub.add_parser("calls")
    two.add_argument("--answers", type=int, default=1000)
    two.add_argument("--nuggets", type=int, default=20)
    two.add_argument("--assign-batch", type=int, default=10)
    two.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    return agreement(args) if args.command == "agreement" else calls(args)


if __name__ == "__main__":
    sys.exit(main())
