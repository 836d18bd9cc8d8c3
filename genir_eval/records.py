"""Typed, immutable records for generative search sessions.

A :class:`Session` is what every stage of genir-eval passes along: ingest builds it from
logs, judges label it, metrics score it, meta-evaluation compares those scores with its
:class:`Gold` annotations. Field names follow the canonical JSONL contract documented in
the README; :func:`session_to_dict` / :func:`session_from_dict` are a lossless round trip.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from genir_eval.kind_names import CITATION_SUPPORT as CITATION_FIELD
from genir_eval.kind_names import LINK_USEFULNESS as LINK_FIELD
from genir_eval.kind_names import NUGGET_GOLD

SCHEMA_VERSION = 1
#: genir-eval's own version (``pyproject.toml``'s): what ``genir-eval --version`` prints,
#: ``genir_eval.__version__`` is, and every run's ``run.json`` records beside the schema's.
PACKAGE_VERSION = "0.1.0"
#: TREC 2024 RAG's support scale, strongest first (gold ``citation_support`` values).
SUPPORT_LEVELS = ("full", "partial", "none")
#: The same scale as numbers, the values of citation support labels (2 full, 1, 0 none).
SUPPORT_VALUE: Mapping[str, int] = {"full": 2, "partial": 1, "none": 0}
#: TREC 2024 RAG's nugget importance, most important first.
NUGGET_IMPORTANCE = ("vital", "okay")
#: TREC 2024 RAG's assignment of a nugget to an answer, strongest first.
NUGGET_ASSIGNMENTS = ("support", "partial_support", "not_support")

__all__ = [
    "SCHEMA_VERSION",
    "PACKAGE_VERSION",
    "SUPPORT_LEVELS",
    "SUPPORT_VALUE",
    "NUGGET_IMPORTANCE",
    "NUGGET_ASSIGNMENTS",
    "Statement",
    "Link",
    "Segment",
    "Turn",
    "Dissatisfaction",
    "Gold",
    "Session",
    "session_to_dict",
    "session_from_dict",
    "THUMBS_TEXT",
    "THUMBS_VALUE",
    "is_blank",
    "EVIDENCE_KINDS",
    "EvidenceKind",
    "LINK_USEFULNESS",
    "CITATION_SUPPORT",
    "NUGGETS",
    "SATISFACTION",
    "PREFERENCE",
    "USEFUL_SPANS",
    "RUBRIC",
    "evidence_kind",
]


def is_blank(text: str | None) -> bool:
    """Whether ``text`` holds nothing to read: ``None``, empty, or only whitespace and
    invisible format characters (a zero-width space, a byte-order mark). A source text that
    is blank is no source text: it neither counts as one nor hides one given apart."""
    if not text:
        return True
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


@dataclass(frozen=True)
class Statement:
    """A piece of a response closed by its citations (``citations`` in reading order)."""

    text: str
    citations: tuple[int, ...] = ()


@dataclass(frozen=True)
class Link:
    """A cited source: the citation number shown in the response, its url and title.

    ``text`` is the passage or page extract the engine retrieved for it, when the log has
    it (``None`` otherwise): what citation support is judged against."""

    id: int
    url: str
    title: str
    text: str | None = None

    @property
    def has_text(self) -> bool:
        """Whether the link has a source text to judge against (not a blank one)."""
        return not is_blank(self.text)


@dataclass(frozen=True)
class Segment:
    """A punctuation-delimited text unit of ``response_text`` (``start``/``end`` offsets)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Turn:
    """One query and the engine's response to it; ``index`` is 1-based."""

    index: int
    query: str
    response_text: str
    statements: tuple[Statement, ...] = ()
    links: tuple[Link, ...] = ()
    segments: tuple[Segment, ...] = ()

    def link(self, link_id: int) -> Link | None:
        for link in self.links:
            if link.id == link_id:
                return link
        return None

    @property
    def cited_link_ids(self) -> tuple[int, ...]:
        """Ids of the links cited by at least one statement, in order of first citation."""
        seen: dict[int, None] = {}
        for statement in self.statements:
            for cid in statement.citations:
                seen.setdefault(cid, None)
        return tuple(seen)


