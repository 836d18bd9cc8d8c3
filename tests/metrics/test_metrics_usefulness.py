"""Statement usefulness u_k from link labels, on tiny inline sessions."""

from __future__ import annotations

from genir_eval.metrics import gold_statement_usefulness, statement_usefulness
from genir_eval.records import Gold, Session, Statement, Turn


def _turn(index: int, *citations: tuple[int, ...]) -> Turn:
    return Turn(
        index=index,
        query=f"q{index}",
        response_text="",
        statements=tuple(Statement(text=f"s{i}", citations=c) for i, c in enumerate(citations)),
    )


def test_statement_value_is_best_cited_link_and_unlabelled_citations_are_missing():
    turn = _turn(1, (1, 2), (), (3,), (4,), (4, 3))
    # Source: by hand. max(1, 3) = 3; the uncited statement is skipped; link 3 -> 0;
    # only link 4 (unlabelled) -> statement left out; (4, 3) -> the labelled one, 0.
    assert statement_usefulness(turn, {1: 1, 2: 3, 3: 0}) == [3.0, 0.0, 0.0]


def test_turn_without_citations_gives_its_response_level_value_or_nothing():
    turn = _turn(1, ())
    assert statement_usefulness(turn, {}) == []
    assert statement_usefulness(turn, {}, no_citation_value=2) == [2.0]


def test_gold_usefulness_uses_link_labels_then_citation_usefulness_for_uncited_turns():
    session = Session(
        session_id="s",
        turns=(_turn(1, (1,), (2, 1)), _turn(2, ()), _turn(3, ())),
        gold=Gold(
            link_usefulness=({1: 2, 2: 3}, {}, {}),
            citation_usefulness=(((2,), (3, 2)), ((1,),)),
        ),
    )
    # Source: by hand. Turn 1 from link labels; turn 2 has no citations, so the dataset's
    # single response-level value 1; turn 3 has no label at all.
    assert gold_statement_usefulness(session) == [[2.0, 3.0], [1.0], []]


def test_session_without_statements_falls_back_to_per_statement_gold_values():
    session = Session(
        session_id="s",
        turns=(_turn(1), _turn(2)),
        gold=Gold(citation_usefulness=(((3, 2), (), (1,)), ((0,),))),
    )
    # Source: by hand: statement maxima, statements without values skipped.
    assert gold_statement_usefulness(session) == [[3.0, 1.0], [0.0]]


def test_session_without_gold_has_empty_lists():
    session = Session(session_id="s", turns=(_turn(1, (1,)), _turn(2)))
    assert gold_statement_usefulness(session) == [[], []]
