"""Meta-evaluation statistics: hand-worked tables, scipy cross-checks, bootstrap checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from genir_eval.meta.stats import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    correlations,
    kendall_tau,
    mae,
    pairwise_auc,
    precision_recall_f1,
    rbo,
)

TOL = 1e-9

# Computed by hand from the definitions.
# [1..5] vs [2,1,4,3,5]: centred products sum 8, squares 10 and 10 -> r = 0.8; the values are
#   their own ranks so Spearman = 0.8; 10 pairs, 2 discordant -> tau = 0.6.
# [1,1,2,3] vs [1,2,2,3]: r = 2 / sqrt(2.75 * 2) = 0.8528028654; ranks (1.5,1.5,3,4) and
#   (1,2.5,2.5,4) -> 3.75 / 4.5; 4 concordant, 0 discordant, one tie on each side of 6 pairs
#   -> tau-b = 4 / sqrt(5 * 5) = 0.8.
CORRELATION_CASES = [
    ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], 0.8, 0.8, 0.6),
    ([1, 1, 2, 3], [1, 2, 2, 3], 0.8528028654, 3.75 / 4.5, 0.8),
    ([1, 2, 3], [3, 2, 1], -1.0, -1.0, -1.0),
]


@pytest.mark.parametrize(("x", "y", "pearson", "spearman", "kendall"), CORRELATION_CASES)
def test_correlations_match_hand_values(x, y, pearson, spearman, kendall):
    result = correlations(x, y, n_boot=0)
    assert result["pearson"] == pytest.approx(pearson, abs=1e-9)
    assert result["spearman"] == pytest.approx(spearman, abs=1e-9)
    assert result["kendall"] == pytest.approx(kendall, abs=1e-9)
    assert result["n"] == len(x)
    assert result["ci95"] == {"pearson": None, "spearman": None, "kendall": None}


def test_pairs_with_none_or_nan_are_dropped_and_n_counts_the_rest():
    result = correlations([1, None, 2, 3, 4, 5, math.nan], [2, 9, 1, 4, 3, 5, 1], n_boot=0)
    assert result["n"] == 5
    assert result["pearson"] == pytest.approx(0.8, abs=TOL)


@pytest.mark.parametrize(
    ("x", "y"),
    [([1, 2], [2, 1]), ([1, 1, 1, 1], [1, 2, 3, 4]), ([1, 2, 3], [None, None, 1]), ([], [])],
)
def test_undefined_correlations_are_none_not_nan(x, y):
    result = correlations(x, y, n_boot=100)
    for name in ("pearson", "spearman", "kendall"):
        assert result[name] is None
        assert result["ci95"][name] is None


def test_constant_input_gives_none_without_a_warning():
    # pytest turns warnings into errors (pyproject's filterwarnings): none may escape here
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = correlations([2.0] * 6, [1, 2, 3, 4, 5, 6], n_boot=50)
    assert (out["pearson"], out["spearman"], out["kendall"]) == (None, None, None)
    assert out["n"] == 6 and out["ci95"]["pearson"] is None


# Nearly constant: five ones and 1 + 2^-40 (spread 9e-13, below scipy's eps^0.75 = 1.8e-12
# threshold for its NearConstantInputWarning). By hand: ranks (3,3,3,3,3,6)
# against 1..6 have centred cross products 7.5 and squares 7.5 and 17.5, so Spearman =
# sqrt(7.5 / 17.5) = 0.6546536707; two levels make Pearson the same; Kendall: 5 concordant
# pairs, 10 tied in x of 15 -> tau-b = 5 / sqrt(5 * 15) = 0.5773502692.
NEAR_CONSTANT = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0 + 2.0**-40]


def test_near_constant_input_is_computed_and_scipy_warning_stays_inside():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = correlations(NEAR_CONSTANT, [1, 2, 3, 4, 5, 6], n_boot=50)
    assert out["spearman"] == pytest.approx(0.6546536707, abs=1e-9)
    # centring values 9e-13 apart costs Pearson about 1e-4 of precision
    assert out["pearson"] == pytest.approx(0.6546536707, abs=1e-3)
    assert out["kendall"] == pytest.approx(0.5773502692, abs=1e-9)
    # the suppression is local: scipy itself still warns outside correlations()
    with pytest.warns(scipy_stats.NearConstantInputWarning):
        scipy_stats.pearsonr(NEAR_CONSTANT, [1, 2, 3, 4, 5, 6])


def test_unpaired_inputs_are_an_error():
    with pytest.raises(ValueError):
        correlations([1, 2, 3], [1, 2])


def _naive_bootstrap(x, y, n_boot, seed):
    """Per-resample scipy coefficients on the draws correlations() makes (one chunk)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    draws = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    out = {"pearson": [], "spearman": [], "kendall": []}
    for d in draws:
        xs, ys = x[d], y[d]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        out["pearson"].append(scipy_stats.pearsonr(xs, ys).statistic)
        out["spearman"].append(scipy_stats.spearmanr(xs, ys).statistic)
        out["kendall"].append(scipy_stats.kendalltau(xs, ys, variant="b").statistic)
    return {k: np.percentile(v, [2.5, 97.5]) for k, v in out.items()}


