"""The citation-support twin reads a statement claim by claim, against its citations
together (after ALCE), with the turn's uncited sources as the rank test's rivals: a statement
synthesising two passages is supported like one copying a sentence, and a citation that
supports none of the claims is not."""

from __future__ import annotations

import json

import pytest
from judge_helpers import run_judge

from genir_eval.judges.offline.citations import (
    VOCABULARY_SOURCES,
    claim_support,
    claims,
    negated_terms,
    support_verdict,
)
from genir_eval.records import Link, Session, Statement, Turn

# two passages, each holding one of the statement's two claims (invented for the test)
PAY = "Distributive justice is the perceived fairness of how pay and promotions are shared."
VOICE = "Procedural justice asks whether decision processes are transparent and consistent."
SYNTHESIS = (
    "Distributive justice concerns the fairness of pay and promotions. "
    "Procedural justice concerns transparent and consistent decision processes."
)
UNRELATED = [
    "Volcanic eruptions release sulfur dioxide into the stratosphere.",
    "The tomato originated in western South America.",
    "A marathon covers a little over forty-two kilometres.",
    "Honey bees communicate the direction of flowers by dancing.",
]


@pytest.fixture
def lexical(monkeypatch):
    monkeypatch.setenv("GENIR_EVAL_OFFLINE_EVIDENCE", "lexical")


# (statement, claims): computed by hand from the rule "sentences (and lines) with two key
# terms or more"
CLAIM_CASES = [
    (SYNTHESIS, SYNTHESIS.split(" Procedural")[0:1] + ["Procedural" + SYNTHESIS.split(" Procedural")[1]]),
    ("In short:\nParis hosts the Louvre museum.", ["Paris hosts the Louvre museum."]),
    ("Yes.", ["Yes."]),  # no sentence makes a claim: the statement is the one claim
]  # fmt: skip


@pytest.mark.parametrize(("statement", "expected"), CLAIM_CASES)
def test_claims_are_the_sentences_that_say_something(statement: str, expected: list[str]):
    assert claims(statement) == expected


def test_a_statement_joining_two_sources_is_supported_by_both_together(lexical):
    # each source alone holds one claim of two: partial; read with the other citation, the
    # statement is fully supported and both citations get the credit (ALCE)
    assert support_verdict(SYNTHESIS, PAY)[0] == "partial"
    assert support_verdict(SYNTHESIS, VOICE)[0] == "partial"
    verdict, evidence, features = support_verdict(SYNTHESIS, PAY, cited=[VOICE])
    assert verdict == "full" and evidence in PAY
    assert features["claims"] == 2 and features["claims_supported"] == 1
    assert features["claims_full_by_citations"] == 2
    assert support_verdict(SYNTHESIS, VOICE, cited=[PAY])[0] == "full"


def test_a_citation_that_supports_no_claim_gets_no_credit_from_the_others(lexical):
    verdict, evidence, features = support_verdict(SYNTHESIS, UNRELATED[0], cited=[PAY, VOICE])
    assert (verdict, evidence) == ("none", "")
    assert features["claims_supported"] == 0 and features["claims_full_by_citations"] == 2


def test_a_claim_the_citations_leave_short_keeps_the_statement_partial(lexical):
    statement = SYNTHESIS + " Interactional justice requires dignity and respect from managers."
    assert support_verdict(statement, PAY, cited=[VOICE])[0] == "partial"


def test_a_number_or_a_close_negation_still_makes_a_claim_unsupported(lexical):
    assert claim_support("Pay rose by 42 percent.", [PAY]).level == 0
    source = "Procedural justice does not ask whether decision processes are transparent."
    assert claim_support(
        "Procedural justice asks whether decision processes are transparent.", [source]
    ).features["negation_mismatch"]


# (text, the words it denies), by hand from the rule: "no", "none", "neither" and "nor" deny
# the phrase after them (three content words within the clause), "not", "n't", "never",
# "cannot" and "without" the first content word; "not only ... but also" and "whether or
# not" affirm, by the words' meaning
NEGATION_CASES = [
    ("Fairness matters not only for morale but also for productivity.", set()),
    ("The goal was not solely to win but to destabilise.", set()),
    ("It works whether or not the manager is present.", set()),
    ("No matter the pay, people want respect.", set()),
    ("Employees do not trust the process.", {"trust"}),
    ("They are not being treated fairly, and leave.", {"treated"}),
    ("I don\u2019t think people should take kindly to it.", {"think"}),  # a typographic apostrophe
    ("No further security fixes are made for it.", {"further", "security", "fixes"}),
    ("Without fair pay, employees leave.", {"fair"}),
    ("他不喜欢咖啡", {"喜欢"}),
]


