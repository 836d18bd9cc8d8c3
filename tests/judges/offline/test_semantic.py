"""The offline twins' semantic evidence: the model loads from the installed wheel with no
network, recognises a restatement, and the lexical evidence stays the fallback."""

from __future__ import annotations

import socket

import pytest

from genir_eval.judges.offline import semantic
from genir_eval.judges.offline.citations import SEMANTIC_FULL, support_verdict
from genir_eval.judges.offline.features import link_evidence, source_alignment
from genir_eval.records import Link, Session, Statement, Turn

SOURCE = (
    "The data shows that workplace satisfaction, commitment, trust and reduced levels of "
    "turnover can be correlated with an employee's perceived level of justice in their "
    "workplace. Great Place to Work assesses several key components of fairness."
)
# the same claim in other words (a CrowdRAG LLM answer's sentence), and an unrelated one
RESTATED = (
    "An employee who believes the workplace is just tends to be satisfied, committed, "
    "trusting and to stay."
)
UNRELATED = "Volcanic eruptions release sulfur dioxide into the stratosphere."


@pytest.fixture
def lexical(monkeypatch):
    monkeypatch.setenv("GENIR_EVAL_OFFLINE_EVIDENCE", "lexical")


def test_the_model_loads_from_the_installed_wheel_without_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the semantic model must not open a connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    semantic._load.cache_clear()
    model = semantic.embedder()
    assert model is not None, "the test extra installs the semantic extra (wordllama)"
    assert semantic.available()
    assert semantic.evidence_name() == f"semantic ({semantic.SEMANTIC_MODEL})"
    vectors = model.encode([RESTATED, UNRELATED, ""])
    assert vectors.shape == (3, 256)
    assert vectors[0] @ vectors[0] == pytest.approx(1.0, abs=1e-5)
    assert not vectors[2].any()  # no token: the zero vector, not NaN


def test_a_restatement_is_closer_than_an_unrelated_statement():
    model = semantic.embedder()
    assert model is not None
    restated = semantic.best_match(model, RESTATED, SOURCE)
    unrelated = semantic.best_match(model, UNRELATED, SOURCE)
    assert restated > unrelated + 0.2


def test_support_sees_a_restatement_the_words_miss(lexical, monkeypatch):
    # lexical evidence: too few of the statement's words are in the source
    verdict, _, features = support_verdict(RESTATED, SOURCE)
    assert verdict == "none" and "semantic_similarity" not in features
    monkeypatch.delenv("GENIR_EVAL_OFFLINE_EVIDENCE")
    verdict, evidence, features = support_verdict(RESTATED, SOURCE)
    assert verdict in {"partial", "full"}
    assert evidence and evidence in SOURCE  # the closest passage, quoted as it stands
    assert features["semantic_similarity"] > 0.5
    # an unrelated statement stays unsupported, and a copy is fully supported either way
    assert support_verdict(UNRELATED, SOURCE)[0] == "none"
    copy = SOURCE.split(". ")[0] + "."
    assert support_verdict(copy, SOURCE)[0] == "full"
    # where the words are found the lexical checks stand: a missing name caps it at partial
    named = "Great Place to Work and Gallup assess several key components of fairness."
    assert support_verdict(named, SOURCE)[0] == "partial"
    assert "semantic_similarity" not in support_verdict(named, SOURCE)[2]
    assert SEMANTIC_FULL > 0.5


def test_a_number_the_source_lacks_is_still_unsupported():
    statement = "Fair practices cut employee turnover by 42 percent."
    assert support_verdict(statement, SOURCE)[0] == "none"


def _session(text: str | None, title: str = "") -> tuple[Session, Turn]:
    turn = Turn(
        index=1,
        query="how does justice apply at work",
        response_text=RESTATED,
        statements=(Statement(RESTATED, (1,)),),
        links=(Link(1, "doc#1", title, text),),
    )
    return Session("s", (turn,)), turn


def test_link_relevance_reads_the_source_text_when_there_is_one(lexical, monkeypatch):
    session, turn = _session(SOURCE)
    assert link_evidence(session, turn, 1).source_alignment is None  # lexical: title only
    monkeypatch.delenv("GENIR_EVAL_OFFLINE_EVIDENCE")
    evidence = link_evidence(session, turn, 1)
    assert evidence.source_alignment is not None and 0.0 < evidence.source_alignment <= 1.0
    assert evidence.relevance == max(evidence.title_alignment, evidence.source_alignment)
    # a link without a text (URGE's) keeps the title alone, so URGE's figures do not move
    session, turn = _session(None, title="justice at work")
    evidence = link_evidence(session, turn, 1)
    assert evidence.source_alignment is None
    assert evidence.relevance == evidence.title_alignment
    assert source_alignment("a need", "   ") is None


def test_forcing_lexical_evidence_says_so(lexical):
    assert semantic.embedder() is None
    assert not semantic.available()
    assert semantic.evidence_name() == "lexical"
