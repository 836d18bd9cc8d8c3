"""Citation measures: do a response's citations support the statements that cite them?

Inputs are, per turn, its statements as :class:`CitedStatement`: whether the statement needs
support and the support each of its citations gives it on TREC 2024 RAG's scale (Upadhyay
et al. 2024, support assessment: 2 full, 1 partial, 0 none; ``None`` when not judged).

- ``citation-precision(partial=w)``: the share of judged citations that support the
  statement citing them, full support counting 1 and partial ``w`` (Gao et al. 2023, ALCE;
  Liu et al. 2023, "Evaluating Verifiability in Generative Search Engines"). Each citation
  is judged on its own, as TREC 2024 RAG does, rather than by ALCE's leave-one-out test.
- ``citation-recall(partial=w)``: the share of statements needing support that their
  citations support: a statement counts its best citation (1 full, ``w`` partial, 0 none),
  and a claim without any citation counts 0. A statement whose citations were all left
  unjudged is left out (unknown, not unsupported).
- ``unsupported-claims``: the share of statements needing support that no citation
  supports even partially (uncited claims included); it equals
  ``1 - citation-recall(partial=1)``, the figure answer-engine audits quote.

Which statements need support (:func:`needs_support`): every cited statement, and an
uncited one that reads as a claim (it has a digit, or at least six words, or ten CJK
characters) and does not end with ``:`` or ``?`` (a lead-in or a question back). A reply
that only asks the user a clarifying question (:func:`asks_back`: no citation, no number, a
statement ending with ``?``) makes no claim at all, so none of its statements needs support
("Which model do you have? I can walk you through it then." is not an unsupported claim). A turn's
value pools its statements; a session's pools all its turns' (a share of the session's
citations, not a mean of turn shares). Nothing to count gives ``None``, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from genir_eval.metrics.measures import Measure, _require
from genir_eval.records import CITATION_SUPPORT, SUPPORT_VALUE, Session, Statement, Turn

__all__ = [
    "CitedStatement",
    "needs_support",
    "asks_back",
    "cited_statements",
    "gold_cited_statements",
    "CitationMeasure",
    "CitationPrecision",
    "CitationRecall",
    "UnsupportedClaims",
    "CITATION_MEASURES",
    "DEFAULT_CITATION_MEASURES",
]

_WORD = re.compile(r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LEAD_IN = (":", "：", "?", "？")


@dataclass(frozen=True)
class CitedStatement:
    """A statement as the citation measures see it: whether it needs support, and the
    support (0-2, ``None`` unjudged) each of its citations gives it, in citation order."""

    needs_support: bool
    support: tuple[int | None, ...] = ()


def needs_support(statement: Statement) -> bool:
    """Whether ``statement`` needs a supporting source (see the module docstring)."""
    if statement.citations:
        return True
    text = statement.text.strip()
    if not text or text.endswith(_LEAD_IN):
        return False
    if any(ch.isdigit() for ch in text):
        return True
    return len(_WORD.findall(text)) >= 6 or len(_CJK.findall(text)) >= 10


def asks_back(turn: Turn) -> bool:
    """Whether the reply only asks the user a clarifying question: it cites nothing, states
    no number, and one of its statements is a question."""
    statements = [s for s in turn.statements if s.text.strip()]
    return (
        bool(statements)
        and not any(s.citations for s in statements)
        and not any(ch.isdigit() for s in statements for ch in s.text)
        and any(s.text.strip().endswith(("?", "？")) for s in statements)
    )


def cited_statements(
    turn: Turn, support: Mapping[tuple[int, int], int | None]
) -> list[CitedStatement]:
    """The turn's statements with the support of each citation from ``support``, keyed by
    (1-based statement position, citation id); a clarifying question needs none."""
    question = asks_back(turn)
    return [
        CitedStatement(
            needs_support(statement) and not question,
            tuple(support.get((position, cid)) for cid in statement.citations),
        )
        for position, statement in enumerate(turn.statements, start=1)
    ]


def gold_cited_statements(session: Session) -> list[list[CitedStatement]] | None:
    """Per turn, the statements with the gold support labels (``gold.citation_support``);
    ``None`` when the session has none."""
    gold = session.gold.citation_support if session.gold is not None else None
    if gold is None:
        return None
    out = []
    for position, turn in enumerate(session.turns):
        per_statement = gold[position] if position < len(gold) else ()
        support: dict[tuple[int, int], int | None] = {}
        for s_position, verdicts in enumerate(per_statement, start=1):
            for cid, verdict in verdicts.items():
                support[(s_position, cid)] = SUPPORT_VALUE.get(verdict)
        out.append(cited_statements(turn, support))
    return out


class CitationMeasure(Measure):
    """A measure of citation support, pooled over the statements of the given turns."""

    LEVEL = "citation"
    RANGE = "0-1 (a share of citations or statements)"
    EVIDENCE = CITATION_SUPPORT

    def compute(self, turns: Sequence[Sequence[CitedStatement]]) -> float | None:
        gains: list[float] = []
        for statements in turns:
            for statement in statements:
                gains.extend(self._gains(statement))
        return sum(gains) / len(gains) if gains else None

    def _gains(self, statement: CitedStatement) -> list[float]:
        raise NotImplementedError

    def _weight(self, value: int) -> float:
        partial: float = getattr(self, "partial", 1.0)
        return 1.0 if value >= 2 else partial if value == 1 else 0.0


@dataclass(frozen=True, repr=False)
class CitationPrecision(CitationMeasure):
    """Share of judged citations supporting their statement (partial counts ``partial``)."""

    NAME: ClassVar[str] = "citation-precision"
    SHORT: ClassVar[str] = "citation_precision"
    SUMMARY = (
        "the share of citations that support the statement citing them (a partial support "
        "counts `partial`), pooled over the statements of a turn or session (after ALCE)"
    )
    partial: float = 0.5

    def _validate(self) -> None:
        _require(0.0 <= self.partial <= 1.0, self, "partial must be in [0, 1]")

    def _gains(self, statement: CitedStatement) -> list[float]:
        return [self._weight(v) for v in statement.support if v is not None]


@dataclass(frozen=True, repr=False)
class CitationRecall(CitationMeasure):
    """Share of statements needing support that their best citation supports."""

    NAME: ClassVar[str] = "citation-recall"
    SHORT: ClassVar[str] = "citation_recall"
    SUMMARY = (
        "the share of statements needing support that their best citation supports, pooled "
        "over the statements of a turn or session (after ALCE)"
    )
    partial: float = 0.5

    def _validate(self) -> None:
        _require(0.0 <= self.partial <= 1.0, self, "partial must be in [0, 1]")

    def _gains(self, statement: CitedStatement) -> list[float]:
        if not statement.needs_support:
            return []
        if not statement.support:
            return [0.0]
        judged = [v for v in statement.support if v is not None]
        return [max(self._weight(v) for v in judged)] if judged else []


@dataclass(frozen=True, repr=False)
class UnsupportedClaims(CitationMeasure):
    """Share of statements needing support with no citation supporting them at all."""

    NAME: ClassVar[str] = "unsupported-claims"
    SHORT: ClassVar[str] = "unsupported_claims"
    HIGHER_IS_BETTER: ClassVar[bool] = False
    SUMMARY = (
        "the share of statements needing support that no citation supports at all, over the "
        "statements of a turn or session"
    )

    def _gains(self, statement: CitedStatement) -> list[float]:
        if not statement.needs_support:
            return []
        if not statement.support:
            return [1.0]
        judged = [v for v in statement.support if v is not None]
        return [0.0 if max(judged) >= 1 else 1.0] if judged else []


#: What a citation judge is scored with when the scenario names no citation measure.
DEFAULT_CITATION_MEASURES: tuple[str, ...] = (
    "citation_precision",
    "citation_recall",
    "unsupported_claims",
)

CITATION_MEASURES: dict[str, type[Measure]] = {
    cls.SHORT: cls for cls in (CitationPrecision, CitationRecall, UnsupportedClaims)
}
"""Citation measures by short name (``parse_measure`` reads them too)."""
