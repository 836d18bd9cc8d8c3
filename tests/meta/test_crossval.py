"""Repeated leave-topics-out cross-validation (genir_eval/meta/crossval.py): choosing a design
on some topics is measured on topics it did not see, and a design that only looks good in
sample loses to the simplest ingredient."""

from __future__ import annotations

import numpy as np
import pytest

from genir_eval.meta.crossval import best_design, cross_validate, topic_folds

TOPICS = [f"t{i:02d}" for i in range(20)]
ITEMS = 20


def _steady(rate: float) -> dict[str, list[float | None]]:
    """A design that gets ``rate`` of every topic's items right (the same on every topic)."""
    right = round(rate * ITEMS)
    return {t: [1.0] * right + [0.0] * (ITEMS - right) for t in TOPICS}


def _noise(rng: np.random.Generator) -> dict[str, list[float | None]]:
    """A design right on all of a topic's items or on none, by a coin per topic: 0.5 in
    expectation, and on 20 topics, by luck, sometimes far above."""
    return {t: [float(rng.random() < 0.5)] * ITEMS for t in TOPICS}


def test_folds_partition_the_topics_once_per_repeat() -> None:
    folds = topic_folds(TOPICS, k=4, repeats=5, seed=3)
    assert len(folds) == 5
    for partition in folds:
        tested = [t for _, test in partition for t in test]
        assert sorted(tested) == TOPICS  # every topic judged out of sample exactly once
        for training, test in partition:
            assert len(test) == 5 and not set(training) & set(test)
            assert sorted(training + test) == TOPICS
    # the repeats shuffle differently
    assert folds[0][0][1] != folds[1][0][1]


@pytest.mark.parametrize(("k", "repeats"), [(1, 5), (21, 5), (4, 0)])
def test_folds_refuse_impossible_settings(k: int, repeats: int) -> None:
    with pytest.raises(ValueError):
        topic_folds(TOPICS, k=k, repeats=repeats)


def test_an_overfit_design_loses_out_of_sample_and_the_ingredient_is_kept() -> None:
    rng = np.random.default_rng(7)
    hits = {"ingredient": _steady(0.65), **{f"lucky {i}": _noise(rng) for i in range(200)}}
    in_sample = {name: np.mean([h for t in TOPICS for h in rows[t]]) for name, rows in hits.items()}
    # the trap: on all 20 topics some lucky design looks better than the ingredient
    assert best_design(hits, TOPICS, ["ingredient", *hits]) != "ingredient"
    assert max(in_sample.values()) >= 0.75
    result = cross_validate(hits, TOPICS, "ingredient", k=4, repeats=5, seed=0)
    # out of sample the choosing is worth about a coin, the ingredient its 0.65
    assert result.figure < 0.6
    assert result.ingredient_figure == pytest.approx(0.65, abs=1e-12)
    assert not result.beats_ingredient
    assert result.adopted == "ingredient"


def test_a_design_better_on_every_topic_is_adopted() -> None:
    rng = np.random.default_rng(7)
    hits = {
        "ingredient": _steady(0.6),
        "better": _steady(0.8),
        **{f"lucky {i}": _noise(rng) for i in range(5)},
    }
    result = cross_validate(hits, TOPICS, "ingredient", k=4, repeats=5, seed=0)
    assert result.figure == pytest.approx(0.8, abs=1e-12)
    assert result.chosen == {"better": 20}
    assert result.beats_ingredient and result.adopted == "better"
    # each topic's hit rate is 0.8: resampling topics cannot move it (an interval of width 0)
    assert result.ci95 == pytest.approx((0.8, 0.8), abs=1e-12)


def test_the_interval_spans_the_topics_spread() -> None:
    # half the topics at 1.0, half at 0.5 (20 items each): the pooled mean is 0.75 and a
    # bootstrap over 20 topics moves it by about +-0.11 (the topics' spread 0.25 / sqrt(20) x 1.96)
    half = {t: [1.0] * ITEMS if i % 2 else [1.0, 0.0] * (ITEMS // 2) for i, t in enumerate(TOPICS)}
    result = cross_validate({"only": half}, TOPICS, "only", k=4, repeats=3, seed=0, n_boot=4000)
    assert result.figure == pytest.approx(0.75, abs=1e-12)
    lo, hi = result.ci95
    assert lo < 0.75 < hi
    assert 0.15 < hi - lo < 0.30


def test_ties_count_as_given_and_uncounted_items_are_left_out() -> None:
    hits = {
        "ingredient": {t: [1.0, 0.0, None] for t in TOPICS},  # 0.5 of its counted items
        "halves": {t: [0.5, 0.5, 0.5, 0.5] for t in TOPICS},
    }
    result = cross_validate(hits, TOPICS, "ingredient", k=4, repeats=2)
    assert result.ingredient_figure == pytest.approx(0.5)
    # an equal figure does not beat the ingredient: the ingredient wins ties
    assert result.chosen == {"ingredient": 8} and result.adopted == "ingredient"


def test_the_ingredient_must_be_a_design() -> None:
    with pytest.raises(ValueError, match="ingredient"):
        cross_validate({"a": _steady(0.5)}, TOPICS, "b")
