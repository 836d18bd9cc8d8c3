"""Each default score's agreement with people's preferences on a CrowdRAG folder.

Converts the folder (``genir-eval parse DIR --format crowdrag``), runs the default judges over
one session per answer (``citation_support``, ``link_usefulness.dna``, ``satisfaction.geval``;
measures ``sdcg_urge`` and the citation measures) with the preferences as gold, and prints, per
criterion, each session score's pair agreement (share of people's decided pairs the score
ranks the same way, 95% bootstrap interval over topics, score ties apart), beside references:
the rule "the answer citing more distinct passages wins", the citation recall each answer
would get if every citation fully supported its statement (only uncited claims count), and,
when the folder has ``llm_ratings.jsonl``, the study's own LLM judge (``combined``, both
orders). Also prints the run's wall and CPU time and which evidence the offline twins read.

    python bench/bench_preferences.py ../shared/crowdrag                    # offline, all topics
    GENIR_EVAL_OFFLINE_EVIDENCE=lexical python bench/bench_preferences.py ../shared/crowdrag
    python bench/bench_preferences.py ../shared/crowdrag --thresholds       # the twin's cut-offs
    python bench/bench_preferences.py ../shared/crowdrag --folds 4          # held-out topic folds
    python bench/bench_preferences.py ../shared/crowdrag --replicate 270    # time 270 answers
    python bench/bench_preferences.py ../shared/crowdrag --topics 1 --answers 3 \\
        --base-url http://127.0.0.1:8091/v1 --model local --concurrency 1   # the local LLM
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
from genir_eval.meta.preferences import lower_is_better, pair_agreement
from genir_eval.runner import parse_scenario, run_scenario

CRITERIA = ("quality_overall", "correctness_topical", "coverage_broad")


def _subset(
    out: Path, topics: int | None, per_topic: int | None = None
) -> tuple[Path, Path, list[str]]:
    """answers.jsonl and preferences.jsonl of the first ``topics`` topics (all when None),
    and of each topic only its first ``per_topic`` answers in the folder's order (all when
    None), with the rated pairs among them."""
    sessions = load_sessions(out / "answers.jsonl").sessions
    order = list(dict.fromkeys(s.session_id.split("/", 1)[0] for s in sessions))
    keep = set(order if topics is None else order[:topics])
    chosen: list[Any] = []
    taken: dict[str, int] = defaultdict(int)
    for session in sessions:
        topic = session.session_id.split("/", 1)[0]
        if topic in keep and (per_topic is None or taken[topic] < per_topic):
            taken[topic] += 1
            chosen.append(session)
    ids = {s.session_id for s in chosen}
    answers, preferences = out / "bench-answers.jsonl", out / "bench-preferences.jsonl"
    write_jsonl(chosen, answers)
    rows = [
        p
        for p in read_preferences(out / "preferences.jsonl")
        if p.query in keep and str(p.session_a) in ids and str(p.session_b) in ids
    ]
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


def _every_citation_full(answers: Path) -> dict[str, float | None]:
    """Each answer's ``citation_recall`` if every citation fully supported its statement: the
    share of its statements needing support that cite something. What any support judge
    can give at most, and it orders two answers only by their uncited claims."""
    from genir_eval.metrics.citations import CitationRecall, cited_statements

    out = {}
    for session in load_sessions(answers).sessions:
        turns = []
        for turn in session.turns:
            full = {
                (position, cid): 2
                for position, statement in enumerate(turn.statements, start=1)
                for cid in statement.citations
            }
            turns.append(cited_statements(turn, full))
        out[session.session_id] = CitationRecall().compute(turns)
    return out


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


def calibrate(sessions: list[Any], rng_seed: int = 0) -> tuple[float, float]:
    """The semantic support thresholds from ``sessions`` alone: the upper quartile (partial)
    and 90th percentile (full) of claims' similarity with a passage of their answer that
    their statement does not cite (one drawn per claim, seeded), i.e. how close a claim comes
    to a passage of its topic by chance. Nothing here reads a preference."""
    import random

    import numpy as np

    from genir_eval.judges.offline.citations import claims
    from genir_eval.judges.offline.semantic import best_match, embedder

    model = embedder()
    if model is None:
        raise SystemExit("the semantic extra is not installed (pip install 'genir-eval[semantic]')")
    rng = random.Random(rng_seed)
    values = []
    for session in sessions:
        turn = session.turns[0]
        for statement in turn.statements:
            if not statement.citations:
                continue
            others = [lk for lk in turn.links if lk.id not in statement.citations and lk.has_text]
            for claim in claims(statement.text) if others else ():
                values.append(best_match(model, claim, str(rng.choice(others).text)))
    partial, full = np.percentile(np.array(values), [75, 90])
    return float(partial), float(full)


def _topic(session: Any) -> str:
    return str(session.session_id).split("/", 1)[0]


def _thresholds(answers: Path) -> None:
    """Where the semantic support thresholds come from, over all topics and left out one
    topic at a time."""
    sessions = load_sessions(answers).sessions
    topics = sorted({_topic(s) for s in sessions})
    overall = calibrate(sessions)
    left_out = [calibrate([s for s in sessions if _topic(s) != t]) for t in topics]
    print(
        f"claims vs uncited passages of their answer: 75th {overall[0]:.3f}, 90th {overall[1]:.3f}; "
        f"one topic left out: 75th {min(p for p, _ in left_out):.3f}-"
        f"{max(p for p, _ in left_out):.3f}, 90th {min(f for _, f in left_out):.3f}-"
        f"{max(f for _, f in left_out):.3f}"
    )


def _agreement_cell(rows: list[Preference], name: str, values: dict[str, Any]) -> str:
    """Score ``name``'s agreement with people on ``rows`` (``values`` by session id), as a
    table cell: "61.2% of 49" (no interval)."""
    entry = pair_agreement(
        rows,
        [values.get(str(p.session_a)) for p in rows],
        [values.get(str(p.session_b)) for p in rows],
        lower_better=lower_is_better(name),
        n_boot=0,
    )
    value = entry.get("agreement")
    shown = "-" if value is None else f"{value:.1%}"
    return f"{shown} of {entry.get('decided', 0)}"


def _folds(
    answers: Path, preferences: Path, out: Path, args: argparse.Namespace, folds: int
) -> None:
    """Held-out topics: topic k (sorted) goes to fold k mod ``folds``; for each fold the
    semantic thresholds are calibrated (:func:`calibrate`) on the other folds' topics only,
    the default run is made with them, and each session score's agreement is measured on
    the fold's topics alone."""
    from genir_eval.judges.offline import citations

    sessions = load_sessions(answers).sessions
    topics = sorted({_topic(s) for s in sessions})
    rows = [p for p in read_preferences(preferences) if p.criterion == CRITERIA[0]]
    parts = [set(topics[k::folds]) for k in range(folds)]
    saved = citations.SEMANTIC_PARTIAL, citations.SEMANTIC_FULL
    cells: dict[str, list[str]] = defaultdict(list)
    fitted = []
    try:
        for k, part in enumerate(parts):
            partial, full = calibrate([s for s in sessions if _topic(s) not in part])
            fitted.append(f"{partial:.3f}/{full:.3f}")
            citations.SEMANTIC_PARTIAL, citations.SEMANTIC_FULL = partial, full
            run = run_scenario(
                _scenario(answers, preferences, out / f"fold-{k}", args), out_dir=out / f"fold-{k}"
            )
            held = [p for p in rows if p.query in part]
            scores: dict[str, dict[str, float | None]] = defaultdict(dict)
            for session in run.sessions:
                for name, value in session.scores.items():
                    scores[name][session.session_id] = value
            for name in sorted(scores):
                if name.startswith("labels:"):
                    continue
                cells[name].append(_agreement_cell(held, name, scores[name]))
    finally:
        citations.SEMANTIC_PARTIAL, citations.SEMANTIC_FULL = saved
    print(
        f"\n{CRITERIA[0]}, {folds} folds of held-out topics (thresholds partial/full fitted on "
        f"the other folds: {', '.join(fitted)}; agreement, decided pairs):"
    )
    for name, row in cells.items():
        print(f"  {name:<38} " + "  ".join(f"{c:>14}" for c in row))