@dataclass(frozen=True)
class Dissatisfaction:
    """The user's reasons for dissatisfaction (URGE ``dis_sat_reason``)."""

    choices: tuple[str, ...] = ()
    additional: str = ""


@dataclass(frozen=True)
class Gold:
    """Human labels attached to a session; every field is optional.

    Per-turn fields are tuples indexed by turn position (turn ``index`` - 1).
    ``link_usefulness`` maps citation id to a 0-3 label (URGE expert annotators);
    ``citation_usefulness`` lists, per statement, the labels of its citations;
    useful spans are the text units marked useful by the user or by annotators;
    ``citation_support`` gives, per statement (in statement order), the support each cited
    link gives it on TREC 2024 RAG's scale (``"full"``, ``"partial"`` or ``"none"``), keyed
    by citation id.
    ``thumbs`` is the user's per-turn binary feedback as products collect it (1 = thumbs up,
    0 = thumbs down, ``None`` = none given) and ``feedback_text`` their free-text comment.
    ``nugget_assignments`` gives, per turn, people's label of each nugget of the turn's query
    (its id in the nugget file) on TREC 2024 RAG's scale (``support``, ``partial_support``,
    ``not_support``), ``None`` for a turn not labelled.
    """

    session_satisfaction: float | None = None
    query_satisfaction: tuple[float | None, ...] | None = None
    link_usefulness: tuple[Mapping[int, int], ...] | None = None
    citation_usefulness: tuple[tuple[tuple[int, ...], ...], ...] | None = None
    useful_spans_user: tuple[tuple[str, ...], ...] | None = None
    useful_spans_external: tuple[tuple[str, ...], ...] | None = None
    dissatisfaction: Dissatisfaction | None = None
    citation_support: tuple[tuple[Mapping[int, str], ...], ...] | None = None
    thumbs: tuple[int | None, ...] | None = None
    feedback_text: tuple[str | None, ...] | None = None
    nugget_assignments: tuple[Mapping[str, str] | None, ...] | None = None


THUMBS_TEXT = {1: "up", 0: "down"}
"""How canonical JSONL writes a thumb (readers also take true/false and 1/0)."""
# True == 1 and False == 0 as keys, so true/false and 1/0 are both read
THUMBS_VALUE: dict[str | int, int] = {"up": 1, "down": 0, 1: 1, 0: 0}


@dataclass(frozen=True)
class Session:
    """A search session: ordered turns plus what is known about the user's task."""

    session_id: str
    turns: tuple[Turn, ...]
    source: str = "unknown"
    language: str | None = None
    task_type: str | None = None
    intent: str | None = None
    gold: Gold | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def _statement_to_dict(s: Statement) -> dict[str, Any]:
    return {"text": s.text, "citations": list(s.citations)}


def _link_to_dict(link: Link) -> dict[str, Any]:
    out: dict[str, Any] = {"id": link.id, "url": link.url, "title": link.title}
    if link.text is not None:  # optional key: files without source text stay as they were
        out["text"] = link.text
    return out


def _turn_to_dict(t: Turn) -> dict[str, Any]:
    return {
        "index": t.index,
        "query": t.query,
        "response_text": t.response_text,
        "statements": [_statement_to_dict(s) for s in t.statements],
        "links": [_link_to_dict(lk) for lk in t.links],
        "segments": [{"text": g.text, "start": g.start, "end": g.end} for g in t.segments],
    }