@pytest.mark.parametrize(
    ("n", "discrete"),
    [(12, True), (40, False), (80, False)],  # 80 continuous pairs takes the n x n Kendall path
)
def test_vectorised_bootstrap_equals_per_resample_scipy(n, discrete):
    rng = np.random.default_rng(7)
    x = np.round(rng.normal(size=n), 1)
    y = (
        rng.integers(1, 6, size=n).astype(float)
        if discrete
        else np.round(x + rng.normal(size=n), 1)
    )
    result = correlations(x.tolist(), y.tolist(), n_boot=300, seed=11)
    naive = _naive_bootstrap(x, y, 300, 11)
    for name in ("pearson", "spearman", "kendall"):
        assert result["ci95"][name] == pytest.approx(naive[name].tolist(), abs=1e-9), name


def test_point_estimates_agree_with_scipy_on_tied_data():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=200).astype(float)
    y = x + rng.integers(0, 3, size=200)
    result = correlations(x.tolist(), y.tolist(), n_boot=0)
    assert result["kendall"] == pytest.approx(scipy_stats.kendalltau(x, y).statistic, abs=TOL)
    assert result["spearman"] == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=TOL)


def test_bootstrap_is_reproducible_with_a_seed_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=30).tolist()
    y = [v + e for v, e in zip(x, rng.normal(size=30), strict=True)]
    first = correlations(x, y, n_boot=500, seed=5)
    again = correlations(x, y, n_boot=500, seed=5)
    other = correlations(x, y, n_boot=500, seed=6)
    assert first == again
    assert first["ci95"] != other["ci95"]
    for name in ("pearson", "spearman", "kendall"):
        lo, hi = first["ci95"][name]
        assert -1.0 <= lo <= first[name] <= hi <= 1.0


# Computed by hand. [0,1,1,0,1] vs [0,1,0,0,1]: p_o = 0.8, p_e = 0.4*0.6 + 0.6*0.4 = 0.48
#   -> 0.32 / 0.52. [0,1,2] vs [0,2,2] on labels (0,1,2): unweighted p_o = 2/3, p_e = 1/3
#   -> 0.5; linear: observed disagreement 1/3, expected 1 -> 2/3; quadratic: 1/3 vs 5/3 -> 0.8.
KAPPA_CASES = [
    ([0, 1, 1, 0, 1], [0, 1, 0, 0, 1], None, None, 0.32 / 0.52),
    ([0, 1, 2], [0, 2, 2], None, (0, 1, 2), 0.5),
    ([0, 1, 2], [0, 2, 2], "linear", (0, 1, 2), 2 / 3),
    ([0, 1, 2], [0, 2, 2], "quadratic", (0, 1, 2), 0.8),
    ([0, 1, None, 1, 0, 1], [0, 1, 3, 0, 0, 1], None, None, 0.32 / 0.52),
]


@pytest.mark.parametrize(("a", "b", "weights", "labels", "expected"), KAPPA_CASES)
def test_cohen_kappa_matches_hand_values(a, b, weights, labels, expected):
    assert cohen_kappa(a, b, weights=weights, labels=labels) == pytest.approx(expected, abs=TOL)


def test_cohen_kappa_undefined_cases():
    assert cohen_kappa([2, 2], [2, 2]) is None  # no expected disagreement
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa([0, 5], [0, 1], labels=(0, 1))


def test_binarize_mae_and_confusion_matrix():
    # Source: by hand.
    assert binarize([0, 1, 2, 3, None]) == [0, 0, 1, 1, None]
    assert binarize([0, 1, 2, 3], threshold=3) == [0, 0, 0, 1]
    assert mae([1, 2, None], [2, 2, 3]) == pytest.approx(0.5, abs=TOL)
    assert mae([None], [1]) is None
    # rows gold, columns predicted
    assert confusion_matrix([0, 1, 2, 3, 3], [0, 1, 3, 3, None]) == [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 1, 1],
    ]
    with pytest.raises(ValueError):
        confusion_matrix([4], [0])


# Computed by hand: pairs with different gold in ([.9,.5,.5,.1], [2,1,0,0]): five, ordered
# the same way by pred except one tie (0.5 vs 0.5) -> 4.5 / 5.
AUC_CASES = [
    ([0.9, 0.5, 0.5, 0.1], [2, 1, 0, 0], 0.9),
    ([0.1, 0.9], [1, 0], 0.0),
    ([0.3, 0.3, 0.3], [0, 1, 2], 0.5),
    ([1, 2, None, 3], [0, 0, 1, 1], 1.0),
]


@pytest.mark.parametrize(("pred", "gold", "expected"), AUC_CASES)
def test_pairwise_auc_matches_hand_values(pred, gold, expected):
    assert pairwise_auc(pred, gold) == pytest.approx(expected, abs=TOL)


