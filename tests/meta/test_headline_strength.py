"""The headline rule's strength of evidence (genir_eval/meta/headline.py): every figure's
margin above chance on one scale, a correlation's, and each judge's evidence found under its
registered name whatever its id in the run.

A pair agreement ``a`` is Kendall's tau of the pairs ``2a - 1`` (each pair agreeing counts
+1, disagreeing -1), so its margin above chance 0.5 weighs twice on a correlation's scale:
worked by hand in each row."""

from __future__ import annotations

import pytest

from genir_eval.meta.headline import Figure, choose_headline


def _figure(score: str, statistic: str, lo: float, hi: float) -> Figure:
    value = (lo + hi) / 2
    return Figure(score, statistic, "made up", value, (lo, hi), 200, "offline twin", "-", "-")


# (agreement's lower bound, correlation's lower bound, which leads): the agreement's margin
# 2 (lo - 0.5) against the correlation's lo - 0
ROWS = [
    (0.60, 0.15, "agree"),  # 0.20 > 0.15 (margins unscaled: 0.10 < 0.15)
    (0.60, 0.19, "agree"),  # 0.20 > 0.19
    (0.60, 0.21, "correlate"),  # 0.20 < 0.21
    (0.56, 0.11, "agree"),  # 0.12 > 0.11 (unscaled: 0.06 < 0.11)
    (0.53, 0.05, "agree"),  # 0.06 > 0.05 (unscaled 0.03 < 0.05)
    (0.53, 0.07, "correlate"),  # 0.06 < 0.07
]


@pytest.mark.parametrize(("agreement_lo", "correlation_lo", "leads"), ROWS)
@pytest.mark.parametrize("order", ["agree-first", "correlate-first"])
def test_a_pair_agreement_margin_weighs_on_a_correlations_scale(
    agreement_lo: float, correlation_lo: float, leads: str, order: str
) -> None:
    figures = (
        _figure("judge.agree", "pair agreement", agreement_lo, agreement_lo + 0.1),
        _figure("judge.correlate", "Spearman", correlation_lo, correlation_lo + 0.3),
    )
    judges = [("agree", "judge.agree"), ("correlate", "judge.correlate")]
    if order == "correlate-first":
        judges.reverse()
    chosen = choose_headline(judges, "fallback", figures=figures)
    assert (chosen.score, chosen.chosen_by) == (leads, "evidence")


def test_evidence_is_found_under_the_registered_name_not_the_id() -> None:
    figures = (_figure("judge.a", "Spearman", 0.2, 0.5),)
    # the run's id differs from the name the evidence is filed under: found by the name
    chosen = choose_headline([("mine", "judge.a")], "fallback", figures=figures)
    assert (chosen.score, chosen.chosen_by, chosen.judge) == ("mine", "evidence", "judge.a")
    # an id that happens to be another judge's name brings no evidence of its own
    chosen = choose_headline([("judge.a", "judge.b")], "fallback", figures=figures)
    assert (chosen.score, chosen.chosen_by, chosen.judge) == ("fallback", "no evidence", None)
