"""The nugget measures: TREC 2024 RAG's all/vital, strict and partial scores."""

from __future__ import annotations

import pytest

from genir_eval.errors import ConfigError
from genir_eval.metrics import AssignedNugget, NuggetRecall, VitalNuggetRecall, parse_measure

A = AssignedNugget
# Three vital (support, partial, not) and two okay (support, partial) nuggets.
TURN = [
    A("vital", "support"),
    A("vital", "partial_support"),
    A("vital", "not_support"),
    A("okay", "support"),
    A("okay", "partial_support"),
]

# (measure, value): computed by hand from the definitions (TREC 2024 RAG: support 1,
# partial support 0.5 or 0 when strict, over all or over vital nuggets)
CASES = [
    ("nugget_recall", (1 + 0.5 + 0 + 1 + 0.5) / 5),
    ("nugget_recall(partial=0)", 2 / 5),
    ("vital_nugget_recall", (1 + 0.5 + 0) / 3),
    ("vital_nugget_recall(partial=0)", 1 / 3),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_turn_values_by_hand(text: str, expected: float) -> None:
    measure = parse_measure(text)
    assert measure.turn(TURN) == pytest.approx(expected, abs=1e-12)  # type: ignore[attr-defined]


def test_session_is_the_mean_of_its_turns_and_missing_stays_missing() -> None:
    other = [A("vital", "support"), A("okay", "not_support")]  # all 0.5, vital 1.0
    assert NuggetRecall().compute([TURN, other]) == pytest.approx((0.6 + 0.5) / 2, abs=1e-12)
    # a turn without vital nuggets has no vital value and is left out of the mean
    assert VitalNuggetRecall().compute([[A("okay", "support")], other]) == 1.0
    # an unassigned nugget makes the turn's value unknown, not 0
    assert NuggetRecall().turn([A("vital", "support"), A("okay", None)]) is None
    assert NuggetRecall().compute([]) is None


def test_printing_parsing_and_bounds() -> None:
    assert str(parse_measure("vital_nugget_recall(partial=0)")) == "vital-nugget-recall(partial=0)"
    assert parse_measure("nugget-recall(partial=0.5)") == NuggetRecall()
    assert NuggetRecall.HIGHER_IS_BETTER and VitalNuggetRecall.LEVEL == "nugget"
    with pytest.raises(ConfigError, match="partial must be in"):
        parse_measure("nugget_recall(partial=2)")


def test_the_kind_s_scores_are_the_measures() -> None:
    from genir_eval.judges.nuggets.kind import KIND, turn_scores

    value = {"nuggets": [{"importance": n.importance, "assignment": n.assignment} for n in TURN]}
    assert KIND.turn_value(value, 0) == NuggetRecall().turn(TURN)
    for name, got in turn_scores(value).items():
        assert got == parse_measure(name).turn(TURN), name  # type: ignore[attr-defined]
