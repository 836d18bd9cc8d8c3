"""The nested (two-stage) bootstrap of a paired change when both runs judged each session
several times (``run --repeats``), and the judge's own scatter: pinned against a second
implementation written here (plain Python loops over the same seeded draws), and against
figures worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from genir_eval.meta.decide import repeats_words, scatter_words
from genir_eval.meta.paired import cluster_bootstrap, nested_bootstrap, within_scatter

# A small hand table: four sessions, each judged three times in run A and twice in run B,
# but session s4, which run B judged once (outside its repeat sample).
REPEATS_A = [[1.0, 2.0, 3.0], [2.0, 2.0, 4.0], [0.0, 1.0, 1.0], [3.0, 3.0, 2.0]]
REPEATS_B = [[2.0, 3.0], [2.0, 5.0], [1.0, 1.0], [4.0]]
SESSIONS = ["s1", "s2", "s3", "s4"]


def _second_implementation(
    repeats_a: list[list[float]],
    repeats_b: list[list[float]],
    clusters: list[str],
    n_resamples: int,
    seed: int,
) -> tuple[float, float]:
    """The two-stage bootstrap by its definition, one resample, cluster and unit at a time,
    taking the draws of ``default_rng(seed)`` in the documented order (clusters, then one
    uniform per unit and repeat slot for A, then for B) and sorting the means by hand."""
    names = list(dict.fromkeys(clusters))
    members = {c: [i for i, k in enumerate(clusters) if k == c] for c in names}
    width_a = max(len(r) for r in repeats_a)
    width_b = max(len(r) for r in repeats_b)
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(n_resamples):
        drawn = rng.integers(0, len(names), size=len(names))
        units = [i for c in drawn for i in members[names[c]]]
        uniform_a = rng.random((len(units), width_a))
        uniform_b = rng.random((len(units), width_b))
        changes = []
        for row, unit in enumerate(units):
            a, b = repeats_a[unit], repeats_b[unit]
            mean_a = sum(a[int(uniform_a[row][j] * len(a))] for j in range(len(a))) / len(a)
            mean_b = sum(b[int(uniform_b[row][j] * len(b))] for j in range(len(b))) / len(b)
            changes.append(mean_b - mean_a)
        means.append(sum(changes) / len(changes))
    means.sort()

    def percentile(q: float) -> float:  # numpy's default (linear) percentile
        at = q / 100 * (len(means) - 1)
        low = math.floor(at)
        high = min(low + 1, len(means) - 1)
        return means[low] + (means[high] - means[low]) * (at - low)

    return percentile(2.5), percentile(97.5)


@pytest.mark.parametrize("seed", [0, 7])
def test_the_nested_bootstrap_is_the_second_implementations(seed: int) -> None:
    got = nested_bootstrap(REPEATS_A, REPEATS_B, SESSIONS, n_resamples=400, seed=seed)
    expected = _second_implementation(REPEATS_A, REPEATS_B, SESSIONS, 400, seed)
    assert got == pytest.approx(expected, abs=1e-12)


def test_turns_resample_with_their_session() -> None:
    """At turn level the clusters are sessions: s1's two turns are drawn together."""
    repeats_a = [[1.0, 2.0], [0.0, 0.0], [3.0, 1.0], [2.0, 2.0], [1.0, 4.0]]
    repeats_b = [[2.0, 2.0], [1.0, 0.0], [3.0, 3.0], [1.0, 2.0], [2.0, 2.0]]
    clusters = ["s1", "s1", "s2", "s3", "s3"]
    got = nested_bootstrap(repeats_a, repeats_b, clusters, n_resamples=300, seed=3)
    expected = _second_implementation(repeats_a, repeats_b, clusters, 300, 3)
    assert got == pytest.approx(expected, abs=1e-12)


def test_without_judge_noise_every_resample_is_the_mean_change() -> None:
    """By hand: every session's repeats equal and every change +0.5, so each resample's
    mean change is +0.5 and the interval is [0.5, 0.5]."""
    repeats_a = [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]
    repeats_b = [[1.5, 1.5], [2.5, 2.5], [0.5, 0.5]]
    assert nested_bootstrap(repeats_a, repeats_b, ["x", "y", "z"], n_resamples=200) == (
        pytest.approx(0.5),
        pytest.approx(0.5),
    )


def test_the_judges_noise_widens_the_interval() -> None:
    """Every session's change is the same (+0.5 between the repeats' means), so resampling
    sessions alone gives no width at all; resampling the repeats within them does."""
    repeats_a = [[0.0, 1.0, 2.0]] * 12
    repeats_b = [[0.5, 1.5, 2.5]] * 12
    sessions = [f"s{i}" for i in range(12)]
    plain = cluster_bootstrap([0.5] * 12, sessions, n_resamples=1000)
    nested = nested_bootstrap(repeats_a, repeats_b, sessions, n_resamples=1000)
    assert plain is not None and nested is not None
    assert plain[1] - plain[0] == pytest.approx(0.0, abs=1e-12)
    # each session's mean of three draws from {0, 1, 2} has sd sqrt(2/3)/sqrt(3) = 0.471;
    # the mean over 12 sessions' changes (A and B apart) sd 0.471 * sqrt(2 / 12) = 0.192,
    # so a 95% interval about 4 * 0.192 = 0.77 wide
    assert 0.6 < nested[1] - nested[0] < 0.95
    assert nested[0] < 0.5 < nested[1]


def test_fewer_than_two_sessions_have_no_interval() -> None:
    assert nested_bootstrap([[1.0, 2.0]], [[2.0, 3.0]], ["only"]) is None


def test_within_scatter_by_hand() -> None:
    """[1, 2, 3]: squares 2 on 2 degrees of freedom; [2, 4]: 2 on 1; [5]: judged once, left
    out. Pooled variance 4 / 3; repeats' harmonic mean 2 / (1/3 + 1/2) = 2.4."""
    sd, repeats = within_scatter([[1.0, 2.0, 3.0], [2.0, 4.0], [5.0]]) or (0.0, 0.0)
    assert sd == pytest.approx(math.sqrt(4 / 3), abs=1e-12)
    assert repeats == pytest.approx(2.4, abs=1e-12)
    assert within_scatter([[1.0], [2.0]]) is None


def test_scatter_words_by_hand() -> None:
    """sd 0.5 over the square root of 3 repeats: a scatter of 0.2887."""
    words = scatter_words("x (session level)", 0.01, 0.5, 3.0)
    assert words == (
        "x (session level): the change +0.0100 is smaller than the judge's own scatter "
        "(0.2887: within-session sd 0.5000 of its repeated scores, both runs pooled, over the "
        "square root of 3 repeats): the judge cannot tell this change from noise"
    )
    assert scatter_words("x", -0.29, 0.5, 3.0) is None  # |change| above 0.2887
    assert scatter_words("x", -0.28, 0.5, 3.0) is not None


def test_repeats_words_say_which_interval() -> None:
    assert "only run B carries repeated judgments" in repeats_words("x", "B", 4, 10)
    assert "plain paired interval" in repeats_words("x", "B", 4, 10)
    assert "(4 of 10 compared sessions" in repeats_words("x", "both", 4, 10)