@pytest.mark.parametrize(("text", "expected"), NEGATION_CASES)
def test_what_a_negation_denies(text: str, expected: set[str]):
    assert negated_terms(text) == expected


def test_a_negation_contradicts_what_the_sentence_before_names(lexical):
    source = "Python 2 reached its end of life in 2020. No further security fixes are made for it."
    support = claim_support("Python 2 still receives security fixes.", [source])
    assert support.features["negation_mismatch"] and support.level == 0


def test_a_quote_is_not_contradicted_by_a_denial_in_the_next_sentence(lexical):
    # the passage's second sentence denies "paying" as the first affirms it: a parity count
    # over the whole passage found a contradiction in the verbatim quote
    quote = "Labour said those who avoid paying tax should not tell people how to vote."
    source = f"{quote} Its leader said: \u201cI don\u2019t pay attention to such donors.\u201d"
    for claim in (quote, quote.replace("should not", "shouldn\u2019t")):
        support = claim_support(claim, [source])
        assert not support.features["negation_mismatch"] and support.level == 2, claim


def test_a_denial_of_a_word_the_claim_only_mentions_is_not_a_contradiction(lexical):
    # the next sentence shares one word with the claim ("justice") and denies it; it speaks
    # of something else
    source = (
        "Employees who feel treated unfairly lose motivation and engage in destructive "
        "practices. An office without justice loses its best staff."
    )
    claim = "Justice matters: employees treated unfairly lose motivation and engage in destructive practices."
    support = claim_support(claim, [source])
    assert not support.features["negation_mismatch"] and support.level == 2


def test_a_negation_in_a_passage_sharing_few_of_the_words_is_not_a_contradiction(lexical):
    # the passage shares "distributive justice" and "pay" and denies something else
    source = "Distributive justice covers pay. Bonuses are not shared with interns."
    support = claim_support("Distributive justice covers pay and promotion decisions.", [source])
    assert not support.features["negation_mismatch"] and support.level == 1


def test_words_no_source_uses_are_wording_only_in_a_turn_with_enough_sources(lexical):
    statement = "Distributive justice crucially and pivotally underpins fairness of pay."
    few = claim_support(statement, [PAY], UNRELATED[: VOCABULARY_SOURCES - 3])
    many = claim_support(statement, [PAY], UNRELATED[: VOCABULARY_SOURCES - 1])
    assert few.features["own_words"] == 0 and few.level == 1
    # "crucially", "pivotally", "underpins": 4 of 7 terms, and all 4 in the source
    assert many.features["own_words"] == 3 and many.level == 2


RESTATED_SOURCE = (
    "The data shows that workplace satisfaction, commitment, trust and reduced levels of "
    "turnover can be correlated with an employee's perceived level of justice in their "
    "workplace."
)
RESTATED = (
    "An employee who believes the workplace is just tends to be satisfied, committed, "
    "trusting and to stay."
)


def test_meaning_with_a_rank_test_against_the_uncited_sources():
    # the words miss the restatement; its meaning is closest to the cited passage, so it is
    # supported; cited as one of several passages saying the same, no longer the closest
    support = claim_support(RESTATED, [RESTATED_SOURCE], UNRELATED)
    assert support.level >= 1 and support.evidence in RESTATED_SOURCE
    assert support.features["closer_than_uncited"] == 1.0
    rivals = [*UNRELATED, RESTATED_SOURCE + " It was measured in 2019."]
    against = claim_support(RESTATED, [UNRELATED[1]], rivals)
    assert against.level == 0 and against.features["closer_than_uncited"] < 0.5


def _session() -> Session:
    links = (
        Link(1, "doc#pay", "", PAY),
        Link(2, "doc#voice", "", VOICE),
        Link(3, "x", "", UNRELATED[0]),
    )
    turn = Turn(
        index=1,
        query="how does justice apply at work",
        response_text=SYNTHESIS,
        statements=(Statement(SYNTHESIS, (1, 2, 3)),),
        links=links,
    )
    return Session("justice", (turn,))


def test_the_twin_reads_the_statements_other_citations_from_the_turn(lexical):
    _, labels = run_judge(None, "citation_support", [_session()])
    by = {lb.key.item: lb for lb in labels}
    assert [by[f"cite:1:{i}"].extra["support"] for i in (1, 2, 3)] == ["full", "full", "none"]
    assert "2 claims" in json.loads(by["cite:1:1"].raw)["reason"]