def test_pairwise_auc_without_gold_differences_is_none():
    assert pairwise_auc([1, 2, 3], [1, 1, 1]) is None


# Conventions documented in precision_recall_f1; others by hand.
PRF_CASES = [
    ({1, 2, 3}, {2, 3, 4}, (2 / 3, 2 / 3, 2 / 3)),
    ({1}, {1, 2}, (1.0, 0.5, 2 / 3)),
    ({1}, {2}, (0.0, 0.0, 0.0)),
    (set(), set(), (1.0, 1.0, 1.0)),
    (set(), {1}, (0.0, 0.0, 0.0)),
    ({1}, set(), (0.0, 0.0, 0.0)),
]


@pytest.mark.parametrize(("pred", "gold", "expected"), PRF_CASES)
def test_precision_recall_f1(pred, gold, expected):
    result = precision_recall_f1(pred, gold)
    assert tuple(result) == pytest.approx(expected, abs=TOL)
    assert result.f1 == pytest.approx(expected[2], abs=TOL)


# Computed by hand from Webber et al. (2010), eq. 32, p = 0.9.
# [1,2,3] vs [2,1,4]: X = (0, 2, 2) -> (0.1/0.9)(2/2 * 0.81 + 2/3 * 0.729) + 2/3 * 0.729 = 0.63.
# [1,2] vs [1,3,2]: s = 2, l = 3, X = (1, 1, 2): (0.1/0.9)(0.9 + 0.405 + 0.486 + 1/6 * 0.729)
#   + (1/3 + 1/2) * 0.729 = 0.2125 + 0.6075 = 0.82.
RBO_CASES = [
    ([1, 2, 3], [1, 2, 3], 1.0),
    ([1, 2, 3], [4, 5, 6], 0.0),
    ([1, 2, 3], [2, 1, 4], 0.63),
    ([1, 2], [1, 3, 2], 0.82),
    ([1, 3, 2], [1, 2], 0.82),
    ([], [], 1.0),
    ([], [1], 0.0),
]


@pytest.mark.parametrize(("a", "b", "expected"), RBO_CASES)
def test_rbo_extrapolated_matches_hand_values(a, b, expected):
    assert rbo(a, b, p=0.9) == pytest.approx(expected, abs=1e-9)


def test_rbo_rejects_repeated_items_and_bad_p():
    with pytest.raises(ValueError):
        rbo([1, 1], [1])
    with pytest.raises(ValueError):
        rbo([1], [1], p=1.0)


# Computed by hand: one swapped pair of six -> (5 - 1) / 6; items not in both are ignored.
KENDALL_ORDER_CASES = [
    (list("abcd"), list("acbd"), 4 / 6),
    (list("abcd"), list("dcba"), -1.0),
    (list("abx"), list("bay"), -1.0),
]


@pytest.mark.parametrize(("a", "b", "expected"), KENDALL_ORDER_CASES)
def test_kendall_tau_of_orderings(a, b, expected):
    assert kendall_tau(a, b) == pytest.approx(expected, abs=TOL)


def test_kendall_tau_needs_two_common_items():
    assert kendall_tau(["a", "b"], ["a", "c"]) is None


def test_large_inputs_take_memory_linear_in_n_not_n_squared():
    # 20,000 pairs: an n x n matrix of float64 would take 3.2 GB; the O(n log n) paths
    # (cells for a 1-5 side, scipy's merge sort for two continuous sides) stay far below.
    import tracemalloc

    rng = np.random.default_rng(4)
    n = 20_000
    x = rng.normal(size=n)
    continuous = x + rng.normal(size=n)
    levels = np.clip(np.round(x + 3), 1, 5)
    order = rng.permutation(n)
    tracemalloc.start()
    try:
        both = correlations(x, continuous, n_boot=4, seed=1)
        graded = correlations(x, levels, n_boot=20, seed=1)
        tau = kendall_tau(list(range(n)), order.tolist())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100e6
    assert both["kendall"] == pytest.approx(
        scipy_stats.kendalltau(x, continuous).statistic, abs=TOL
    )
    assert graded["kendall"] == pytest.approx(scipy_stats.kendalltau(x, levels).statistic, abs=TOL)
    assert tau == pytest.approx(scipy_stats.kendalltau(np.arange(n), order).statistic, abs=TOL)
    for result in (both, graded):
        lo, hi = result["ci95"]["kendall"]
        assert lo <= result["kendall"] <= hi


def test_numpy_arrays_with_nan_are_paired_like_lists_with_none():
    x = [1.0, None, 2.0, 3.0, 4.0, 5.0]
    y = [2.0, 7.0, 1.0, 4.0, None, 5.0]
    as_arrays = correlations(
        np.array([np.nan if v is None else v for v in x]),
        np.array([np.nan if v is None else v for v in y]),
        n_boot=50,
    )
    assert as_arrays == correlations(x, y, n_boot=50)
    assert as_arrays["n"] == 4
