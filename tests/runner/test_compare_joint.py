"""compare's rules across several scores and for a lower-is-better measure
(genir_eval/runner/compare.py): the joint verdict of several comparisons is the worst news
(a regression outranks too few to decide, which outranks a pass), whatever their order; the
note beside a pass reads the interval on the measure's worse side (below zero for
higher-is-better, above zero for lower-is-better ``unsupported_claims``).

The comparisons are written out by hand: three pairs whose deltas and interval are given,
and a randomisation p of 0.25 (three pairs: the smallest two-sided p of an exact test is
2/8), not significant at alpha 0.05."""

from __future__ import annotations

import itertools

import pytest

from genir_eval.runner.compare import Comparison, Delta, GateResult, gate, verdict_of

REGRESSION = GateResult(False, ("m: mean dropped",))
TOO_FEW = GateResult(True, (), ("m: 3 sessions compared, fewer than 10",))
PASS = GateResult(True)


@pytest.mark.parametrize(
    ("results", "verdict"),
    [
        ([REGRESSION, TOO_FEW], "regression"),
        ([REGRESSION, TOO_FEW, PASS], "regression"),
        ([TOO_FEW, PASS], "too few to decide"),
        ([PASS, PASS], "pass"),
        ([REGRESSION], "regression"),
        ([TOO_FEW], "too few to decide"),
    ],
)
def test_the_joint_verdict_is_the_worst_news_in_any_order(
    results: list[GateResult], verdict: str
) -> None:
    for order in itertools.permutations(results):
        assert verdict_of(list(order)) == verdict


def _comparison(metric: str, deltas: list[float], ci: tuple[float, float]) -> Comparison:
    pairs = tuple(Delta(f"s{i}", 1.0, 1.0 + d) for i, d in enumerate(deltas))
    return Comparison(
        metric=metric,
        level="session",
        deltas=pairs,
        mean_a=1.0,
        mean_b=1.0 + sum(deltas) / len(deltas),
        mean_delta=sum(deltas) / len(deltas),
        ci95=ci,
        p_value=0.25,
        p_exact=True,
        cohen_dz=None,
        higher_is_better=metric != "unsupported_claims",
    )


@pytest.mark.parametrize(
    ("metric", "deltas", "ci", "noted"),
    [
        # lower is better: a rise is the worse side, a fall is not
        ("unsupported_claims", [0.1, 0.2, 0.3], (0.1, 0.3), True),
        ("unsupported_claims", [-0.1, -0.2, -0.3], (-0.3, -0.1), False),
        # higher is better: the other way round
        ("citation_precision", [-0.1, -0.2, -0.3], (-0.3, -0.1), True),
        ("citation_precision", [0.1, 0.2, 0.3], (0.1, 0.3), False),
        # an interval over zero is on neither side
        ("unsupported_claims", [-0.1, 0.0, 0.3], (-0.1, 0.3), False),
    ],
)
def test_the_note_reads_the_interval_on_the_measures_worse_side(
    metric: str, deltas: list[float], ci: tuple[float, float], noted: bool
) -> None:
    result = gate(_comparison(metric, deltas, ci))
    assert result.verdict == "pass"  # p = 0.25: no regression called, no max-drop given
    # the rule, not its wording: a note exactly when the interval lies on the worse side
    assert bool(result.notes) is noted
