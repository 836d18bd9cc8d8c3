"""Statistics for meta-evaluation: correlations with bootstrap intervals, agreement, overlap.

Every function takes paired sequences and drops a pair when either side is ``None`` (or NaN);
anything undefined comes back as ``None``, never NaN, so results serialise to JSON as they
are.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

__all__ = [
    "correlations",
    "cohen_kappa",
    "binarize",
    "mae",
    "confusion_matrix",
    "pairwise_auc",
    "binary_agreement",
    "precision_recall_f1",
    "PRF",
    "rbo",
    "kendall_tau",
]

Number = float | int
_COEFFICIENTS = ("pearson", "spearman", "kendall")
# Bootstrap resamples are processed in chunks of about this many drawn values.
_CHUNK_VALUES = 1_000_000
# Kendall's S is summed level by level when one side has at most this many distinct values.
_MAX_LEVELS = 64


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _pairs(x: Sequence[Number | None], y: Sequence[Number | None]) -> tuple[list, list]:
    if len(x) != len(y):
        raise ValueError(f"paired inputs differ in length: {len(x)} and {len(y)}")
    kept = [(a, b) for a, b in zip(x, y, strict=True) if not _is_missing(a) and not _is_missing(b)]
    return [a for a, _ in kept], [b for _, b in kept]


def _numeric_pairs(
    x: Sequence[Number | None] | np.ndarray, y: Sequence[Number | None] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of numbers of ``x`` and ``y`` as float arrays, dropping a pair where either
    side is ``None`` or NaN (vectorised: score columns of a large run are numpy arrays)."""
    if len(x) != len(y):
        raise ValueError(f"paired inputs differ in length: {len(x)} and {len(y)}")
    xa = np.asarray(x, dtype=float)  # None becomes NaN
    ya = np.asarray(y, dtype=float)
    keep = ~(np.isnan(xa) | np.isnan(ya))
    if keep.all():
        return xa, ya
    return xa[keep], ya[keep]


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


# --- correlations -----------------------------------------------------------------------


def correlations(
    x: Sequence[Number | None] | np.ndarray,
    y: Sequence[Number | None] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Any]:
    """Pearson, Spearman and Kendall tau-b of paired ``x`` and ``y``, with bootstrap intervals.

    Returns ``{"pearson", "spearman", "kendall", "n", "ci95"}``: the three coefficients
    (scipy's ``pearsonr``, ``spearmanr`` and ``kendalltau(variant="b")``), ``n`` the number
    of pairs used (pairs with a ``None`` or NaN are dropped), and ``ci95`` mapping each
    coefficient to ``[lo, hi]``, the percentile interval at level ``ci`` (0.95 unless asked
    otherwise) of ``n_boot`` bootstrap resamples of the pairs drawn with
    ``numpy.random.default_rng(seed)``, so a seed reproduces it and every call with the same
    seed and ``n`` resamples the same pairs. A resample where a coefficient is undefined
    (one side constant) is left out of its interval.

    With fewer than 3 pairs or a constant side every coefficient and interval is ``None``,
    without a warning (scipy is not called); a nearly constant side is computed as is, and
    scipy's ``NearConstantInputWarning`` is silenced for that call only, so a near-tie in
    one score neither stops a run whose warnings are errors nor floods its log. With
    ``n_boot=0`` the intervals are ``None``. ``x`` and ``y`` may be numpy arrays (NaN
    for missing). The bootstrap is vectorised and O(n log n) in time, linear in memory
    (see :func:`_bootstrap`): no n x n matrix, so a run of a million pairs is measured.
    """
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    xa, ya = _numeric_pairs(x, y)
    n = len(xa)
    out: dict[str, Any] = {name: None for name in _COEFFICIENTS}
    out["n"] = n
    out["ci95"] = {name: None for name in _COEFFICIENTS}
    if n < 3 or np.ptp(xa) == 0.0 or np.ptp(ya) == 0.0:
        return out
    # scipy.stats takes half a second to import: load it on first use, not with the CLI.
    from scipy import stats as scipy_stats

    with warnings.catch_warnings():
        # scipy warns when a side is nearly constant (relative spread near rounding error),
        # as a judge giving almost every session the same score does: the coefficient is
        # still the correct one for the values given, so it is reported and the run goes on.
        warnings.simplefilter("ignore", scipy_stats.NearConstantInputWarning)
        pearson = scipy_stats.pearsonr(xa, ya).statistic
    out["pearson"] = _finite_or_none(pearson)
    out["spearman"] = _finite_or_none(scipy_stats.spearmanr(xa, ya).statistic)
    out["kendall"] = _finite_or_none(scipy_stats.kendalltau(xa, ya, variant="b").statistic)
    if n_boot > 0:
        boot = _bootstrap(xa, ya, n_boot, np.random.default_rng(seed))
        tail = 100.0 * (1.0 - ci) / 2.0
        for name in _COEFFICIENTS:
            values = boot[name][np.isfinite(boot[name])]
            if values.size:
                lo, hi = np.percentile(values, [tail, 100.0 - tail])
                out["ci95"][name] = [float(lo), float(hi)]
    return out


