"""Each default score's agreement with people's preferences on a CrowdRAG folder.

Converts the folder (``genir-eval parse DIR --format crowdrag``), runs the default judges over
one session per answer (``citation_support``, ``link_usefulness.dna``, ``satisfaction.geval``;
measures ``sdcg_urge`` and the citation measures) with the preferences as gold, and prints, per
criterion, each session score's pair agreement (share of people's decided pairs the score
ranks the same way, 95% bootstrap interval over topics, score ties apart), beside two
references: the rule "the answer citing more distinct passages wins" and, when the folder has
``llm_ratings.jsonl``, the study's own LLM judge (``combined``, both orders). Also prints the
run's wall and CPU time and which evidence the offline twins read.

    python bench/bench_preferences.py ../shared/crowdrag                    # offline, all topics
    GENIR_EVAL_OFFLINE_EVIDENCE=lexical python bench/bench_preferences.py ../shared/crowdrag
    python bench/bench_preferences.py ../shared/crowdrag --thresholds       # the twin's cut-offs
    python bench/bench_preferences.py ../shared/crowdrag --topics 1 \\
        --base-url http://127.0.0.1:8091/v1 --model local        # the local LLM, first topic
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from genir_eval.ingest import load_sessions, read_preferences, write_jsonl
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.ingest.preferences import Preference, write_preferences
from genir_eval.judges.offline.semantic import evidence_name
from genir_eval.meta.preferences import pair_agreement
from genir_eval.runner import parse_scenario, run_scenario

CRITERIA = ("quality_overall", "correctness_topical", "coverage_broad")


def _subset(out: Path, topics: int | None) -> tuple[Path, Path, list[str]]:
    """answers.jsonl and preferences.jsonl of the first ``topics`` topics (all when None)."""
    sessions = load_sessions(out / "answers.jsonl").sessions
    order = list(dict.fromkeys(s.session_id.split("/", 1)[0] for s in sessions))
    keep = set(order if topics is None else order[:topics])
    answers, preferences = out / "bench-answers.jsonl", out / "bench-preferences.jsonl"
    write_jsonl([s for s in sessions if s.session_id.split("/", 1)[0] in keep], answers)
    rows = [p for p in read_preferences(out / "preferences.jsonl") if p.query in keep]
    with preferences.open("wb") as stream:
        write_preferences(rows, stream)
    return answers, preferences, sorted(keep)


def _scenario(answers: Path, preferences: Path, run_dir: Path, args: argparse.Namespace) -> Any:
    document: dict[str, Any] = {
        "version": 1,
        "name": "bench-preferences",
        "input": {"path": str(answers), "format": "jsonl", "preferences": str(preferences)},
        "engine": {"concurrency": args.concurrency, "cache_mode": "off", "journal": False},
        "judges": [
            {"name": "citation_support"},
            {"name": "link_usefulness.dna"},
            {"name": "satisfaction.geval"},
        ],
        "aggregate": {
            "measures": ["sdcg_urge", "citation_precision", "citation_recall", "unsupported_claims"]
        },
        "meta": {"enabled": True, "n_boot": 1000, "seed": 0},
        "output": {"dir": str(run_dir), "report": False},
    }
    if args.base_url:
        document["llm"] = {"provider": "openai", "base_url": args.base_url, "model": args.model}
        document["engine"].update({"timeout": 600.0, "give_up_after": 900.0})
    return parse_scenario(document, base_dir=run_dir)


def _distinct_passages(answers: Path) -> dict[str, float]:
    return {
        s.session_id: float(len(s.turns[0].cited_link_ids)) for s in load_sessions(answers).sessions
    }


def _study_judge(folder: Path, preferences: list[Preference]) -> dict[str, list[str | None]]:
    """The study's LLM judge (``combined``) as a score outcome per preference row: a/b when
    its two orders agree on a winner (flipped into the row's order), tie otherwise."""
    path = folder / "llm_ratings.jsonl"
    if not path.is_file():
        return {}
    responses = {}
    for line in (folder / "responses.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        responses[row["response"]] = f"{row['topic']}/{row['writer']}-{row['style']}"
    votes: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        if row.get("inference") != "combined":
            continue
        a, b = responses[row["response_a"]], responses[row["response_b"]]
        for criterion in CRITERIA:
            said = row.get(criterion)
            winner = {"a": a, "b": b}.get(said, "tie")
            votes[min(a, b), max(a, b), criterion].append(winner)
    out: dict[str, list[str | None]] = defaultdict(list)
    for criterion in CRITERIA:
        for p in preferences:
            if p.criterion != criterion:
                continue
            a, b = str(p.session_a), str(p.session_b)
            said = votes.get((min(a, b), max(a, b), criterion))
            if not said:
                out[criterion].append(None)
                continue
            winners = set(said)
            if len(winners) == 1 and "tie" not in winners:
                out[criterion].append("a" if said[0] == a else "b")
            else:
                out[criterion].append("tie")
    return out


def _thresholds(answers: Path) -> None:
    """Where the semantic support thresholds come from: the upper quartile and 90th
    percentile of statements' similarity with a same-answer passage they do not cite (one
    drawn per citation, seeded), over all topics and left out one topic at a time."""
    import random

    import numpy as np

    from genir_eval.judges.offline.semantic import best_match, embedder

    model = embedder()
    if model is None:
        raise SystemExit("the semantic extra is not installed (pip install 'genir-eval[semantic]')")
    rng = random.Random(0)
    values, topics = [], []
    for session in load_sessions(answers).sessions:
        turn = session.turns[0]
        for statement in turn.statements:
            for _ in statement.citations:
                others = [lk for lk in turn.links if lk.id not in statement.citations and lk.text]
                if others:
                    values.append(best_match(model, statement.text, str(rng.choice(others).text)))
                    topics.append(session.session_id.split("/", 1)[0])
    sample, where = np.array(values), np.array(topics)
    overall = np.percentile(sample, [75, 90])
    left_out = np.array([np.percentile(sample[where != t], [75, 90]) for t in sorted(set(topics))])
    print(
        f"uncited same-topic passages ({len(sample)}): 75th {overall[0]:.3f}, 90th {overall[1]:.3f}; "
        f"one topic left out: 75th {left_out[:, 0].min():.3f}-{left_out[:, 0].max():.3f}, "
        f"90th {left_out[:, 1].min():.3f}-{left_out[:, 1].max():.3f}"
    )


def _row(name: str, entry: dict[str, Any]) -> str:
    value = entry.get("agreement")
    ci = entry.get("ci95")
    shown = "-" if value is None else f"{value:6.1%}"
    interval = f"[{ci[0]:.1%}, {ci[1]:.1%}]" if ci else ""
    kappa = entry.get("kappa")
    return (
        f"  {name:<38} {entry.get('decided', 0):>7} {shown:>7} {interval:<16} "
        f"{entry.get('score_ties', 0):>6} {'-' if kappa is None else f'{kappa:.3f}':>7}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a CrowdRAG folder (responses, sources, ratings)")
    parser.add_argument("--topics", type=int, default=None, help="only the first N topics")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible server")
    parser.add_argument("--model", default="local", help="the server's model (default: local)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--thresholds",
        action="store_true",
        help="print where the semantic support thresholds come from, and stop",
    )
    args = parser.parse_args()
    if args.base_url:
        os.environ.setdefault("OPENAI_API_KEY", "local")
    with tempfile.TemporaryDirectory(prefix="bench-preferences-") as tmp:
        out = Path(tmp)
        convert_crowdrag(args.folder, out / "converted")
        answers, preferences, topics = _subset(out / "converted", args.topics)
        if args.thresholds:
            _thresholds(answers)
            return 0
        scenario = _scenario(answers, preferences, out / "run", args)
        wall, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        run = run_scenario(scenario, out_dir=out / "run")
        elapsed = time.perf_counter() - wall
        used = resource.getrusage(resource.RUSAGE_SELF)
        cpu_s = used.ru_utime - cpu.ru_utime + used.ru_stime - cpu.ru_stime
        rows = read_preferences(preferences)
        passages = _distinct_passages(answers)
        study = _study_judge(args.folder, rows)
        n_sessions = len(passages)
        where = f"{args.base_url} ({args.model})" if args.base_url else "offline"
        print(
            f"{args.folder}: {len(topics)} topics, {n_sessions} answers; judges {where}; "
            f"offline evidence: {evidence_name()}; run {elapsed:.1f} s wall, {cpu_s:.1f} s CPU"
        )
        table = (run.meta or {}).get("preferences") or {}
        for criterion in CRITERIA:
            if criterion not in table:
                continue
            subset = [p for p in rows if p.criterion == criterion]
            print(f"\n{criterion}: {len(subset)} pairs")
            print(
                f"  {'score':<38} {'decided':>7} {'agree':>7} {'95% CI':<16} {'ties':>6} {'kappa':>7}"
            )
            for name, entry in table[criterion]["session"].items():
                if not name.startswith("labels:"):
                    print(_row(name, entry))
            more = pair_agreement(
                subset,
                [passages.get(str(p.session_a)) for p in subset],
                [passages.get(str(p.session_b)) for p in subset],
            )
            print(_row("(rule: more distinct passages cited)", more))
            said = study.get(criterion)
            if said:
                decided = [(p, s) for p, s in zip(subset, said, strict=True) if s is not None]
                # as scores: 1 for the side the study's judge chose, 0 for the other
                judged = pair_agreement(
                    [p for p, _ in decided],
                    [1.0 if s == "a" else 0.0 for _, s in decided],
                    [1.0 if s == "b" else 0.0 for _, s in decided],
                )
                print(_row("(the study's LLM judge, combined)", judged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
