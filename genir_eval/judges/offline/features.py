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

The satisfaction twins read a response's :class:`TurnEvidence` instead: coverage of the
query's (and the intent's) key terms by the response and by its cited statements (key
terms as a standard analyser cuts them, :func:`key_terms`), citation support, length-free
layout clarity, distinct sources, and whether the next query re-asks this one
(:func:`reformulation`). None of them uses the user's feedback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from genir_eval.judges.offline.instructions import without_instructions
from genir_eval.records import Session, Statement, Turn

__all__ = [
    "char_ngrams",
    "coverage",
    "LinkEvidence",
    "link_evidence",
    "segment_alignment",
    "STOP_WORDS",
    "READABLE_BLOCK_SENTENCES",
    "key_terms",
    "term_coverage",
    "query_similarity",
    "reformulation",
    "citation_support",
    "sentence_count",
    "clarity",
    "copy_words",
    "word_grams",
    "synthesis",
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
    # semantic similarity of the source's text to query(+intent), when the log has the text
    # and the semantic extra is installed (genir_eval.judges.offline.semantic)
    source_alignment: float | None = None

    @property
    def relevance(self) -> float:
        """Title alignment: the source's own words (the citing statements are the engine's,
        written to fit the query whatever the source is worth, so they are shown to LLM
        judges but not counted here); the source text's semantic alignment with the need
        when it is known and higher (a passage can answer the query in other words than its
        title, or have no title at all)."""
        if self.source_alignment is None:
            return self.title_alignment
        return max(self.title_alignment, self.source_alignment)

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
    title = without_instructions(link.title) if link is not None else ""
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
        source_alignment=source_alignment(need, link.text if link is not None else None),
    )


def source_alignment(need: str, text: str | None) -> float | None:
    """How well a source's text answers ``need``: the cosine similarity, clipped to [0, 1], of
    the need with the source's best-matching sentence or pair of adjacent sentences under the
    semantic model; ``None`` without a text or without the model (the lexical fallback then
    reads the title alone, as before)."""
    from genir_eval.judges.offline.semantic import best_match, embedder

    model = embedder()
    if model is None or not text or not text.strip() or not need.strip():
        return None
    return max(0.0, min(1.0, best_match(model, need, text)))


def segment_alignment(session: Session, turn: Turn) -> list[float]:
    """For each segment of ``turn``, the share of its n-grams found in query + intent."""
    need = _need(session, turn)
    return [coverage(segment.text, need) for segment in turn.segments]


# Lucene's English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``): function words that
# carry no topic, so a query's "key terms" are the rest.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_WORD_RUN = re.compile(r"[^\W_]+", re.UNICODE)
# A block (non-empty line) of up to this many sentences, about a paragraph, reads at a glance;
# a longer undivided block is a wall of text. Sentences rather than clauses, so that the
# frequent Chinese comma does not count against Chinese text.
READABLE_BLOCK_SENTENCES = 5
_SENTENCE_END = re.compile(r"[。！？!?]+|(?<!\d)\.(?=\s|$)")


def key_terms(text: str) -> set[str]:
    """The content terms of ``text`` as a standard analyser cuts them: runs of CJK characters
    as overlapping character bigrams (a lone character as itself; Lucene's ``CJKAnalyzer``),
    other letters and digits as lower-cased words without :data:`STOP_WORDS` and single
    letters (Lucene's ``StandardAnalyzer``)."""
    terms: set[str] = set()
    for run in _WORD_RUN.findall((text or "").lower()):
        position = 0
        for match in _CJK.finditer(run):
            terms |= _words(run[position : match.start()])
            chars = match.group()
            terms |= (
                {chars} if len(chars) == 1 else {chars[i : i + 2] for i in range(len(chars) - 1)}
            )
            position = match.end()
        terms |= _words(run[position:])
    return terms


def _words(text: str) -> set[str]:
    if not text or text in STOP_WORDS or (len(text) == 1 and not text.isdigit()):
        return set()
    return {text}


def term_coverage(part: str, whole: str | set[str]) -> float:
    """Share of ``part``'s key terms found in ``whole`` (0 when ``part`` has none)."""
    terms = key_terms(part)
    if not terms:
        return 0.0
    found = whole if isinstance(whole, set) else key_terms(whole)
    return len(terms & found) / len(terms)


def query_similarity(first: str, second: str) -> float:
    """Jaccard similarity of two queries' key terms (0 when either has none)."""
    a, b = key_terms(first), key_terms(second)
    return len(a & b) / len(a | b) if a and b else 0.0


def reformulation(session: Session, turn: Turn) -> float | None:
    """How closely the session's next query repeats ``turn``'s: the Jaccard similarity of their
    key terms, ``None`` for the last turn. Re-asking much the same query is the classic
    session-level sign that the previous answer did not satisfy (Hassan et al., "Beyond
    clicks: query reformulation as a predictor of search satisfaction", CIKM 2013); a topic
    shift shares no terms and gives 0, no evidence either way."""
    position = _turn_position(session, turn)
    if position + 1 >= len(session.turns):
        return None
    return query_similarity(turn.query, session.turns[position + 1].query)


