"""Benchmark: how often the compare gate cries wolf on identical logs, and how often it
catches a real drop, under a noisy judge (issue 48).

Two runs judge the same logs: each session's true quality on each of five scores is drawn
once (standard normal, independent across scores), and each run's judge adds its own
Gaussian noise of sd ``--noise`` to every score (a seeded noisy judge). The gate reads
nothing but these scores (``compare_scores`` over the two ``{session: score}`` maps, then
the gate), so judging at the score level is what a noisy judge on the fake server would
hand it, at a fraction of the cost: 200 seeds x 2 runs x 200 sessions x 5 scores would be
400,000 calls.

For each seed: two runs of identical logs (only the judge's noise differs): a false alarm
when the gate fails; and the same with a planted drop of ``--drop`` sd (of a score: its
sd is sqrt(1 + noise**2)) in the first score of run B: caught when the gate fails on that
score. Rules side by side:

- old: each score's randomisation p < 0.05 on its own (no correction), as before issue 48;
- holm (the new default), bh: the p-values adjusted across the five scores;
- margin: non-inferiority, ``--margin`` (each of ``--margins``, in sd of a score) for every
  score.

    python bench/bench_gate.py [--seeds 200] [--sessions 200] [--noise 0.5 1 2] [--drop 0.3]
                               [--margins 0.2 0.4]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from genir_eval.runner.compare import Comparison, compare_scores, gate_all

METRICS = 5


def _runs(rng: np.random.Generator, sessions: int, noise: float, shift: float) -> list[Comparison]:
    """The five scores' comparisons of two runs judging the same logs; run B's first score
    ``shift`` lower."""
    truth = rng.normal(size=(METRICS, sessions))
    a = truth + rng.normal(scale=noise, size=truth.shape)
    b = truth + rng.normal(scale=noise, size=truth.shape)
    b[0] -= shift
    keys = [f"s{i:03d}" for i in range(sessions)]
    return [
        compare_scores(
            dict(zip(keys, a[m].tolist(), strict=True)),
            dict(zip(keys, b[m].tolist(), strict=True)),
            metric=f"m{m + 1}",
            n_resamples=4000,
            seed=int(rng.integers(2**31)),
        )
        for m in range(METRICS)
    ]


def _verdicts(
    comparisons: list[Comparison], sd: float, margins: list[float]
) -> dict[str, list[bool]]:
    """Per rule, which scores failed."""
    names = [c.metric for c in comparisons]
    rules = {
        "old": gate_all(comparisons, correction="none"),
        "holm": gate_all(comparisons, correction="holm"),
        "bh": gate_all(comparisons, correction="bh"),
    }
    for margin in margins:
        rules[_margin_rule(margin)] = gate_all(
            comparisons, margins=dict.fromkeys(names, margin * sd)
        )
    return {rule: [not r.passed for r in results] for rule, results in rules.items()}


def _margin_rule(margin: float) -> str:
    return f"margin {margin:g} sd"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--noise", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--drop", type=float, default=0.3, help="in sd of a score")
    parser.add_argument(
        "--margins", type=float, nargs="+", default=[0.2, 0.4], help="in sd of a score"
    )
    args = parser.parse_args()
    rules = ("old", "holm", "bh", *map(_margin_rule, args.margins))
    print(
        f"{args.seeds} seeds, {args.sessions} sessions, {METRICS} scores; a drop of "
        f"{args.drop} sd in one score"
    )
    print(
        "| judge noise sd | score sd | rule | identical logs: passed | planted drop: caught "
        "| planted drop: another score failed |"
    )
    print("| ---: | ---: | --- | ---: | ---: | ---: |")
    started = time.process_time()
    for noise in args.noise:
        sd = float(np.sqrt(1 + noise**2))
        passed = dict.fromkeys(rules, 0)
        caught = dict.fromkeys(rules, 0)
        other = dict.fromkeys(rules, 0)
        for seed in range(args.seeds):
            rng = np.random.default_rng([seed, int(noise * 1000)])
            same = _verdicts(_runs(rng, args.sessions, noise, 0.0), sd, args.margins)
            drop = _verdicts(_runs(rng, args.sessions, noise, args.drop * sd), sd, args.margins)
            for rule in rules:
                passed[rule] += not any(same[rule])
                caught[rule] += drop[rule][0]
                other[rule] += any(drop[rule][1:])
        for rule in rules:
            print(
                f"| {noise:g} | {sd:.3f} | {rule} | {passed[rule] / args.seeds:.1%} | "
                f"{caught[rule] / args.seeds:.1%} | {other[rule] / args.seeds:.1%} |",
                flush=True,
            )
    print(f"{time.process_time() - started:.0f} s CPU")


if __name__ == "__main__":
    main()
