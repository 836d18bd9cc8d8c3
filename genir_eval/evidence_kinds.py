"""What a score rests on: the kinds of evidence a measure or a judge kind declares.

Every page that names a score says what kind of score it is (the terminal summary's tables
and headline card, ``report.html``'s sections, the verdict's lines, the compare pages), and
reads it from the declaration of the measure (``Measure.EVIDENCE``, :mod:`genir_eval.metrics`)
or of the judge kind (``JudgeKind.evidence``, :mod:`genir_eval.judges.kinds`) the score comes
from, never from a default: ``sdcg_urge`` rests on how useful the cited links are, not on
whether citations support their statements; nugget recall is the coverage of the nuggets.
A base module, so the measures (which come before the judges) and the kinds declare from
the same table.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
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
