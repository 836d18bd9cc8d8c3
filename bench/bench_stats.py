"""Benchmark: CPU time of the meta-evaluation's bootstrap correlations.

``correlations(x, y, n_boot=1000)`` (Pearson, Spearman, Kendall tau-b with seeded bootstrap
intervals) for a score against a 1-5 satisfaction scale, at several sample sizes: twenty
metrics at the URGE sample's 12 sessions (what a run's summary computes), then one metric at
growing n, where the time should grow about as n log n. CPU time, so a busy machine does not
inflate it.

The first call imports ``scipy.stats`` (loaded on first use so that the CLI starts fast),
which costs over a second of CPU once per process; it is timed apart, and the twenty
metrics are timed after it, as a run that computes any correlation pays it once.

    python bench/bench_stats.py [--sizes 1000 10000 100000] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from genir_eval.meta.stats import correlations


def cpu_seconds(x: np.ndarray, y: np.ndarray, n_boot: int) -> float:
    start = time.process_time()
    correlations(x, y, n_boot=n_boot, seed=0)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(1)

    y12 = rng.integers(1, 6, size=12).astype(float)
    metrics = [rng.normal(size=12) for _ in range(20)]
    start = time.process_time()
    correlations(metrics[0], y12, n_boot=args.n_boot, seed=0)
    print(
        f"first call (imports scipy.stats, once per process): "
        f"{time.process_time() - start:.3f} s CPU"
    )
    start = time.process_time()
    for x in metrics:
        correlations(x, y12, n_boot=args.n_boot, seed=0)
    print(f"20 metrics x n=12, n_boot={args.n_boot}: {time.process_time() - start:.3f} s CPU")

    previous: tuple[int, float] | None = None
    for n in args.sizes:
        y = rng.integers(1, 6, size=n).astype(float)
        x = y + rng.normal(size=n)
        seconds = cpu_seconds(x, y, args.n_boot)
        line = f"n={n:>9,}  n_boot={args.n_boot}: {seconds:8.2f} s CPU"
        if previous is not None:
            ratio = seconds / previous[1] if previous[1] > 0 else float("nan")
            line += f"  (x{ratio:.1f} for x{n / previous[0]:.0f} n)"
        print(line)
        previous = (n, seconds)


if __name__ == "__main__":
    main()