def _gold_to_dict(g: Gold) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if g.session_satisfaction is not None:
        out["session_satisfaction"] = g.session_satisfaction
    if g.query_satisfaction is not None:
        out["query_satisfaction"] = list(g.query_satisfaction)
    if g.link_usefulness is not None:
        out[LINK_FIELD] = [{str(k): v for k, v in turn.items()} for turn in g.link_usefulness]
    if g.citation_usefulness is not None:
        out["citation_usefulness"] = [
            [list(stmt) for stmt in turn] for turn in g.citation_usefulness
        ]
    if g.useful_spans_user is not None:
        out["useful_spans_user"] = [list(t) for t in g.useful_spans_user]
    if g.useful_spans_external is not None:
        out["useful_spans_external"] = [list(t) for t in g.useful_spans_external]
    if g.thumbs is not None:
        out["thumbs"] = [None if t is None else THUMBS_TEXT[t] for t in g.thumbs]
    if g.feedback_text is not None:
        out["feedback_text"] = list(g.feedback_text)
    if g.dissatisfaction is not None:
        out["dissatisfaction"] = {
            "choices": list(g.dissatisfaction.choices),
            "additional": g.dissatisfaction.additional,
        }
    if g.citation_support is not None:
        out[CITATION_FIELD] = [
            [{str(k): v for k, v in stmt.items()} for stmt in turn] for turn in g.citation_support
        ]
    if g.nugget_assignments is not None:
        out[NUGGET_GOLD] = [None if turn is None else dict(turn) for turn in g.nugget_assignments]
    return out


def session_to_dict(session: Session) -> dict[str, Any]:
    """The canonical JSONL object of a session (see README, "Canonical JSONL")."""
    out: dict[str, Any] = {
        "version": SCHEMA_VERSION,
        "session_id": session.session_id,
        "source": session.source,
        "language": session.language,
        "task_type": session.task_type,
        "intent": session.intent,
        "turns": [_turn_to_dict(t) for t in session.turns],
    }
    if session.gold is not None:
        out["gold"] = _gold_to_dict(session.gold)
    if session.meta:
        out["meta"] = dict(session.meta)
    return out


def _opt_tuple_of_tuples(value: Sequence[Sequence[Any]] | None) -> Any:
    if value is None:
        return None
    return tuple(tuple(v) for v in value)


def _gold_from_dict(d: Mapping[str, Any]) -> Gold:
    dis = d.get("dissatisfaction")
    link_usefulness = d.get(LINK_FIELD)
    citation_usefulness = d.get("citation_usefulness")
    query_satisfaction = d.get("query_satisfaction")
    citation_support = d.get(CITATION_FIELD)
    thumbs = d.get("thumbs")
    feedback_text = d.get("feedback_text")
    nuggets = d.get(NUGGET_GOLD)
    return Gold(
        session_satisfaction=d.get("session_satisfaction"),
        query_satisfaction=None if query_satisfaction is None else tuple(query_satisfaction),
        link_usefulness=None
        if link_usefulness is None
        else tuple({int(k): int(v) for k, v in turn.items()} for turn in link_usefulness),
        citation_usefulness=None
        if citation_usefulness is None
        else tuple(tuple(tuple(int(x) for x in s) for s in turn) for turn in citation_usefulness),
        useful_spans_user=_opt_tuple_of_tuples(d.get("useful_spans_user")),
        useful_spans_external=_opt_tuple_of_tuples(d.get("useful_spans_external")),
        dissatisfaction=None
        if dis is None
        else Dissatisfaction(
            choices=tuple(str(c) for c in dis.get("choices", ())),
            additional=str(dis.get("additional", "")),
        ),
        citation_support=None
        if citation_support is None
        else tuple(
            tuple({int(k): str(v) for k, v in stmt.items()} for stmt in turn)
            for turn in citation_support
        ),
        thumbs=None if thumbs is None else tuple(_thumb(t) for t in thumbs),
        feedback_text=None
        if feedback_text is None
        else tuple(None if t is None else str(t) for t in feedback_text),
        nugget_assignments=None
        if nuggets is None
        else tuple(
            None if turn is None else {str(k): str(v) for k, v in turn.items()} for turn in nuggets
        ),
    )


def _thumb(value: Any) -> int | None:
    if value is None:
        return None
    key = value.strip().lower() if isinstance(value, str) else value
    return THUMBS_VALUE[key]