class _Groups:
    """Tie groups of a vector: sort order, group starts (in sorted order), group of each value."""

    def __init__(self, values: np.ndarray) -> None:
        self.order = np.argsort(values, kind="stable")
        ordered = values[self.order]
        is_start = np.r_[True, ordered[1:] != ordered[:-1]]
        self.starts = np.flatnonzero(is_start)
        self.of = np.empty(len(values), dtype=np.intp)
        self.of[self.order] = np.cumsum(is_start) - 1
        self.count = len(self.starts)

    def sums(self, weights: np.ndarray) -> np.ndarray:
        """Per-group sums of ``weights`` (resamples x values) -> resamples x groups."""
        ordered = weights[:, self.order]
        if self.count == weights.shape[1]:  # no ties: each value is its own group
            return ordered
        return np.add.reduceat(ordered, self.starts, axis=1)


def _average_ranks(group_counts: np.ndarray) -> np.ndarray:
    """Average rank of each tie group in each resample (repeated draws tie with each other)."""
    return np.cumsum(group_counts, axis=1) - (group_counts - 1.0) / 2.0


def _kendall_s_by_levels(dense: np.ndarray) -> np.ndarray:
    """Kendall's S of each resample from its cell counts ``dense`` (resamples x levels of
    the side with few values x groups of the other side, both in ascending order).

    For each level a, every drawn pair (j at a level above a, l at a) adds
    sign(other_j - other_l): the count of level-a draws before j's group in the other
    side's order minus the count after it, obtained for all resamples at once by a
    cumulative sum. Time and memory are linear in the number of cells.
    """
    size, n_levels, _ = dense.shape
    above = dense.sum(axis=1)
    s = np.zeros(size, dtype=np.float64)
    for a in range(n_levels - 1):
        at_a = dense[:, a, :]
        # below - beyond = (running - at_a) - (total - running)
        diff = np.cumsum(at_a, axis=1)
        total = diff[:, -1:].copy()
        diff *= 2
        diff -= at_a
        diff -= total
        above -= at_a
        s += np.einsum("bg,bg->b", diff, above)
    return s


