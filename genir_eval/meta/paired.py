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

__all__ = [
    "cluster_sums",
    "cluster_bootstrap",
    "cluster_randomization_test",
    "nested_bootstrap",
    "within_scatter",
]

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


def _padded(repeats: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Ragged repeats as a NaN-padded matrix (a row per unit) and each row's count."""
    width = max(len(r) for r in repeats)
    table = np.full((len(repeats), width), np.nan)
    for row, values in enumerate(repeats):
        table[row, : len(values)] = values
    return table, np.array([len(r) for r in repeats], dtype=np.int64)


def _resampled_means(
    table: np.ndarray, counts: np.ndarray, units: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Each of ``units``' mean over its repeats drawn again with replacement (as many as it
    has): one ``rng.random`` draw per repeat slot, the slot past a unit's count unused."""
    n = counts[units]
    draws = np.floor(rng.random((len(units), table.shape[1])) * n[:, None]).astype(np.int64)
    values = table[units[:, None], draws]
    used = np.arange(table.shape[1])[None, :] < n[:, None]
    return np.where(used, values, 0.0).sum(axis=1) / n


def nested_bootstrap(
    repeats_a: Sequence[Sequence[float]],
    repeats_b: Sequence[Sequence[float]],
    clusters: Sequence[Hashable],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """95% percentile interval of the mean change B - A when each unit (a session, or a
    turn of session ``clusters[i]``) was judged several times in each run: the two-stage
    bootstrap (Davison & Hinkley 1997, section 3.8). Each resample draws the clusters with
    replacement, then, within every cluster drawn, each unit's repeats again with
    replacement, A's and B's independently (as many as the unit has in that run); a unit's
    change is the mean of its drawn B repeats minus the mean of its drawn A repeats, and the
    resample's figure the mean over its units. A unit with one judgment in a run is that
    judgment every time. Resampling both stages counts the judge's noise once more than the
    session resample alone does (the spread between sessions' means already holds it): the
    interval errs wide, on the side of calling a change noise.

    ``repeats_a[i]`` and ``repeats_b[i]`` are unit ``i``'s judgments (none missing); draws
    of ``np.random.default_rng(seed)``, per resample in this order: the clusters
    (``integers``), A's repeats, B's repeats (``random``, one per unit and repeat slot).
    ``None`` with fewer than two clusters."""
    index: dict[Hashable, int] = {}
    for cluster in clusters:
        index.setdefault(cluster, len(index))
    if len(index) < 2 or n_resamples < 1:
        return None
    group = np.array([index[c] for c in clusters], dtype=np.int64)
    order = np.argsort(group, kind="stable")
    lengths = np.bincount(group, minlength=len(index))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    table_a, counts_a = _padded(repeats_a)
    table_b, counts_b = _padded(repeats_b)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for r in range(n_resamples):
        drawn = rng.integers(0, len(index), size=len(index))
        sizes = lengths[drawn]
        offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        units = order[np.repeat(starts[drawn], sizes) + offsets]
        a = _resampled_means(table_a, counts_a, units, rng)
        b = _resampled_means(table_b, counts_b, units, rng)
        means[r] = float(np.mean(b - a))
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def within_scatter(repeats: Sequence[Sequence[float]]) -> tuple[float, float] | None:
    """The judge's own scatter of a unit's score: ``(sd, k)``, the within-unit standard
    deviation pooled over the units judged at least twice (each unit's variance around its
    own mean, weighted by its degrees of freedom, as one-way ANOVA's within mean square),
    and ``k`` the harmonic mean of their numbers of repeats; ``None`` without such a unit."""
    squares, freedom, inverse = 0.0, 0, 0.0
    several = [np.asarray(r, dtype=float) for r in repeats if len(r) >= 2]
    for values in several:
        squares += float(np.sum((values - values.mean()) ** 2))
        freedom += len(values) - 1
        inverse += 1.0 / len(values)
    if not several:
        return None
    return float(np.sqrt(squares / freedom)), len(several) / inverse