def _time_replicated(answers: Path, preferences: Path, out: Path, args: argparse.Namespace) -> None:
    """The default offline run over ``args.replicate`` answers: the folder's answers in turn,
    each copy's source texts ending in its own mark, so that the twins' caches of sources
    cannot serve a copy from the original (a copy costs about what a new answer costs)."""
    import dataclasses

    sessions = load_sessions(answers).sessions
    copies = []
    for i in range(args.replicate):
        session, copy = sessions[i % len(sessions)], i // len(sessions)
        if copy:
            mark = f" (copy {copy})"
            turns = tuple(
                dataclasses.replace(
                    turn,
                    links=tuple(
                        dataclasses.replace(lk, text=(lk.text or "") + mark) for lk in turn.links
                    ),
                )
                for turn in session.turns
            )
            session = dataclasses.replace(
                session, session_id=f"{session.session_id}~{copy}", turns=turns
            )
        copies.append(session)
    replicated = out / "replicated.jsonl"
    write_jsonl(copies, replicated)
    scenario = _scenario(replicated, preferences, out / "replicated", args)
    wall, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    run_scenario(scenario, out_dir=out / "replicated")
    elapsed = time.perf_counter() - wall
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = used.ru_utime - cpu.ru_utime + used.ru_stime - cpu.ru_stime
    print(
        f"{len(copies)} answers ({len(sessions)} distinct, copies marked apart); offline "
        f"evidence: {evidence_name()}; run {elapsed:.1f} s wall, {cpu_s:.1f} s CPU"
    )