def _kendall_per_resample(x: np.ndarray, y: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each resample (rows of ``draws``) by scipy's O(n log n) count."""
    from scipy import stats as scipy_stats

    out = np.empty(draws.shape[0])
    for row, drawn in enumerate(draws):
        xs, ys = x[drawn], y[drawn]
        undefined = xs.min() == xs.max() or ys.min() == ys.max()
        out[row] = np.nan if undefined else scipy_stats.kendalltau(xs, ys, variant="b").statistic
    return out


def _ratio(num: np.ndarray, den: np.ndarray, undefined: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / np.sqrt(den)
    r[undefined | ~(den > 0)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _draws(rng: np.random.Generator, n: int, n_boot: int, chunk: int):  # type: ignore[no-untyped-def]
    """``n_boot`` resamples of ``n`` pair indices, ``chunk`` at a time: one stream of
    ``rng.integers``, so the draws do not depend on the chunking."""
    for start in range(0, n_boot, chunk):
        yield rng.integers(0, n, size=(min(chunk, n_boot - start), n))


def _bootstrap(x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator) -> dict:
    """The three coefficients of ``n_boot`` resamples of the pairs.

    Resamples are processed in chunks of about :data:`_CHUNK_VALUES` drawn values, so
    memory is flat in ``n_boot`` and linear in ``n``; no n x n matrix is ever built. When
    one side has at most :data:`_MAX_LEVELS` distinct values (a score against a 1-5 or 0-3
    scale) every coefficient is computed from the resample's counts of the (level, value)
    cells; otherwise Pearson and Spearman from the counts of the pairs and Kendall by
    scipy's merge sort, resample by resample (O(n log n) each).
    """
    gx, gy = _Groups(x), _Groups(y)
    if min(gx.count, gy.count) <= _MAX_LEVELS:
        return _bootstrap_cells(x, y, gx, gy, n_boot, rng)
    return _bootstrap_pairs(x, y, gx, gy, n_boot, rng)


def _bootstrap_cells(
    x: np.ndarray, y: np.ndarray, gx: _Groups, gy: _Groups, n_boot: int, rng: np.random.Generator
) -> dict:
    n = len(x)
    # levels: the side with few values; other: the other side (its groups in value order)
    (lv, lg), (ov, og) = ((y, gy), (x, gx)) if gy.count <= gx.count else ((x, gx), (y, gy))
    n_cells = lg.count * og.count
    cell_of = lg.of * og.count + og.of
    # values of each group, centred once so that sums of products do not cancel
    level_values = lv[lg.order][lg.starts] - lv.mean()
    other_values = ov[og.order][og.starts] - ov.mean()
    pairs_total = n * (n - 1) / 2.0
    mid_rank = (n + 1) / 2.0
    chunk = max(1, _CHUNK_VALUES // max(n, n_cells))
    parts: dict[str, list[np.ndarray]] = {name: [] for name in _COEFFICIENTS}
    for draws in _draws(rng, n, n_boot, chunk):
        size = draws.shape[0]
        flat = (cell_of[draws] + n_cells * np.arange(size)[:, None]).ravel()
        dense = np.bincount(flat, minlength=size * n_cells).astype(np.float64)
        dense = dense.reshape(size, lg.count, og.count)
        del flat, draws
        c_level, c_other = dense.sum(axis=2), dense.sum(axis=1)
        undefined = ((c_level > 0).sum(axis=1) < 2) | ((c_other > 0).sum(axis=1) < 2)

        s_l, s_o = c_level @ level_values / n, c_other @ other_values / n
        s_ll, s_oo = c_level @ level_values**2 / n, c_other @ other_values**2 / n
        s_lo = np.einsum("bag,g->ba", dense, other_values) @ level_values / n
        parts["pearson"].append(
            _ratio(s_lo - s_l * s_o, (s_ll - s_l * s_l) * (s_oo - s_o * s_o), undefined)
        )

        # Average ranks have mean (n + 1) / 2 in every resample, ties or not.
        r_level, r_other = _average_ranks(c_level), _average_ranks(c_other)
        var_l = np.einsum("bg,bg->b", c_level, (r_level - mid_rank) ** 2)
        var_o = np.einsum("bg,bg->b", c_other, (r_other - mid_rank) ** 2)
        cross = np.einsum("ba,ba->b", np.einsum("bag,bg->ba", dense, r_other), r_level)
        parts["spearman"].append(_ratio(cross - n * mid_rank**2, var_l * var_o, undefined))

        ties_l = (c_level * (c_level - 1.0) / 2.0).sum(axis=1)
        ties_o = (c_other * (c_other - 1.0) / 2.0).sum(axis=1)
        s = _kendall_s_by_levels(dense)
        parts["kendall"].append(
            _ratio(s, (pairs_total - ties_l) * (pairs_total - ties_o), undefined)
        )
    return {name: np.concatenate(chunks) for name, chunks in parts.items()}


def _bootstrap_pairs(
    x: np.ndarray, y: np.ndarray, gx: _Groups, gy: _Groups, n_boot: int, rng: np.random.Generator
) -> dict:
    n = len(x)
    chunk = max(1, _CHUNK_VALUES // n)
    mid_rank = (n + 1) / 2.0
    xc, yc = x - x.mean(), y - y.mean()
    moments = np.stack([xc, yc, xc * xc, yc * yc, xc * yc], axis=1)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in _COEFFICIENTS}
    for draws in _draws(rng, n, n_boot, chunk):
        size = draws.shape[0]
        flat = (draws + n * np.arange(size)[:, None]).ravel()
        counts = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
        del flat
        cx, cy = gx.sums(counts), gy.sums(counts)
        undefined = ((cx > 0).sum(axis=1) < 2) | ((cy > 0).sum(axis=1) < 2)

        sx, sy, sxx, syy, sxy = (counts @ moments).T / n
        parts["pearson"].append(_ratio(sxy - sx * sy, (sxx - sx * sx) * (syy - sy * sy), undefined))

        rx, ry = _average_ranks(cx), _average_ranks(cy)
        var_x = np.einsum("bg,bg->b", cx, (rx - mid_rank) ** 2)
        var_y = np.einsum("bg,bg->b", cy, (ry - mid_rank) ** 2)
        cross = np.einsum("bi,bi->b", counts * rx[:, gx.of], ry[:, gy.of]) - n * mid_rank**2
        parts["spearman"].append(_ratio(cross, var_x * var_y, undefined))
        parts["kendall"].append(_kendall_per_resample(x, y, draws))
    return {name: np.concatenate(chunks) for name, chunks in parts.items()}


# --- agreement on labels ----------------------------------------------------------------


def cohen_kappa(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    labels: Sequence[Hashable] | None = None,
) -> float | None:
    """Cohen's kappa between two raters (Cohen 1960; weighted, Cohen 1968).

    ``labels`` fixes the categories and, for weighted kappa, their order (default: the
    sorted labels seen). Disagreement weights are ``|i - j|`` (linear) or ``(i - j)^2``
    (quadratic) on label positions, ``1`` off the diagonal when unweighted; the same as
    scikit-learn's ``cohen_kappa_score``. Pairs with a ``None`` are dropped; no pair, or no
    expected disagreement (both raters constant on one label), gives ``None``.
    """
    xs, ys = _pairs(a, b)  # type: ignore[arg-type]
    if not xs:
        return None
    cats = list(labels) if labels is not None else sorted(set(xs) | set(ys))  # type: ignore[type-var]
    index = {label: i for i, label in enumerate(cats)}
    unknown = {v for v in xs + ys if v not in index}
    if unknown:
        raise ValueError(f"labels {sorted(map(str, unknown))} are not among {cats}")
    k = len(cats)
    observed = np.zeros((k, k))
    for u, v in zip(xs, ys, strict=True):
        observed[index[u], index[v]] += 1.0
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    disagreement_expected = float((w * expected).sum())
    if disagreement_expected == 0.0:
        return None
    return 1.0 - float((w * observed).sum()) / disagreement_expected


def binarize(labels: Sequence[Number | None], threshold: Number = 2) -> list[int | None]:
    """1 for a label ``>= threshold`` (useful at URGE's 0-3 scale's upper half), else 0;
    ``None`` stays ``None``."""
    return [None if _is_missing(v) else int(v >= threshold) for v in labels]  # type: ignore[operator]


def mae(pred: Sequence[Number | None], gold: Sequence[Number | None]) -> float | None:
    """Mean absolute error over the pairs without ``None``; ``None`` when there is none."""
    ps, gs = _pairs(pred, gold)
    if not ps:
        return None
    return sum(abs(float(p) - float(g)) for p, g in zip(ps, gs, strict=True)) / len(ps)


def confusion_matrix(
    pred: Sequence[Hashable | None],
    gold: Sequence[Hashable | None],
    labels: Sequence[Hashable] = (0, 1, 2, 3),
) -> list[list[int]]:
    """Counts ``m[i][j]`` of items with gold label ``labels[i]`` predicted ``labels[j]``.

    Rows are gold, columns predicted, both in the order of ``labels``. Pairs with a ``None``
    are dropped; a label outside ``labels`` raises ``ValueError``.
    """
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    ps, gs = _pairs(pred, gold)  # type: ignore[arg-type]
    for p, g in zip(ps, gs, strict=True):
        if p not in index or g not in index:
            raise ValueError(f"label {p if p not in index else g!r} is not among {list(labels)}")
        matrix[index[g]][index[p]] += 1
    return matrix


def pairwise_auc(pred: Sequence[Number | None], gold: Sequence[Number | None]) -> float | None:
    """Share of the pairs with different gold labels that ``pred`` orders the same way.

    Over all pairs ``(i, j)`` with ``gold_i > gold_j``: 1 when ``pred_i > pred_j``, 0.5 when
    ``pred_i == pred_j``, 0 otherwise (the AUC when gold is binary). ``None`` when no pair
    has different gold labels; pairs with a ``None`` are dropped first.
    """
    ps, gs = _pairs(pred, gold)
    p = np.asarray(ps, dtype=float)
    g = np.asarray(gs, dtype=float)
    concordant = 0.0
    total = 0.0
    for level in np.unique(g):
        at_level = np.sort(p[g == level])
        higher = p[g > level]
        if not higher.size:
            continue
        below = np.searchsorted(at_level, higher, side="left")
        not_above = np.searchsorted(at_level, higher, side="right")
        concordant += float(below.sum() + 0.5 * (not_above - below).sum())
        total += float(at_level.size * higher.size)
    return concordant / total if total else None


class PRF(NamedTuple):
    precision: float
    recall: float
    f1: float


def precision_recall_f1(pred: Iterable[Hashable], gold: Iterable[Hashable]) -> PRF:
    """Set precision, recall and F1 of ``pred`` against ``gold``.

    Conventions: both empty gives ``(1, 1, 1)`` (nothing to find, nothing wrongly claimed);
    exactly one empty gives ``(0, 0, 0)``; F1 is 0 when precision and recall are both 0.
    """
    p, g = set(pred), set(gold)
    if not p and not g:
        return PRF(1.0, 1.0, 1.0)
    if not p or not g:
        return PRF(0.0, 0.0, 0.0)
    hit = len(p & g)
    precision, recall = hit / len(p), hit / len(g)
    f1 = 0.0 if hit == 0 else 2 * precision * recall / (precision + recall)
    return PRF(precision, recall, f1)


# --- comparing rankings -----------------------------------------------------------------


def _check_unique(ranking: Sequence[Hashable], name: str) -> None:
    if len(set(ranking)) != len(ranking):
        raise ValueError(f"{name} lists an item twice")


def rbo(a: Sequence[Hashable], b: Sequence[Hashable], *, p: float = 0.9) -> float:
    """Rank-biased overlap of two rankings, extrapolated (RBO_ext).

    Webber, Moffat and Zobel (TOIS 2010), equation 32, which handles rankings of different
    lengths by assuming the overlap seen at the shorter one's depth goes on; it is the RBO
    Thomas et al. report. 1 for identical rankings, 0 for disjoint ones; two empty rankings
    give 1, one empty ranking 0. Items must be unique within a ranking; ``0 < p < 1``.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    _check_unique(a, "a")
    _check_unique(b, "b")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, n_long = len(short), len(long_)
    if n_long == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_short: set[Hashable] = set()
    seen_long: set[Hashable] = set()
    overlap = 0
    overlap_at: list[int] = []
    for d in range(1, n_long + 1):
        if d <= s:
            item = short[d - 1]
            overlap += item in seen_long
            seen_short.add(item)
        item = long_[d - 1]
        overlap += item in seen_short
        seen_long.add(item)
        overlap_at.append(overlap)
    x_s, x_l = overlap_at[s - 1], overlap_at[n_long - 1]
    total = sum(overlap_at[d - 1] / d * p**d for d in range(1, n_long + 1))
    total += sum(x_s * (d - s) / (s * d) * p**d for d in range(s + 1, n_long + 1))
    return (1.0 - p) / p * total + ((x_l - x_s) / n_long + x_s / s) * p**n_long


def kendall_tau(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Kendall's tau between two orderings of items (each a list, best first).

    Computed over the items both orderings contain (no ties, so tau-a = tau-b): concordant
    minus discordant pairs over all pairs. ``None`` with fewer than two common items.
    """
    _check_unique(a, "a")
    _check_unique(b, "b")
    pos_b = {item: i for i, item in enumerate(b)}
    common = [pos_b[item] for item in a if item in pos_b]
    m = len(common)
    if m < 2:
        return None
    from scipy import stats as scipy_stats

    # no ties: tau-b is tau-a; scipy counts discordant pairs by merge sort (O(m log m))
    return float(scipy_stats.kendalltau(np.arange(m), np.asarray(common)).statistic)


def _auc_binary(x: np.ndarray, y: np.ndarray) -> float | None:
    """The Mann-Whitney AUC of scores ``x`` for a 0/1 outcome ``y`` (ties count one half)."""
    from scipy.stats import rankdata

    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(x)
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _point_biserial(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or float(x.std()) == 0.0 or float(y.std()) == 0.0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def binary_agreement(
    scores: Sequence[Number | None],
    outcomes: Sequence[Number | None],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    max_bootstrap_n: int = 20_000,
) -> dict[str, Any]:
    """How well ``scores`` separate a binary outcome (a thumbs up = 1 / down = 0): the AUC
    (Mann-Whitney: the chance a thumbs-up turn scores higher than a thumbs-down one; 0.5 is
    chance) and the point-biserial correlation (Pearson's r with the 0/1 outcome), each with
    a 95% percentile bootstrap interval over resampled pairs (seeded; resamples with one
    class only are left out). Past ``max_bootstrap_n`` pairs the intervals are the normal
    approximations (Hanley and McNeil 1982 for the AUC, Fisher's z for r). Pearson on a 0/1
    target is the point-biserial r; the AUC is the figure that does not assume a linear
    relation. Pairs with a ``None`` are dropped."""
    xs, ys = _pairs(scores, outcomes)
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if y.size and not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("binary_agreement: outcomes must be 0 or 1")
    n_pos = int(y.sum()) if y.size else 0
    out: dict[str, Any] = {
        "n": int(y.size),
        "n_up": n_pos,
        "n_down": int(y.size) - n_pos,
        "auc": _auc_binary(x, y) if y.size else None,
        "point_biserial": _point_biserial(x, y) if y.size else None,
        "ci95": {"auc": None, "point_biserial": None},
    }
    if out["auc"] is None or y.size < 2:
        return out
    if y.size > max_bootstrap_n or n_boot <= 0:
        n_neg = y.size - n_pos
        auc = out["auc"]
        q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
        var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc**2) + (n_neg - 1) * (q2 - auc**2)) / (
            n_pos * n_neg
        )
        half = 1.96 * math.sqrt(max(var, 0.0))
        out["ci95"]["auc"] = [max(0.0, auc - half), min(1.0, auc + half)]
        r = out["point_biserial"]
        if r is not None and abs(r) < 1 and y.size > 3:
            z, se = math.atanh(r), 1 / math.sqrt(y.size - 3)
            out["ci95"]["point_biserial"] = [math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)]
        return out
    rng = np.random.default_rng(seed)
    aucs, rs = [], []
    for _ in range(n_boot):
        idx = rng.integers(0, y.size, size=y.size)
        xb, yb = x[idx], y[idx]
        a = _auc_binary(xb, yb)
        if a is not None:
            aucs.append(a)
        r = _point_biserial(xb, yb)
        if r is not None:
            rs.append(r)
    if aucs:
        out["ci95"]["auc"] = [float(v) for v in np.percentile(aucs, [2.5, 97.5])]
    if rs:
        out["ci95"]["point_biserial"] = [float(v) for v in np.percentile(rs, [2.5, 97.5])]
    return out
