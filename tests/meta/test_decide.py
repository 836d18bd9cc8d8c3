"""The rules that put a figure into words (genir_eval/decide.py): each verdict class, its
boundaries, and the minimum n below which no interval is printed.

Expected words come from the module docstring's rules applied by hand to each row."""

from __future__ import annotations

import pytest

from genir_eval.meta.decide import (
    MIN_N,
    Decision,
    Verdict,
    figure_words,
    interval_text,
    next_steps,
    relation,
    score_words,
)


@pytest.mark.parametrize(
    ("statistic", "value", "ci", "n", "words", "severity"),
    [
        # a correlation: chance is 0
        ("spearman", 0.374, (0.10, 0.60), 30, "tracks users", "good"),
        ("spearman", 0.094, (-0.27, 0.46), 30, "no detectable relation with users", "none"),
        ("spearman", -0.374, (-0.60, -0.10), 30, "runs against users", "bad"),
        # an interval that touches 0 does not exclude it
        ("pearson", 0.30, (0.0, 0.60), 30, "no detectable relation with users", "none"),
        ("kendall", -0.30, (-0.60, 0.0), 30, "no detectable relation with users", "none"),
        # an AUC: chance is 0.5
        ("auc", 0.833, (0.63, 1.00), 17, "better than chance", "good"),
        ("auc", 0.614, (0.32, 0.88), 15, "chance-level", "none"),
        ("auc", 0.288, (0.10, 0.50), 17, "chance-level", "none"),  # reaches 0.5
        ("auc", 0.288, (0.10, 0.49), 17, "worse than chance", "bad"),
        # a correlation interval lying wholly above 0 is not above an AUC's chance
        ("auc", 0.40, (0.10, 0.52), 40, "chance-level", "none"),
        ("pair agreement", 0.393, (0.321, 0.473), 239, "worse than chance", "bad"),
        ("Pair agreement", 0.685, (0.592, 0.783), 100, "better than chance", "good"),
        # a kappa: chance is 0, worded as chance
        ("kappa", 0.40, (0.20, 0.60), 50, "better than chance", "good"),
        ("kappa", 0.05, (-0.10, 0.20), 50, "chance-level", "none"),
        ("kappa", -0.30, (-0.50, -0.10), 50, "worse than chance", "bad"),
        # the minimum n: below it, too few to tell whatever the interval
        ("spearman", 0.90, (0.80, 0.99), MIN_N - 1, "too few to tell", "small"),
        ("auc", 0.10, (0.0, 0.2), 3, "too few to tell", "small"),
        ("spearman", 0.90, (0.80, 0.99), MIN_N, "tracks users", "good"),
        # no interval (nothing varies) or no value
        ("spearman", 0.5, None, 30, "no interval", "info"),
        ("spearman", None, (0.1, 0.2), 30, "no value", "info"),
    ],
)
def test_each_verdict_class_and_its_boundaries(
    statistic: str, value: float | None, ci: tuple | None, n: int, words: str, severity: str
) -> None:
    assert relation(statistic, value, ci, n) == Verdict(words, severity)


def test_the_minimum_n_is_ten() -> None:
    # the report's rule since it began: a bootstrap of fewer than 10 pairs is not shown
    assert MIN_N == 10


@pytest.mark.parametrize(
    ("value", "ci", "n", "text"),
    [
        (0.094, (-0.273, 0.457), 30, "0.094 [-0.27, 0.46]"),
        (0.231, (-0.45, 0.96), 7, "0.231 (n<10)"),  # below the minimum: no interval printed
        (0.231, (-0.45, 0.96), 10, "0.231 [-0.45, 0.96]"),
        (0.5, None, 30, "0.500"),
        (None, (0.1, 0.2), 30, "-"),
        (-0.0001, (-0.004, 0.002), None, "0.000 [0.00, 0.00]"),  # unknown n: not small; never -0.00
    ],
)
def test_interval_text(value: float | None, ci: tuple | None, n: int | None, text: str) -> None:
    assert interval_text(value, ci, n) == text


def test_figure_words_print_no_interval_below_the_minimum() -> None:
    assert figure_words("spearman", 0.281, (-0.49, 0.97), 7) == (
        "Spearman rho 0.281 (n = 7 < 10: no interval)"
    )
    assert figure_words("auc", 0.614, (0.32, 0.88), 15) == "AUC 0.614 [0.32, 0.88] (n = 15)"
    assert "[" not in figure_words("auc", 0.614, (0.32, 0.88), 9)


def test_a_score_on_its_own_carries_its_scale_and_direction() -> None:
    words = score_words(
        2.2784, (1.848, 2.706), 10, scale="0 and up", higher_is_better=True, unit="sessions"
    )
    assert words == "mean 2.278 [1.85, 2.71] over 10 sessions; scale 0 and up, higher is better"
    small = score_words(0.4, (0.1, 0.9), 4, scale="0-1", higher_is_better=False, unit="sessions")
    assert small == "mean 0.400 (n < 10: no interval) over 4 sessions; scale 0-1, lower is better"
    assert "direction unknown" in score_words(
        1.0, None, 20, scale="", higher_is_better=None, unit="turns"
    )


def _d(subject: str, severity: str, words: str = "w") -> Decision:
    return Decision(subject, Verdict(words, severity), "")


def test_next_steps_put_what_runs_against_people_first() -> None:
    steps = next_steps(
        [
            _d("a", "good", "tracks users"),
            _d("spans vs the users' thumbs", "bad", "runs against users"),
        ],
        headline="h",
        headline_tracks=False,
        headline_part="a link-usefulness score: it says how useful the cited links are",
        missing=1,
        smallest_n=7,
    )
    assert steps[0].startswith("spans vs the users' thumbs runs against users")
    assert "only 7 values" in steps[1] and "fewer than 10" in steps[1]
    assert steps[2].startswith("a tracks users: consider it as the headline")
    assert steps[3] == (
        "nothing shows that h tracks people: label a sample (genir-eval label) to measure it"
    )
    assert steps[4] == (
        "h is a link-usefulness score: it says how useful the cited links are, not whether "
        "people like the answers"
    )
    assert len(steps) == 5  # the missing judgment is the sixth: over the limit


def test_next_steps_of_a_headline_that_tracks_people() -> None:
    steps = next_steps(
        [_d("h vs the users' session satisfaction", "good", "tracks users")],
        headline="h",
        headline_tracks=True,
        headline_part=None,
        missing=2,
        smallest_n=40,
    )
    assert steps == ["2 judgments missing: see report.html's failures"]