def session_from_dict(d: Mapping[str, Any]) -> Session:
    """Inverse of :func:`session_to_dict`; assumes ``d`` was validated (see ingest.jsonl)."""
    turns = tuple(
        Turn(
            index=int(t["index"]),
            query=t["query"],
            response_text=t["response_text"],
            statements=tuple(
                Statement(text=s["text"], citations=tuple(int(c) for c in s["citations"]))
                for s in t.get("statements", ())
            ),
            links=tuple(
                Link(id=int(lk["id"]), url=lk["url"], title=lk["title"], text=lk.get("text"))
                for lk in t.get("links", ())
            ),
            segments=tuple(
                Segment(text=g["text"], start=int(g["start"]), end=int(g["end"]))
                for g in t.get("segments", ())
            ),
        )
        for t in d["turns"]
    )
    gold = d.get("gold")
    return Session(
        session_id=str(d["session_id"]),
        turns=turns,
        source=d.get("source") or "unknown",
        language=d.get("language"),
        task_type=d.get("task_type"),
        intent=d.get("intent"),
        gold=None if gold is None else _gold_from_dict(gold),
        meta=dict(d.get("meta") or {}),
    )


# The kinds of evidence a score rests on.
#
# What a score rests on: the kinds of evidence a measure or a judge kind declares.
#
# Every page that names a score says what kind of score it is (the terminal summary's tables
# and headline card, ``report.html``'s sections, the verdict's lines, the compare pages), and
# reads it from the declaration of the measure (``Measure.EVIDENCE``, :mod:`genir_eval.metrics`)
# or of the judge kind (``JudgeKind.evidence``, :mod:`genir_eval.judges.kinds`) the score comes
# from, never from a default: ``sdcg_urge`` rests on how useful the cited links are, not on
# whether citations support their statements; nugget recall is the coverage of the nuggets.
# A base module, so the measures (which come before the judges) and the kinds declare from
# the same table.

LINK_USEFULNESS = "link usefulness"
CITATION_SUPPORT = "citation support"
NUGGETS = "nuggets"
SATISFACTION = "rated satisfaction"
PREFERENCE = "preference"
USEFUL_SPANS = "useful spans"
RUBRIC = "rubric questions"


@dataclass(frozen=True)
class EvidenceKind:
    """One kind of evidence: its ``name`` (what a declaration names), the ``noun`` a page
    calls a score of it (``a link-usefulness score``), what such a score ``says`` (a clause),
    the ``title`` of the section that lists such scores, and whether it is ``part`` of an
    answer's quality (link usefulness, citation support, nugget coverage: each says one thing
    an answer does, not whether people like it) rather than a judgment of the whole answer."""

    name: str
    noun: str
    says: str
    title: str
    part: bool


EVIDENCE_KINDS: dict[str, EvidenceKind] = {
    kind.name: kind
    for kind in (
        EvidenceKind(
            LINK_USEFULNESS,
            "link-usefulness score",
            "how useful the links the answer's statements cite are",
            "Link usefulness: how useful the links each statement cites are",
            part=True,
        ),
        EvidenceKind(
            CITATION_SUPPORT,
            "citation-support score",
            "whether each citation supports its statement",
            "Citation support: does each citation support its statement",
            part=True,
        ),
        EvidenceKind(
            NUGGETS,
            "nugget-coverage score",
            "how many of the query's nuggets (the facts a good answer holds) the answer covers",
            "Nuggets: coverage of the nuggets",
            part=True,
        ),
        EvidenceKind(
            SATISFACTION,
            "satisfaction score",
            "how satisfied a judge expects the user to be",
            "Satisfaction: a judge's rating of the user's satisfaction",
            part=False,
        ),
        EvidenceKind(
            PREFERENCE,
            "preference score",
            "which of two answers a judge prefers",
            "Preference: which answer a judge prefers",
            part=False,
        ),
        EvidenceKind(
            USEFUL_SPANS,
            "useful-spans score",
            "how much of the answer a judge marks useful",
            "Useful spans: how much of each answer is useful",
            part=False,
        ),
        EvidenceKind(
            RUBRIC,
            "rubric score",
            "how many of a rubric's questions the answer answers",
            "Rubric: the questions each answer answers",
            part=False,
        ),
    )
}


def evidence_kind(name: str) -> EvidenceKind:
    """The kind of evidence ``name`` declares; a name outside :data:`EVIDENCE_KINDS` is a
    ``ValueError`` (a declaration must name one of them)."""
    try:
        return EVIDENCE_KINDS[name]
    except KeyError:
        known = ", ".join(EVIDENCE_KINDS)
        raise ValueError(f"unknown kind of evidence {name!r}; known: {known}") from None
