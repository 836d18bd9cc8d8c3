"""The offline twins' designs chosen by repeated leave-topics-out cross-validation.

Converts CrowdRAG-25's development topics (``../shared/crowdrag``) and, for each twin,
scores every a-priori design on every gold pair (``quality_overall``, a pair's majority of
its gold labels, ties dropped), then runs :func:`genir_eval.meta.crossval.cross_validate`:
``--repeats`` times ``--folds``-fold over the topics (seeded), the design best on the other
folds judges each fold's topics, against the twin's simplest ingredient on the same folds.

- **pairwise** (the arena's offline twin, ``genir_eval/judges/pairwise/twin.py``): a hit is
  1 when the design prefers people's winner, 0.5 on a tie (as ``bench/bench_arena.py``
  counts the arena), 0 otherwise. Ingredient: the distinct-passages rule (``coverage``).
  Also the Kendall tau-b of the six systems' out-of-sample win rates (ties half) against
  people's win rates, per repeat.
- **satisfaction** (``satisfaction.geval``'s twin, ``genir_eval/judges/offline/twins.py``,
  the default headline): each design's 1-10 rating (rounded, as the twin replies); a hit is
  1 or 0 on the pairs the rating decides, ties not counted (as the headline's pair agreement
  counts). Ingredient: the breadth of sources cited (``source_count``).
- **satisfaction.urs / .gah** overall, the same way (their shipped overall, the dimensions'
  weighted mean, against their plain mean, each dimension alone and the ingredient). Printed
  but not adopted: their overall with ``sdcg_urge`` carries the URGE goal (z-score
  combination, Pearson >= 0.45 with the users' session satisfaction,
  ``tests/judges/offline/test_offline_twins.py``), which the ingredient breaks (0.185).

    python bench/twin_cv.py                       # 5 x 4-fold, seed 0
    python bench/twin_cv.py --repeats 10 --folds 5 --seed 1
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from bench_arena import CROWDRAG, _gold_pairs
from scipy.stats import kendalltau

from genir_eval.ingest import iter_sessions
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.judges.offline.features import TurnEvidence, turn_evidence
from genir_eval.judges.offline.twins import dimension_readings, weighted_overall
from genir_eval.judges.pairwise.twin import COUNTS, AnswerEvidence, answer_evidence
from genir_eval.judges.satisfaction.common import GAH_DIMENSIONS, dimensions_for
from genir_eval.meta.crossval import CrossValidation, best_design, cross_validate

Gold = dict[tuple[str, str, str], str]
PairScore = Callable[[AnswerEvidence, AnswerEvidence], float]


def _compare(name: str, x: float, y: float, scale: str) -> float:
    if scale == "log+shares":
        return math.log1p(x) - math.log1p(y) if name in COUNTS else x - y
    top = max(abs(x), abs(y))  # relative
    return 0.0 if top == 0 else (x - y) / top


def _reading(first: AnswerEvidence, second: AnswerEvidence, name: str) -> tuple[float, float]:
    x, y = getattr(first, name), getattr(second, name)
    if (x is None or y is None) and name == "support":
        x, y = first.grounding, second.grounding
    if x is None or y is None:
        return 0.0, 0.0
    return float(x), float(y)


def summed(evidence: Sequence[str], scale: str) -> PairScore:
    """The sum of each kind's comparison (the shipped twin: log ratio of counts, difference
    of shares)."""

    def score(first: AnswerEvidence, second: AnswerEvidence) -> float:
        return sum(_compare(n, *_reading(first, second, n), scale) for n in evidence)

    return score


def lexicographic(evidence: Sequence[str]) -> PairScore:
    """The first kind that differs decides (ties of the first broken by the next)."""

    def score(first: AnswerEvidence, second: AnswerEvidence) -> float:
        for name in evidence:
            x, y = _reading(first, second, name)
            if x != y:
                return 1.0 if x > y else -1.0
        return 0.0

    return score


PAIRWISE: dict[str, PairScore] = {
    "coverage": lexicographic(("coverage",)),
    "coverage, then synthesis": lexicographic(("coverage", "synthesis")),
    "coverage, then support": lexicographic(("coverage", "support")),
    "coverage, then clarity": lexicographic(("coverage", "clarity")),
    **{
        f"{'+'.join(ev)} {scale}": summed(ev, scale)
        for ev in (
            ("coverage", "synthesis"),
            ("coverage", "clarity"),
            ("coverage", "clarity", "synthesis"),
            ("coverage", "support", "synthesis"),
            ("coverage", "clarity", "support", "synthesis"),
        )
        for scale in ("log+shares", "relative")
    },
}

READINGS = ("support", "alignment", "completeness", "clarity", "synthesis")


def _readings(e: TurnEvidence) -> dict[str, float | None]:
    return {
        "support": e.citation_support,
        "alignment": e.intent_alignment,
        "completeness": (e.query_coverage + e.source_count) / 2,
        "clarity": e.clarity,
        "synthesis": e.synthesis,
        "source_count": e.source_count,
    }


def rating(readings: Sequence[str]) -> Callable[[TurnEvidence], int]:
    """The G-Eval twin's 1-10 rating from the mean of ``readings`` (a reading the log
    lacks left out), times ``1 - reformulation``, rounded."""

    def rate(e: TurnEvidence) -> int:
        found = _readings(e)
        values = [v for n in readings if (v := found[n]) is not None]
        quality = sum(values) / len(values) if values else 0.0
        return max(1, min(10, round(1 + 9 * quality * e.not_reasked)))

    return rate


SATISFACTION: dict[str, Callable[[TurnEvidence], int]] = {
    "source_count": rating(("source_count",)),
    "all five (shipped)": rating(READINGS),
    **{f"without {r}": rating(tuple(x for x in READINGS if x != r)) for r in READINGS},
    **{f"{r} alone": rating((r,)) for r in READINGS},
    "completeness+synthesis": rating(("completeness", "synthesis")),
}


def dimensional(
    dims: Sequence[str], design: str, only: str | None = None
) -> Callable[[TurnEvidence], int]:
    """The URS / GAH twin's 1-10 overall: the weighted mean of its dimensions' readings
    (``design``'s emphasis), or one dimension's reading (``only``)."""

    def rate(e: TurnEvidence) -> int:
        readings = dimension_readings(e, tuple(dims))
        value = readings[only] if only else weighted_overall(readings, tuple(dims), design)
        return max(1, min(10, round(1 + 9 * value)))

    return rate


def dimensional_designs(
    dims: Sequence[str], design: str
) -> dict[str, Callable[[TurnEvidence], int]]:
    """The shipped overall, the plain mean of the dimensions, each dimension alone, and the
    ingredient (source breadth)."""
    return {
        "source_count": rating(("source_count",)),
        "weighted mean (shipped)": dimensional(dims, design),
        "plain mean": dimensional(dims, "plain"),
        **{f"{d} alone": dimensional(dims, design, only=d) for d in dims},
    }


def _load(folder: Path, tmp: Path) -> tuple[dict, dict, Gold, dict]:
    converted = tmp / "crowdrag"
    convert_crowdrag(folder, converted)
    gold = _gold_pairs(converted / "preferences.jsonl", "quality_overall")
    pair_evidence: dict[tuple[str, str], AnswerEvidence] = {}
    turn: dict[tuple[str, str], TurnEvidence] = {}
    sessions: dict[tuple[str, str], Any] = {}
    for path in sorted((converted / "systems").glob("*.jsonl")):
        for session in iter_sessions(path):
            pair_evidence[(session.session_id, path.stem)] = answer_evidence(session.turns[0])
            turn[(session.session_id, path.stem)] = turn_evidence(session, session.turns[0])
            sessions[(session.session_id, path.stem)] = session
    return pair_evidence, turn, gold, sessions


def pair_hits(
    verdict: Callable[[str, str, str], float], gold: Gold, ties: float | None
) -> dict[Hashable, list[float | None]]:
    """Per topic, one hit per gold pair: 1 agreeing, 0 not, ``ties`` on a tie."""
    out: dict[Hashable, list[float | None]] = {}
    for (topic, a, b), winner in gold.items():
        s = verdict(topic, a, b)
        hit = ties if s == 0 else float((a if s > 0 else b) == winner)
        out.setdefault(topic, []).append(hit)
    return out


def _tau(
    verdict: Callable[[str, str, str], float],
    topics: Sequence[str],
    systems: Sequence[str],
    gold: Gold,
) -> float:
    """Kendall tau-b of the systems' win rates (every pair of every topic, ties half)
    against people's win rates on the gold pairs of all topics."""
    wins: Counter[str] = Counter()
    for topic in topics:
        for a, b in itertools.combinations(systems, 2):
            s = verdict(topic, a, b)
            wins[a] += 1.0 if s > 0 else 0.5 if s == 0 else 0.0
            wins[b] += 1.0 if s < 0 else 0.5 if s == 0 else 0.0
    people: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for (_, a, b), winner in gold.items():
        seen[a] += 1
        seen[b] += 1
        people[winner] += 1
    return float(
        kendalltau([wins[s] for s in systems], [people[s] / seen[s] for s in systems]).statistic
    )


def _print(title: str, result: CrossValidation, in_sample: dict[str, float]) -> None:
    lo, hi = result.ci95
    ilo, ihi = result.ingredient_ci95
    print(f"\n{title}")
    print("  in sample (all 20 topics; not the figure to trust):")
    for name, value in sorted(in_sample.items(), key=lambda item: -item[1]):
        print(f"    {name:<48} {value:.3f}")
    print(
        f"  choosing by cross-validation, out of sample: {result.figure:.3f} [{lo:.3f}, {hi:.3f}] "
        f"(per repeat {', '.join(f'{v:.3f}' for v in result.per_repeat)})"
    )
    print(
        f"  the ingredient ({result.ingredient}) on the same topics: "
        f"{result.ingredient_figure:.3f} [{ilo:.3f}, {ihi:.3f}]"
    )
    print(
        "  chosen on the training folds: " + ", ".join(f"{n} {c}" for n, c in result.chosen.items())
    )
    verdict = "beats" if result.beats_ingredient else "does not beat"
    print(f"  choosing {verdict} the ingredient out of sample: ship {result.adopted!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=CROWDRAG, help="the CrowdRAG folder")
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="twin-cv-") as tmp:
        evidence, turns, gold, sessions = _load(args.data, Path(tmp))
    systems = sorted({key[1] for key in evidence})
    topics = sorted({key[0] for key in gold})
    print(
        f"{len(topics)} topics, {len(gold)} decided gold pairs; {args.repeats} x "
        f"{args.folds}-fold over topics, seed {args.seed}"
    )

    def pair_verdict(score: PairScore) -> Callable[[str, str, str], float]:
        return lambda t, a, b: score(evidence[(t, a)], evidence[(t, b)])

    hits = {name: pair_hits(pair_verdict(s), gold, 0.5) for name, s in PAIRWISE.items()}
    result = cross_validate(
        hits, topics, "coverage", k=args.folds, repeats=args.repeats, seed=args.seed
    )
    in_sample = {n: float(np.mean([h for t in topics for h in hits[n][t]])) for n in hits}
    _print("pairwise twin (agreement, ties half)", result, in_sample)
    order = ["coverage", *(n for n in hits if n != "coverage")]
    taus = []
    for partition in result.folds:
        # each fold's topics judged by the design chosen on the others; one ranking a repeat
        chosen = {
            t: best_design(hits, training, order) for training, test in partition for t in test
        }

        def out_of_sample(t: str, a: str, b: str, chosen: dict = chosen) -> float:
            return PAIRWISE[chosen[t]](evidence[(t, a)], evidence[(t, b)])

        taus.append(_tau(out_of_sample, topics, systems, gold))
    ingredient_tau = _tau(pair_verdict(PAIRWISE["coverage"]), topics, systems, gold)
    adopted_tau = _tau(pair_verdict(PAIRWISE[result.adopted]), topics, systems, gold)
    print(
        f"  Kendall tau (six systems vs people's win rates), out of sample per repeat: "
        f"{', '.join(f'{v:.3f}' for v in taus)} (mean {np.mean(taus):.3f}); the ingredient "
        f"{ingredient_tau:.3f}; the shipped design on all topics {adopted_tau:.3f}"
    )

    def sat_verdict(rate: Callable[[TurnEvidence], int]) -> Callable[[str, str, str], float]:
        return lambda t, a, b: float(rate(turns[(t, a)]) - rate(turns[(t, b)]))

    hits = {n: pair_hits(sat_verdict(r), gold, None) for n, r in SATISFACTION.items()}
    result = cross_validate(
        hits, topics, "source_count", k=args.folds, repeats=args.repeats, seed=args.seed
    )
    in_sample = {
        n: float(np.mean([h for t in topics for h in hits[n][t] if h is not None])) for n in hits
    }
    _print("satisfaction.geval twin (agreement on the pairs its rating decides)", result, in_sample)
    urs_dims = dimensions_for(next(iter(sessions.values())).task_type)[0]
    for name, dims, design in (
        ("satisfaction.urs", urs_dims, "urs"),
        ("satisfaction.gah", GAH_DIMENSIONS, "gah"),
    ):
        designs = dimensional_designs(dims, design)
        hits = {n: pair_hits(sat_verdict(r), gold, None) for n, r in designs.items()}
        result = cross_validate(
            hits, topics, "source_count", k=args.folds, repeats=args.repeats, seed=args.seed
        )
        in_sample = {
            n: float(np.mean([h for t in topics for h in hits[n][t] if h is not None]))
            for n in hits
        }
        _print(f"{name} twin's overall ({', '.join(dims)})", result, in_sample)
        print("  (not adopted: the URGE goal of its overall with sdcg_urge, see the docstring)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