def _writer(session_id: str) -> str:
    """``human`` or ``llm``: the writer the converter puts in an answer's session id
    (``<topic>/<writer>-<style>``); read here to explain the figures, never by a judge."""
    return session_id.split("/", 1)[-1].split("-", 1)[0]


def _by_writers(run: Any, rows: list[Preference]) -> None:
    """Each session score's agreement on ``quality_overall`` split by who wrote the two
    answers: pairs mixing a human and an LLM answer, and pairs of one writer. A score that
    measures something people do not weigh splits the same way on both; one that rewards
    copying sentences from the passages (the human answers do) loses the mixed pairs."""
    subset = [p for p in rows if p.criterion == CRITERIA[0]]
    mixed = [p for p in subset if _writer(str(p.session_a)) != _writer(str(p.session_b))]
    same = [p for p in subset if _writer(str(p.session_a)) == _writer(str(p.session_b))]
    llm_won = sum(
        1
        for p in mixed
        if p.winner in "ab" and _writer(str(getattr(p, f"session_{p.winner}"))) == "llm"
    )
    scores: dict[str, dict[str, float | None]] = defaultdict(dict)
    for session in run.sessions:
        for name, value in session.scores.items():
            if not name.startswith("labels:"):
                scores[name][session.session_id] = value
    print(
        f"\n{CRITERIA[0]} by writers: {len(mixed)} pairs mixing a human and an LLM answer "
        f"(people prefer the LLM answer in {llm_won}), {len(same)} pairs of one writer"
    )
    print(f"  {'score':<38} {'mixed pairs':>22} {'one writer':>22}")
    for name in sorted(scores):
        cells = [_agreement_cell(part, name, scores[name]) for part in (mixed, same)]
        print(f"  {name:<38} {cells[0]:>22} {cells[1]:>22}")


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
    parser.add_argument(
        "--answers",
        type=int,
        default=None,
        help="only each topic's first N answers (and the pairs among them): a subset a slow "
        "judge can finish",
    )
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible server")
    parser.add_argument("--model", default="local", help="the server's model (default: local)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--thresholds",
        action="store_true",
        help="print where the semantic support thresholds come from, and stop",
    )
    parser.add_argument(
        "--folds",
        type=int,
        default=0,
        help="also: agreement on N folds of held-out topics, thresholds fitted on the others",
    )
    parser.add_argument(
        "--replicate",
        type=int,
        default=0,
        help="time the default run over N answers (the folder's answers repeated, each copy's "
        "source texts marked apart so that no cache serves them) and stop",
    )
    args = parser.parse_args()
    if args.base_url:
        os.environ.setdefault("OPENAI_API_KEY", "local")
    with tempfile.TemporaryDirectory(prefix="bench-preferences-") as tmp:
        out = Path(tmp)
        converted = convert_crowdrag(args.folder, out / "converted")
        if converted.missing_passages:
            print(
                f"{converted.missing_passages} citations name a passage their topic does not "
                "have: kept, with no source text (a support judge finds them unsupported)"
            )
        answers, preferences, topics = _subset(out / "converted", args.topics, args.answers)
        if args.thresholds:
            _thresholds(answers)
            return 0
        if args.replicate:
            _time_replicated(answers, preferences, out, args)
            return 0
        scenario = _scenario(answers, preferences, out / "run", args)
        wall, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        run = run_scenario(scenario, out_dir=out / "run")
        elapsed = time.perf_counter() - wall
        used = resource.getrusage(resource.RUSAGE_SELF)
        cpu_s = used.ru_utime - cpu.ru_utime + used.ru_stime - cpu.ru_stime
        rows = read_preferences(preferences)
        passages = _distinct_passages(answers)
        full = _every_citation_full(answers)
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
            ceiling = pair_agreement(
                subset,
                [full.get(str(p.session_a)) for p in subset],
                [full.get(str(p.session_b)) for p in subset],
            )
            print(_row("(recall if every citation were full)", ceiling))
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
        _by_writers(run, rows)
        if args.folds > 1:
            _folds(answers, preferences, out, args, args.folds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