def citation_support(turn: Turn) -> float:
    """Share of the response's statement text that carries a citation: how much of the answer
    rests on sources (statements are cut at citation marks, so uncited text forms long
    statements; weighing by characters counts it for what it is)."""
    total = sum(len(s.text) for s in turn.statements)
    if not total:
        return 0.0
    return sum(len(s.text) for s in turn.statements if s.citations) / total


def sentence_count(text: str) -> int:
    """Sentences of ``text``: pieces ending at a Chinese or Western sentence mark (a full stop
    after a digit is a list number or a decimal point, not an end)."""
    return sum(1 for piece in _SENTENCE_END.split(text or "") if any(c.isalnum() for c in piece))


def clarity(text: str) -> float:
    """Length-free readability of the layout: ``min(1, READABLE_BLOCK_SENTENCES / mean
    sentences per block)``. A short answer and a long list both score 1; only long undivided
    blocks lose."""
    blocks = [line for line in (text or "").splitlines() if line.strip()]
    if not blocks:
        return 0.0
    sentences = sum(max(1, sentence_count(block)) for block in blocks)
    return min(1.0, READABLE_BLOCK_SENTENCES * len(blocks) / sentences)


#: Words in a row that, found verbatim in a cited source, count as copied: five is about the
#: shortest run that is seldom shared by chance between two texts on one topic.
COPY_GRAM = 5
_COPY_TOKEN = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+"
)
# numbers split by a comma or semicolon, or by spaces: each stretch read one way only (with
# the separator optional, a run of digits split in exponentially many ways)
_CITATION_MARK = re.compile(r"\[\s*\d+(?:(?:\s*[,;]\s*|\s+)\d+)*\s*\]")


def copy_words(text: str) -> list[str]:
    """``text`` as the copy test reads it: lower-cased words, each CJK character one word
    (Chinese and Japanese have no spaces; a run of five characters is about two words)."""
    return _COPY_TOKEN.findall((text or "").lower())


def word_grams(words: list[str]) -> list[tuple[str, ...]]:
    """The :data:`COPY_GRAM`-word runs of ``words`` in order."""
    return list(zip(*(words[i:] for i in range(COPY_GRAM)), strict=False))


def synthesis(turn: Turn) -> float | None:
    """The share of the response's :data:`COPY_GRAM`-word runs that are *not* found verbatim
    in the text of the sources it cites: 1 for an answer in its own words, 0 for one pasted
    from its sources. ``None`` when no cited source has its text in the log (nothing to
    compare with) or the response is shorter than one run."""
    cited = set(turn.cited_link_ids)
    texts = [link.text for link in turn.links if link.id in cited and link.has_text]
    if not texts:
        return None
    grams = word_grams(copy_words(_CITATION_MARK.sub(" ", turn.response_text)))
    if not grams:
        return None
    source_grams: set[tuple[str, ...]] = set()
    for text in texts:
        source_grams.update(word_grams(copy_words(str(text))))
    return 1.0 - sum(map(source_grams.__contains__, grams)) / len(grams)


@dataclass(frozen=True)
class TurnEvidence:
    """The log's evidence about one response, each value in ``[0, 1]`` (``None`` when the log
    cannot tell)."""

    query_coverage: float  # query key terms the response covers
    intent_alignment: float  # intent key terms the response covers (query's without intent)
    cited_coverage: float  # query key terms the cited statements cover
    citation_support: float  # share of the statement text carrying a citation
    clarity: float  # layout readability, independent of length
    source_count: float  # 1 - 2^-(links/2): distinct sources cited
    reformulation: float | None  # similarity of the next query to this one; None if last
    # share of the response not pasted from its cited sources (None without their text)
    synthesis: float | None = None

    @property
    def not_reasked(self) -> float:
        """``1 - reformulation``: 1 when the user moved on or the session ended, 0 when the
        next query repeats this one."""
        return 1.0 - (self.reformulation or 0.0)


def turn_evidence(session: Session, turn: Turn) -> TurnEvidence:
    """Evidence about the response of ``turn`` (see :class:`TurnEvidence`)."""
    text = turn.response_text
    response_terms = key_terms(text)
    cited_terms = key_terms(" ".join(s.text for s in turn.statements if s.citations))
    query_coverage = term_coverage(turn.query, response_terms)
    intent = (session.intent or "").strip()
    return TurnEvidence(
        query_coverage=query_coverage,
        intent_alignment=term_coverage(intent, response_terms) if intent else query_coverage,
        cited_coverage=term_coverage(turn.query, cited_terms),
        citation_support=citation_support(turn),
        clarity=clarity(text),
        source_count=1.0 - 2.0 ** (-len(turn.cited_link_ids) / 2.0),
        reformulation=reformulation(session, turn),
        synthesis=synthesis(turn),
    )
