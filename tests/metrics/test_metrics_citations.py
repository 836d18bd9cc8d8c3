"""Citation precision, recall and the unsupported-claim rate (values computed by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from genir_eval.errors import ConfigError
from genir_eval.ingest import read_jsonl
from genir_eval.metrics import (
    CitationPrecision,
    CitationRecall,
    CitedStatement,
    UnsupportedClaims,
    cited_statements,
    gold_cited_statements,
    needs_support,
    parse_measure,
)
from genir_eval.metrics.citations import asks_back
from genir_eval.records import Statement, Turn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
S = CitedStatement

# One turn: a statement cited by a full and a none; one by a partial; an uncited claim;
# a lead-in that needs no support; a statement whose only citation was not judged.
TURN = [
    S(True, (2, 0)),
    S(True, (1,)),
    S(True, ()),
    S(False, ()),
    S(True, (None,)),
]

# (measure, expected, how it was computed by hand)
CASES = [
    (CitationPrecision(), 0.5, "(1 + 0 + 0.5) / 3 judged citations"),
    (CitationPrecision(partial=0), 1 / 3, "(1 + 0 + 0) / 3"),
    (CitationPrecision(partial=1), 2 / 3, "(1 + 0 + 1) / 3"),
    (CitationRecall(), 0.5, "(max(1, 0) + 0.5 + 0) / 3 claims with a judged citation or none"),
    (CitationRecall(partial=0), 1 / 3, "(1 + 0 + 0) / 3"),
    (UnsupportedClaims(), 1 / 3, "only the uncited claim: 1 of 3"),
]


@pytest.mark.parametrize(("measure", "expected", "_how"), CASES)
def test_turn_values_by_hand(measure, expected: float, _how: str) -> None:
    assert measure.compute([TURN]) == pytest.approx(expected, abs=1e-12)


# A statement counts its best judged citation wherever it stands (by hand: partial 0.5).
BEST_CITATION = [
    ((0, 2), 1.0),
    ((2, 0), 1.0),
    ((0, 1, 0), 0.5),
    ((None, 0, 2), 1.0),
    ((1, None, 2, 0), 1.0),
    ((0, 0), 0.0),
    ((None, 1), 0.5),
]


@pytest.mark.parametrize(("support", "expected"), BEST_CITATION)
def test_recall_counts_the_best_citation(support, expected: float) -> None:
    assert CitationRecall().compute([[S(True, support)]]) == pytest.approx(expected, abs=1e-12)
    # unsupported-claims: unsupported only when no judged citation supports it at all
    unsupported = 1.0 if expected == 0.0 else 0.0
    assert UnsupportedClaims().compute([[S(True, support)]]) == unsupported


def test_unsupported_is_one_minus_recall_at_partial_one() -> None:
    turns = [TURN, [S(True, (0, 0)), S(True, (1,))]]
    recall = CitationRecall(partial=1).compute(turns)
    assert UnsupportedClaims().compute(turns) == pytest.approx(1 - recall, abs=1e-12)


def test_session_pools_statements_not_turn_means() -> None:
    turns = [[S(True, (2,))], [S(True, (0,)), S(True, (0,)), S(True, (0,))]]
    # pooled: 1 of 4 citations support; the mean of the turn values would be 0.5
    assert CitationPrecision().compute(turns) == pytest.approx(0.25, abs=1e-12)


def test_nothing_to_count_is_none_not_zero() -> None:
    assert CitationPrecision().compute([[S(True, (None,)), S(False, ())]]) is None
    assert CitationRecall().compute([[S(False, ())]]) is None
    assert UnsupportedClaims().compute([]) is None


@pytest.mark.parametrize(
    "text",
    [
        "citation-precision(partial=0.5)",
        "citation-recall(partial=0)",
        "unsupported-claims",
    ],
)
def test_names_print_and_parse_back(text: str) -> None:
    measure = parse_measure(text)
    assert str(measure) == text and parse_measure(str(measure)) == measure


def test_short_names_defaults_and_bad_parameters() -> None:
    assert parse_measure("citation_precision") == CitationPrecision(partial=0.5)
    assert parse_measure("citation_recall(partial=0.25)") == CitationRecall(partial=0.25)
    assert UnsupportedClaims.HIGHER_IS_BETTER is False and CitationPrecision.HIGHER_IS_BETTER
    with pytest.raises(ConfigError, match="partial must be in"):
        parse_measure("citation_precision(partial=2)")
    with pytest.raises(ConfigError, match="unknown parameter"):
        parse_measure("unsupported_claims(partial=1)")


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (Statement("Short.", (1,)), True),  # cited: always
        (Statement("Prices start at 5 dollars."), True),  # a number
        (Statement("Decaf espresso still contains a small amount of caffeine."), True),
        (Statement("Here is what happens on cloudy days:"), False),  # lead-in
        (Statement("Do you want to know more about panels?"), False),  # question back
        (Statement("Hope this helps."), False),  # short
        (Statement("太阳能板在阴天仍然可以发电但功率下降"), True),  # ten CJK characters or more
        # the bounds, by count: six words make a claim, five do not; ten CJK characters do,
        # nine do not
        (Statement("Panels still work on cloudy days"), True),
        (Statement("Panels work on cloudy days"), False),
        (Statement("太阳能板阴天能发电啊"), True),
        (Statement("太阳能板阴天能发电"), False),
    ],
)
def test_needs_support(statement: Statement, expected: bool) -> None:
    assert needs_support(statement) is expected


def test_cited_statements_keys_by_position_and_link() -> None:
    turn = Turn(1, "q", "r", statements=(Statement("A b c.", (1, 2)), Statement("D.", (2,))))
    got = cited_statements(turn, {(1, 2): 2, (2, 2): 0})
    assert got == [S(True, (None, 2)), S(True, (0,))]


def test_gold_from_the_fixture() -> None:
    sessions = read_jsonl(FIXTURES / "citation_sessions.jsonl").sessions
    python = next(s for s in sessions if s.session_id == "cite-python")
    (turn,) = gold_cited_statements(python)  # type: ignore[misc]
    # hand labels: full; none (number); none (negation); partial; full + none (irrelevant)
    assert [s.support for s in turn] == [(2,), (0,), (0,), (1,), (2, 0)]
    # precision (1 + 0 + 0 + .5 + 1 + 0) / 6; recall (1 + 0 + 0 + .5 + 1) / 5
    assert CitationPrecision().compute([turn]) == pytest.approx(2.5 / 6, abs=1e-12)
    assert CitationRecall().compute([turn]) == pytest.approx(2.5 / 5, abs=1e-12)
    assert UnsupportedClaims().compute([turn]) == pytest.approx(2 / 5, abs=1e-12)
    assert gold_cited_statements(python.__class__(python.session_id, python.turns)) is None


@pytest.mark.parametrize(
    ("statements", "claims"),
    [
        # only a clarifying question (and a promise): no claim, nothing unsupported
        (
            (
                Statement("Which printer model do you have at home right now?"),
                Statement("I can walk you through the whole setup once I know it."),
            ),
            0,
        ),
        # a question after a claim with a number: the claim still needs support
        (
            (
                Statement("The X100 has 3 paper trays for different sizes."),
                Statement("Which one do you want to use for this?"),
            ),
            1,
        ),
        # a question in a cited reply: the cited statement needs support
        (
            (
                Statement("Printers like this need a driver from the maker.", (1,)),
                Statement("Which operating system do you use at the moment?"),
            ),
            1,
        ),
    ],
)
def test_a_clarifying_question_makes_no_claim(
    statements: tuple[Statement, ...], claims: int
) -> None:
    turn = Turn(
        1, "help with my printer", " ".join(s.text for s in statements), statements=statements
    )
    found = cited_statements(turn, {})
    assert sum(s.needs_support for s in found) == claims
    if claims == 0:  # nothing to count: no value, never a 0 or a 1
        assert UnsupportedClaims().compute([found]) is None


@pytest.mark.parametrize("cls", [CitationPrecision, CitationRecall])
def test_partial_takes_0_to_1_and_nothing_else(cls) -> None:
    for value in (0.0, 0.25, 1.0):
        assert cls(partial=value).partial == value
    for value in (-0.001, 1.001, 2.0):
        with pytest.raises(ConfigError) as error:
            cls(partial=value)
        assert str(error.value) == f"{cls.NAME}: partial must be in [0, 1]"


def test_a_full_width_question_asks_back() -> None:
    turn = Turn(index=1, query="q", response_text="", statements=(Statement("你用的是哪个型号？"),))
    assert asks_back(turn)
    assert not cited_statements(turn, {})[0].needs_support


def test_gold_for_fewer_turns_than_the_session_leaves_the_rest_unjudged() -> None:
    from genir_eval.records import Gold, Session

    turns = tuple(
        Turn(index=i, query="q", response_text="", statements=(Statement("Short.", (1,)),))
        for i in (1, 2)
    )
    session = Session("s", turns, gold=Gold(citation_support=(({1: "full"},),)))
    first, second = gold_cited_statements(session) or []
    assert first == [S(True, (2,))]
    assert second == [S(True, (None,))]  # no gold for the second turn: unjudged, not 0
