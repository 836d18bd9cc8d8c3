"""Paired differences grouped in clusters: the bootstrap and the sign-flip test that draw
whole clusters.

Turns of one session are judged in one context and rated by one user, so they are not
independent: a gate over turns resamples sessions, not turns (the cluster bootstrap; Field
and Welsh 2007), and flips the sign of a whole session's differences at once (the paired
randomisation test with the session as its unit). Twelve turns of one session are one
unit: nothing can be said about a population of sessions from them.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["cluster_sums", "cluster_bootstrap", "cluster_randomization_test"]

#: 2**14 sign patterns of clusters: enumerate instead of sampling
EXACT_MAX_CLUSTERS = 14


def cluster_sums(
    deltas: Sequence[float], clusters: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    """The sum and the count of ``deltas`` per cluster, clusters in first-seen order."""
    index: dict[Hashable, int] = {}
    for cluster in clusters:
        index.setdefault(cluster, len(index))
    group = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters))
    values = np.asarray(deltas, dtype=float)
    sums = np.bincount(group, weights=values, minlength=len(index))
    counts = np.bincount(group, minlength=len(index)).astype(float)
    return sums, counts


def cluster_bootstrap(
    deltas: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """95% percentile interval of the mean delta over resampled clusters (each resample's
    mean the sum of its clusters' deltas over their count); ``None`` with fewer than two
    clusters."""
    sums, counts = cluster_sums(deltas, clusters)
    if len(sums) < 2 or n_resamples < 1:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // len(sums))
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        idx = rng.integers(0, len(sums), size=(stop - start, len(sums)))
        means[start:stop] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def cluster_randomization_test(
    deltas: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float | None, bool]:
    """Two-sided sign-flip test of a zero mean delta, flipping each cluster's deltas
    together. ``(p, exact)``: every pattern with at most :data:`EXACT_MAX_CLUSTERS`
    clusters, else ``n_resamples`` seeded draws with the ``(k + 1) / (R + 1)`` estimate
    (Phipson & Smyth 2010). One cluster: p = 1 (its two patterns are mirror images)."""
    if not len(deltas):
        return None, True
    sums, _ = cluster_sums(deltas, clusters)
    n = len(deltas)
    observed = abs(sums.sum() / n)
    tolerance = 1e-12 * max(1.0, observed)
    k = len(sums)
    if k <= EXACT_MAX_CLUSTERS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=k)))
        means = np.abs(signs @ sums / n)
        return float(np.mean(means >= observed - tolerance)), True
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, 2_000_000 // k)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        signs = rng.choice((1.0, -1.0), size=(size, k))
        hits += int(np.sum(np.abs(signs @ sums / n) >= observed - tolerance))
    return (hits + 1) / (n_resamples + 1), False
