"""What a log says about a link, a segment or a turn without any model: the offline twins'
evidence.

All features are in ``[0, 1]`` with fixed, a-priori transforms (no constant is fitted to
data), grouped as TRUE groups its signals (Dewan et al., "TRUE: A Reproducible Framework for
LLM-Driven Relevance Judgment", 2025):

- *relevance-like*: lexical alignment of the link's title, and of the statements citing it,
  with the query and the session's intent, as character n-gram coverage (Chinese has no
  word boundaries; character bigrams are the usual unit for it);
- *behaviour* of the answer engine: how much of the response rests on the link (citation
  credit, each statement's credit shared among the links it cites) and how early it is
  first cited;
- *satisfaction* (feedback, only when a judge enables it): the user's query satisfaction and
  whether the citing statements contain text the user marked useful.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from genir_eval.records import Session, Statement, Turn

__all__ = [
    "char_ngrams",
    "coverage",
    "LinkEvidence",
    "link_evidence",
    "segment_alignment",
    "TurnEvidence",
    "turn_evidence",
]

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def char_ngrams(text: str, n: int = 2) -> set[str]:
    """Character ``n``-grams of ``text`` lower-cased, punctuation and spaces removed."""
    compact = _NON_WORD.sub("", (text or "").lower())
    if len(compact) < n:
        return {compact} if compact else set()
    return {compact[i : i + n] for i in range(len(compact) - n + 1)}


def coverage(part: str, whole: str, n: int = 2) -> float:
    """Share of ``part``'s n-grams found in ``whole`` (0 when ``part`` has none)."""
    grams = char_ngrams(part, n)
    if not grams:
        return 0.0
    return len(grams & char_ngrams(whole, n)) / len(grams)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def _need(session: Session, turn: Turn) -> str:
    return f"{turn.query} {session.intent or ''}".strip()


@dataclass(frozen=True)
class LinkEvidence:
    """The log's evidence about one cited link, each value in ``[0, 1]``."""

    link_id: int
    citation_count: int
    citation_credit: float  # 1 - 2^-credit: one sole citation 0.5, two 0.75, ...
    position: float  # 1 for the first link cited, falling linearly to 1/n for the last
    title_alignment: float  # mean of the two coverage directions, title vs query(+intent)
    statement_alignment: float  # query+intent n-grams covered by the citing statements
    query_satisfaction: float | None  # (q - 1) / 4 for a 1-5 rating, if known
    span_overlap: float | None  # share of the user's useful marks inside citing statements

    @property
    def relevance(self) -> float:
        """Title alignment: the source's own words (the citing statements are the engine's,
        written to fit the query whatever the source is worth, so they are shown to LLM
        judges but not counted here)."""
        return self.title_alignment

    @property
    def behaviour(self) -> float:
        return _mean([self.citation_credit, self.position])

    @property
    def satisfaction(self) -> float | None:
        values = [v for v in (self.query_satisfaction, self.span_overlap) if v is not None]
        return _mean(values) if values else None


def _citing(turn: Turn, link_id: int) -> list[Statement]:
    return [s for s in turn.statements if link_id in s.citations]


def _turn_position(session: Session, turn: Turn) -> int:
    for position, candidate in enumerate(session.turns):
        if candidate is turn or candidate.index == turn.index:
            return position
    return turn.index - 1


def query_satisfaction(session: Session, turn: Turn) -> float | None:
    """The user's rating of ``turn`` scaled to ``[0, 1]`` (URGE rates 1-5)."""
    gold = session.gold
    if gold is None or gold.query_satisfaction is None:
        return None
    position = _turn_position(session, turn)
    if position >= len(gold.query_satisfaction):
        return None
    value = gold.query_satisfaction[position]
    return None if value is None else min(1.0, max(0.0, (float(value) - 1.0) / 4.0))


def user_marks(session: Session, turn: Turn) -> tuple[str, ...] | None:
    """Text units the user marked useful in ``turn`` (``None`` when not collected)."""
    gold = session.gold
    if gold is None or gold.useful_spans_user is None:
        return None
    position = _turn_position(session, turn)
    if position >= len(gold.useful_spans_user):
        return None
    return tuple(m.strip() for m in gold.useful_spans_user[position] if m.strip())


def link_evidence(session: Session, turn: Turn, link_id: int) -> LinkEvidence:
    """Evidence about link ``link_id`` of ``turn`` (see the module docstring)."""
    order = list(turn.cited_link_ids)
    citing = _citing(turn, link_id)
    credit = sum(1.0 / len(s.citations) for s in citing)
    position = 1.0 - order.index(link_id) / len(order) if link_id in order else 0.0
    link = turn.link(link_id)
    title = link.title if link is not None else ""
    need = _need(session, turn)
    citing_text = " ".join(s.text for s in citing)
    title_alignment = _mean([coverage(turn.query, title), coverage(title, need)])
    marks = user_marks(session, turn)
    span_overlap: float | None = None
    if marks is not None:
        span_overlap = sum(1 for m in marks if m in citing_text) / len(marks) if marks else 0.0
    return LinkEvidence(
        link_id=link_id,
        citation_count=len(citing),
        citation_credit=1.0 - 2.0 ** (-credit),
        position=position,
        title_alignment=title_alignment,
        statement_alignment=coverage(need, citing_text),
        query_satisfaction=query_satisfaction(session, turn),
        span_overlap=span_overlap,
    )


def segment_alignment(session: Session, turn: Turn) -> list[float]:
    """For each segment of ``turn``, the share of its n-grams found in query + intent."""
    need = _need(session, turn)
    return [coverage(segment.text, need) for segment in turn.segments]


@dataclass(frozen=True)
class TurnEvidence:
    """The log's evidence about one response, each value in ``[0, 1]``."""

    answer_alignment: float  # query n-grams the response covers
    intent_alignment: float  # query+intent n-grams the response covers
    grounding: float  # share of statements carrying a citation
    structure: float  # 1 when the response is organised in several lines/blocks
    source_count: float  # 1 - 2^-(links/2): distinct sources cited

    @property
    def mean(self) -> float:
        """How well the response meets the need: alignment with the query and the intent,
        and grounding. Structure and the number of sources are left out: they track length,
        which URGE's rubric says not to reward."""
        return _mean([self.answer_alignment, self.intent_alignment, self.grounding])


def turn_evidence(session: Session, turn: Turn) -> TurnEvidence:
    text = turn.response_text
    statements: Sequence[Statement] = turn.statements
    grounded = sum(1 for s in statements if s.citations)
    lines = [line for line in text.splitlines() if line.strip()]
    return TurnEvidence(
        answer_alignment=coverage(turn.query, text),
        intent_alignment=coverage(_need(session, turn), text),
        grounding=grounded / len(statements) if statements else 0.0,
        structure=min(1.0, max(0.0, (len(lines) - 1) / 4.0)),
        source_count=1.0 - 2.0 ** (-len(turn.cited_link_ids) / 2.0),
    )
