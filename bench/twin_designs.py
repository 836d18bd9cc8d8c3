"""How the pairwise twin's design was chosen: a handful of a-priori designs, each chosen on
half of the CrowdRAG-25 development topics and measured on the other half.

A design is which evidence the overall preference sums (the shipped
``coverage, clarity, synthesis`` before, ``+ support`` now) and how each kind is compared:
``relative`` (``(x - y) / max(|x|, |y|)`` for every kind), ``shares`` (shares as ``x - y``,
counts relative), ``log`` (counts as ``ln((x+1)/(y+1))``, shares relative), ``log+shares``
(the shipped scales), or ``vote`` (each kind's sign, the majority). No weight is fitted.

For each of ``--splits`` random halvings of the 20 topics (and the file-order halving), the
design with the best Kendall tau among those agreeing with people on >= 0.66 of the decided
pairs of one half is measured on the other half, both ways: what choosing this way would
give on topics it did not see. The complete design judges every pair of every topic, so a
system's Bradley-Terry order is its win-rate order and the tau here is computed from win
rates (ties half), against people's win rates on the same half's decided gold pairs.

    python bench/twin_designs.py

Superseded for choosing the shipped design by ``bench/twin_cv.py`` (repeated 4-fold
cross-validation over topics, the choosing measured out of sample against the
distinct-passages rule); kept for the halving figures the README quotes.
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from bench_arena import CROWDRAG, _gold_pairs
from scipy.stats import kendalltau

from genir_eval.ingest import iter_sessions
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.judges.pairwise.twin import COUNTS, AnswerEvidence, answer_evidence

Score = Callable[[AnswerEvidence, AnswerEvidence], float]


def _relative(x: float, y: float) -> float:
    top = max(abs(x), abs(y))
    return 0.0 if top == 0 else (x - y) / top


def design(evidence: Sequence[str], scales: str) -> Score:
    def compare(name: str, x: float, y: float) -> float:
        count = name in COUNTS
        if count and scales in ("log", "log+shares"):
            return math.log((x + 1) / (y + 1))
        if not count and scales in ("shares", "log+shares"):
            return x - y
        return _relative(x, y)

    def score(first: AnswerEvidence, second: AnswerEvidence) -> float:
        total = 0.0
        for name in evidence:
            x, y = getattr(first, name), getattr(second, name)
            if (x is None or y is None) and name == "support":
                x, y = first.grounding, second.grounding
            if x is None or y is None:
                continue
            d = compare(name, float(x), float(y))
            total += float(np.sign(d)) if scales == "vote" else d
        return total

    return score


DESIGNS = {
    f"{'+'.join(evidence)} {scales}": design(evidence, scales)
    for evidence in (
        ("coverage", "clarity", "synthesis"),
        ("coverage", "clarity", "support", "synthesis"),
    )
    for scales in ("relative", "shares", "log", "log+shares", "vote")
}


def measure(
    score: Score,
    topics: Sequence[str],
    systems: Sequence[str],
    evidence: dict[tuple[str, str], AnswerEvidence],
    gold: dict[tuple[str, str, str], str],
) -> tuple[float, float]:
    """(agreement with the decided gold pairs, ties half; Kendall tau-b of win rates)."""
    wins: Counter[str] = Counter()
    agree = total = 0.0
    for topic in topics:
        for a, b in itertools.combinations(systems, 2):
            s = score(evidence[(topic, a)], evidence[(topic, b)])
            wins[a if s > 0 else b] += 1.0 if s else 0.0
            if s == 0:
                wins[a] += 0.5
                wins[b] += 0.5
            winner = gold.get((topic, a, b))
            if winner is not None:
                total += 1
                agree += 0.5 if s == 0 else float((a if s > 0 else b) == winner)
    people: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for (topic, a, b), winner in gold.items():
        if topic in topics:
            seen[a] += 1
            seen[b] += 1
            people[winner] += 1
    tau = kendalltau([wins[s] for s in systems], [people[s] / seen[s] for s in systems])
    return agree / total, float(tau.statistic)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(CROWDRAG), help="the CrowdRAG folder")
    parser.add_argument("--splits", type=int, default=50, help="random halvings (default 50)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        converted = Path(folder) / "crowdrag"
        convert_crowdrag(args.data, converted)
        gold = _gold_pairs(converted / "preferences.jsonl", "quality_overall")
        evidence = {}
        for path in sorted((converted / "systems").glob("*.jsonl")):
            for session in iter_sessions(path):
                evidence[(session.session_id, path.stem)] = answer_evidence(session.turns[0])
    systems = sorted({key[1] for key in evidence})
    topics = list(dict.fromkeys(key[0] for key in gold))
    print("design: agreement, tau on all 20 topics")
    for name, score in DESIGNS.items():
        agreement, tau = measure(score, topics, systems, evidence, gold)
        print(f"  {name:45s} {agreement:.3f}  {tau:.3f}")

    def choose(seen: Sequence[str]) -> str:
        found = {n: measure(s, seen, systems, evidence, gold) for n, s in DESIGNS.items()}
        fine = [n for n in found if found[n][0] >= 0.66] or list(found)
        return max(fine, key=lambda n: (round(found[n][1], 6), found[n][0]))

    middle = len(topics) // 2
    halvings = [(topics[:middle], topics[middle:])]
    rng = np.random.default_rng(0)
    for _ in range(args.splits):
        order = [topics[i] for i in rng.permutation(len(topics))]
        halvings.append((order[:middle], order[middle:]))
    held: list[tuple[float, float]] = []
    chosen: Counter[str] = Counter()
    for number, (first, second) in enumerate(halvings):
        for seen, unseen in ((first, second), (second, first)):
            name = choose(seen)
            figures = measure(DESIGNS[name], unseen, systems, evidence, gold)
            if number == 0:
                print(
                    f"file order: chosen on {seen[0]}..: {name}; other half {figures[0]:.3f}, tau {figures[1]:.3f}"
                )
            else:
                held.append(figures)
                chosen[name] += 1
    array = np.array(held)
    print(
        f"{len(held)} random halves: chosen on one half, measured on the other: agreement "
        f"{array[:, 0].mean():.3f}, tau {array[:, 1].mean():.3f} (tau >= 0.73 in "
        f"{np.mean(array[:, 1] >= 0.73):.0%})"
    )
    for name in (
        "coverage+clarity+synthesis relative",
        "coverage+clarity+support+synthesis log+shares",
    ):
        fixed = np.array(
            [
                measure(DESIGNS[name], u, systems, evidence, gold)
                for f, s in halvings[1:]
                for u in (s, f)
            ]
        )
        print(
            f"  {name} on the same halves: agreement {fixed[:, 0].mean():.3f}, tau {fixed[:, 1].mean():.3f}"
        )
    print("chosen: " + ", ".join(f"{n} {c}" for n, c in chosen.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
