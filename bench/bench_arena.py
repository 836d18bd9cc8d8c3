"""The pairwise arena against people, and its speed.

Converts CrowdRAG-25 (``../shared/crowdrag``, Gienapp et al. SIGIR 2025) with the
``crowdrag`` reader, runs ``genir-eval arena`` over its six systems (writer x style) and
prints the agreement with people's gold winner on the decided pairs (``quality_overall``,
majority of a pair's labels, ties dropped; the judge's ties count half), how many gold pairs
went unjudged, Kendall's tau between the arena's six-system ranking (Bradley-Terry scores)
and people's win rates on the gold pairs, the position-consistency rate and the time.

    python bench/bench_arena.py                          # offline twin, all dev topics
    python bench/bench_arena.py --base-url http://127.0.0.1:8091/v1 --topics 2
                                                        # an LLM on the first 2 topics' gold pairs
    python bench/bench_arena.py --halves                 # also each half of the dev topics
    python bench/bench_arena.py --base-url http://127.0.0.1:8091/v1 --sample 100 --seed 0
                                                        # an LLM on 100 random gold pairs
    python bench/bench_arena.py --scale 10000            # 10,000 queries x 3 systems, offline
    python bench/bench_arena.py --scale 10000 40000      # each in its own process: peak RSS

``--halves`` also prints both figures on each half of the topics (file order: the first 10
and the last 10), the arena refitted on that half's pairs alone: a check that a design chosen
on some topics holds on others.

``--scale`` with several sizes runs each in a process of its own and prints each one's peak
RSS: the arena's memory is bounded when it does not grow with the queries.

With ``--base-url`` only the gold pairs of the first ``--topics`` topics (in file order) are
judged (``--pairs``), both orders, through the OpenAI-compatible endpoint (model ``local``
unless ``--model``), concurrency 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from scipy.stats import kendalltau

from genir_eval.cli import main as cli_main
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.ingest.preferences import read_preferences
from genir_eval.judges.pairwise.ranking import Outcomes, fit_davidson

ROOT = Path(__file__).resolve().parent.parent
CROWDRAG = ROOT.parent / "shared" / "crowdrag"


def _gold_pairs(preferences: Path, criterion: str) -> dict[tuple[str, str, str], str]:
    votes: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for p in read_preferences(preferences):
        if p.criterion != criterion or not p.in_arena:
            continue
        a, b = sorted((str(p.system_a), str(p.system_b)))
        key = (str(p.session), a, b)
        if p.winner in ("a", "b"):
            votes[key][str(p.system_a if p.winner == "a" else p.system_b)] += 1
        else:
            votes[key]  # noqa: B018 - rated, undecided
    out = {}
    for key, counter in votes.items():
        ranked = counter.most_common()
        if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
            out[key] = ranked[0][0]
    return out


def _people_win_rates(gold: dict[tuple[str, str, str], str]) -> dict[str, float]:
    wins: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for (_, a, b), winner in gold.items():
        seen[a] += 1
        seen[b] += 1
        wins[winner] += 1
    return {name: wins[name] / seen[name] for name in seen}


def _tau(rows: list[dict[str, object]], gold: dict[tuple[str, str, str], str]) -> float:
    """Kendall's tau-b between the Davidson scores fitted on ``rows`` and people's win rates
    on ``gold`` (what the held-out check compares: ``arena.json``'s score order)."""
    people = _people_win_rates(gold)
    names = sorted(people)
    theta = fit_davidson(Outcomes.from_rows(names, rows)).theta
    return float(kendalltau(theta, [people[n] for n in names]).statistic)


def _agreement(rows: list[dict[str, object]], gold: dict[tuple[str, str, str], str]) -> float:
    """Agreement with the gold winners (a judged tie counts half)."""
    verdicts = {}
    for row in rows:
        a, b = sorted((str(row["a"]), str(row["b"])))
        winner = row["winner"]
        verdicts[(str(row["session_id"]), a, b)] = (
            "tie" if winner == "tie" else None if winner is None else str(row[str(winner)])
        )
    got = [verdicts.get(key) for key in gold]
    return sum(
        1.0 if v == w else 0.5 if v == "tie" else 0.0
        for v, w in zip(got, gold.values(), strict=True)
    ) / len(gold)


def _halves(out: Path, gold: dict[tuple[str, str, str], str]) -> None:
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    topics = list(dict.fromkeys(key[0] for key in gold))
    middle = len(topics) // 2
    for label, chosen in (("first", topics[:middle]), ("second", topics[middle:])):
        keep = set(chosen)
        half_rows = [r for r in rows if r["session_id"] in keep]
        half_gold = {k: w for k, w in gold.items() if k[0] in keep}
        print(
            f"{label} half ({len(chosen)} topics, {chosen[0]}..{chosen[-1]}, "
            f"{len(half_gold)} decided gold pairs): agreement {_agreement(half_rows, half_gold):.3f}, "
            f"Kendall tau {_tau(half_rows, half_gold):.3f}"
        )


def _distinct_rule(systems: list[Path], gold: dict[tuple[str, str, str], str]) -> float:
    """The simple rule "the answer citing more distinct passages wins" (ties count half)."""
    cited: dict[tuple[str, str], int] = {}
    for path in systems:
        for line in path.read_text(encoding="utf-8").splitlines():
            session = json.loads(line)
            ids = {c for t in session["turns"] for s in t["statements"] for c in s["citations"]}
            cited[(session["session_id"], path.stem)] = len(ids)
    score = 0.0
    for (session, a, b), winner in gold.items():
        ca, cb = cited[(session, a)], cited[(session, b)]
        score += 0.5 if ca == cb else float((a if ca > cb else b) == winner)
    return score / len(gold)


def _wilson(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion ``rate`` of ``n``."""
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((rate * (1 - rate) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return centre - half, centre + half


def _bootstrap(values: list[float], resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the mean of ``values`` resampled with replacement
    (the unit is the gold pair: both orders of a pair stay together)."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def _score(verdict: str | None, a: str, b: str, winner: str) -> float | None:
    """1 when ``verdict`` (``a``/``b``/``tie`` in the row's terms) names ``winner``, half for
    a tie, None when there is no verdict."""
    if verdict is None:
        return None
    if verdict == "tie":
        return 0.5
    return 1.0 if (a if verdict == "a" else b) == winner else 0.0


def _expected_verdict(expected_a: float | None) -> str | None:
    if expected_a is None:
        return None
    return "tie" if expected_a == 0.5 else "a" if expected_a > 0.5 else "b"


def _order_figures(rows: list[dict[str, object]], gold: dict[tuple[str, str, str], str]) -> None:
    """What the LLM's two orders say against people, pair by pair: the combined verdict, each
    order alone, the expected preference from log-probabilities, position consistency and
    how often the answer shown first wins; each with a bootstrap interval over the pairs."""
    combined: list[float] = []
    expected: list[float] = []
    by_order: dict[str, list[float]] = {"ab": [], "ba": []}
    consistent: list[float] = []
    first_wins: list[float] = []
    for row in rows:
        a, b = str(row["a"]), str(row["b"])
        winner = gold.get((str(row["session_id"]), *sorted((a, b))))
        if winner is None:
            continue
        score = _score(row["winner"], a, b, winner)  # type: ignore[arg-type]
        if score is not None:
            combined.append(score)
        score = _score(_expected_verdict(row.get("expected_a")), a, b, winner)  # type: ignore[arg-type]
        if score is not None:
            expected.append(score)
        orders = [o for o in row["orders"] if o["overall"] is not None]  # type: ignore[union-attr]
        for order in orders:
            score = _score(order["overall"], a, b, winner)
            if score is not None:
                by_order[order["order"]].append(score)
            if order["overall"] != "tie":
                shown_first = "a" if order["order"] == "ab" else "b"
                first_wins.append(float(order["overall"] == shown_first))
        if len(orders) == 2:
            consistent.append(float(orders[0]["overall"] == orders[1]["overall"]))
    lines = [
        ("verdict, both orders combined (disagreeing orders are a tie)", combined),
        ("the order a-then-b alone", by_order["ab"]),
        ("the order b-then-a alone", by_order["ba"]),
        ("expected preference from log-probabilities (both orders' mean)", expected),
        ("position consistency (the same verdict in both orders)", consistent),
        ("the answer shown first wins (of the decided verdicts)", first_wins),
    ]
    print("per pair, with a 95% bootstrap interval over the pairs (10,000 resamples, seed 0):")
    for label, values in lines:
        if not values:
            print(f"  {label}: - (none)")
            continue
        lo, hi = _bootstrap(values)
        mean = sum(values) / len(values)
        print(f"  {label}: {mean:.3f} [{lo:.3f}, {hi:.3f}] (n = {len(values)})")


def crowdrag(args: argparse.Namespace, work: Path) -> int:
    converted = work / "crowdrag"
    convert_crowdrag(args.data, converted)
    systems = sorted((converted / "systems").glob("*.jsonl"))
    preferences = converted / "preferences.jsonl"
    gold = _gold_pairs(preferences, "quality_overall")
    out = work / "arena"
    command = [
        "arena",
        *map(str, systems),
        "--out",
        str(out),
        "--gold",
        str(preferences),
        "--cache",
        args.cache,
        "--quiet",
        "--format",
        "json",
    ]
    subset = "all dev topics"
    if args.base_url:
        topics = list(dict.fromkeys(key[0] for key in gold))[: args.topics]
        pairs = work / "pairs.jsonl"
        chosen = [key for key in gold if key[0] in topics][: args.limit]
        if args.sample:
            # a seeded random sample of the decided gold pairs of every topic
            every = sorted(gold)
            chosen = random.Random(args.seed).sample(every, min(args.sample, len(every)))
            topics = sorted({key[0] for key in chosen})
        pairs.write_text(
            "".join(
                json.dumps({"session_id": s, "turn": 1, "a": a, "b": b}) + "\n"
                for s, a, b in chosen
            ),
            encoding="utf-8",
        )
        subset = (
            f"the first {len(chosen)} decided gold pairs of the first {len(topics)} topics "
            f"({', '.join(topics)}), sources cut at {args.source_chars} characters"
            if not args.sample
            else f"{len(chosen)} of the {len(gold)} decided gold pairs drawn at random "
            f"(random.Random({args.seed}).sample over the sorted pairs) from {len(topics)} "
            f"topics, sources cut at {args.source_chars} characters"
        )
        command += [
            "--pairs",
            str(pairs),
            "--provider",
            "openai",
            "--base-url",
            args.base_url,
            "--model",
            args.model,
            "--concurrency",
            "1",
            "--timeout",
            "600",
            "--deadline",
            "7200",
            "--max-missing",
            "1",
            "--option",
            f"max_source_chars={args.source_chars}",
        ]
        os.environ.setdefault("OPENAI_API_KEY", "local")
    started = time.perf_counter()
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the arena's own output is not the bench's
    try:
        code = cli_main(command)
    finally:
        sys.stdout.close()
        sys.stdout = sys.__stdout__
    elapsed = time.perf_counter() - started
    document = json.loads((out / "arena.json").read_text(encoding="utf-8"))
    agreement = document["gold"]
    people = _people_win_rates(gold)
    scores = {s["name"]: s["score"] for s in document["systems"]}
    names = sorted(people)
    # a failed LLM run ranks no system: its agreement and missing pairs are still printed
    ranked = all(n in scores for n in names)
    tau = (
        kendalltau([scores[n] for n in names], [people[n] for n in names]).statistic
        if ranked
        else None
    )
    judge = "offline twin" if not args.base_url else f"{args.model} at {args.base_url}"
    print(f"judge: {judge}; subset: {subset}; exit code {code}")
    print(
        f"agreement with people: {agreement['rate']:.3f} on {agreement['judged']} decided gold "
        f"pairs ({agreement['ties']} judged ties counted half; decided-only "
        f"{agreement['decided_rate'] or 0:.3f}); unjudged gold pairs: {agreement['unjudged']}"
    )
    if args.sample and agreement["judged"]:
        lo, hi = _wilson(agreement["rate"], agreement["judged"])
        print(f"  95% interval (Wilson, the judged pairs; ties counted half): [{lo:.3f}, {hi:.3f}]")
    if not args.base_url:
        rule = _distinct_rule(systems, gold)
        print(f"the rule 'more distinct cited passages wins' on the same pairs: {rule:.3f}")
        shown = "- (a system was not ranked)" if tau is None else f"{tau:.3f}"
        print(f"Kendall tau (six systems, BT score vs people's win rate): {shown}")
    consistency = document["consistency"]
    rate = consistency["position_consistency"]
    print(
        f"position consistency: {'-' if rate is None else f'{rate:.3f}'} over "
        f"{consistency['pairs_in_both_orders']} pairs judged in both orders "
        f"({consistency['mirrored_pairs']} judged once, the swap mirrored); missing pairs: "
        f"{document['pairs']['missing']}; intransitive cycles: "
        f"{consistency['intransitive_cycles']} of {consistency['decided_triads']} triads"
    )
    print(f"time: {elapsed:.1f}s for {document['pairs']['judged']} pairs")
    if args.base_url:
        rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
        _order_figures(rows, gold)
    if args.keep:
        shutil.copytree(out, args.keep, dirs_exist_ok=True)
        print(f"the arena's folder: {args.keep}")
    if args.halves:
        _halves(out, gold)
    return 0


def _session(i: int, system: int, rng: random.Random) -> dict[str, object]:
    n_links = rng.randint(1, 6)
    words = " ".join(rng.choice(("alpha", "beta", "gamma", "delta", "omega")) for _ in range(60))
    lines = [f"- point {k} {words[: rng.randint(40, 200)]} [{k}]" for k in range(1, n_links + 1)]
    return {
        "version": 1,
        "session_id": f"q{i}",
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": f"query number {i}",
                "response_text": "\n".join(lines),
                "links": [
                    {
                        "id": k,
                        "url": f"https://example.org/{system}/{k}",
                        "title": f"s{k}",
                        "text": f"source {k} {words}",
                    }
                    for k in range(1, n_links + 1)
                ],
            }
        ],
    }


def scale(args: argparse.Namespace, work: Path) -> int:
    rng = random.Random(0)
    files = []
    for system in range(3):
        path = work / f"system{system}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for i in range(args.scale):
                handle.write(json.dumps(_session(i, system, rng)) + "\n")
        files.append(str(path))
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = before.ru_utime + before.ru_stime
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    try:
        code = cli_main(
            ["arena", *files, "--out", str(work / "arena"), "--cache", "none", "--quiet"]
        )
    finally:
        sys.stdout.close()
        sys.stdout = sys.__stdout__
    elapsed = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    peak = usage.ru_maxrss / 1024
    pairs = sum(1 for _ in (work / "arena" / "pairs.jsonl").open())
    document = json.loads((work / "arena" / "arena.json").read_text(encoding="utf-8"))
    judged = sum(e["calls"] for e in document["engines"]) or pairs
    rate = pairs / cpu
    print(
        f"{args.scale} queries x 3 systems offline: {pairs} pairs in {elapsed:.1f}s wall, "
        f"{cpu:.1f}s CPU ({rate:.0f} pairs per CPU second; {judged} orders judged, "
        f"{document['consistency']['mirrored_pairs']} mirrored), exit code {code}, peak RSS "
        f"{peak:.0f} MB, load average {os.getloadavg()[0]:.1f}"
        + (
            f"; 10,000 queries x 3 systems at this CPU rate: {30_000 / rate:.0f}s (budget 60 s)"
            if args.scale != 10_000
            else " (budget 60 s)"
        )
    )
    return 0


def scales(sizes: list[int]) -> int:
    """Each size in a process of its own (peak RSS is a process's), then the peaks side by
    side."""
    peaks = []
    for size in sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--scale", str(size)],
            capture_output=True,
            text=True,
            check=False,
        )
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        found = re.search(r"peak RSS ([0-9]+) MB", done.stdout)
        if done.returncode or found is None:
            print(f"the {size}-query arena failed (exit code {done.returncode})")
            return 1
        peaks.append(int(found.group(1)))
    print(
        "peak RSS: "
        + ", ".join(
            f"{peak} MB at {size:,} queries" for size, peak in zip(sizes, peaks, strict=True)
        )
        + f" ({peaks[-1] / peaks[0]:.2f}x for {sizes[-1] / sizes[0]:g}x the queries)"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(CROWDRAG), help="the CrowdRAG folder")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: offline)")
    parser.add_argument("--model", default="local", help="model name (default local)")
    parser.add_argument("--topics", type=int, default=2, help="topics judged with --base-url")
    parser.add_argument("--limit", type=int, help="at most this many gold pairs with --base-url")
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="with --base-url: this many decided gold pairs drawn at random from every topic "
        "(instead of --topics/--limit), with a 95%% interval",
    )
    parser.add_argument("--seed", type=int, default=0, help="the --sample draw's seed")
    parser.add_argument(
        "--source-chars", type=int, default=300, help="source text shown per cited passage"
    )
    parser.add_argument(
        "--cache",
        default="none",
        help="the engine's cache file, so that a long --base-url run resumes where it stopped "
        "(default none)",
    )
    parser.add_argument(
        "--keep", type=Path, help="copy the arena's output folder (pairs.jsonl, arena.json) here"
    )
    parser.add_argument(
        "--halves", action="store_true", help="also the figures on each half of the topics"
    )
    parser.add_argument(
        "--scale",
        type=int,
        nargs="+",
        help="queries of the synthetic speed bench (several: each in its own process)",
    )
    args = parser.parse_args()
    if args.scale and len(args.scale) > 1:
        return scales(args.scale)
    if args.scale:
        args.scale = args.scale[0]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        return scale(args, work) if args.scale else crowdrag(args, work)


if __name__ == "__main__":
    raise SystemExit(main())
