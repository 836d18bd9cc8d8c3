"""The offline twins' reasons: each twin's reply says, in one sentence, which evidence of the
log its label rests on.

A twin computes its label from a few numbers (:mod:`genir_eval.judges.offline.features`);
the sentence names them in words with their values, so a reader of a judgment sees why it
got its label without opening the raw reply. The sentence goes into the reply's ``reason``
field, which every judge's reason is read from (as an LLM judge's ``reasoning``); the twins'
scoring is untouched by it. Each sentence carries the item's own figures, so two items share
a reason only when their evidence is the same.

Verdicts are named in words here too (:data:`LINK_WORDS`, :data:`SUPPORT_WORDS`), the same
words the report uses for every judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.offline.features import LinkEvidence, TurnEvidence

__all__ = [
    "LINK_WORDS",
    "SUPPORT_WORDS",
    "item_reason",
    "link_reason",
    "rubric_reason",
    "session_reason",
    "spans_reason",
    "support_reason",
    "turn_reason",
]

#: A link usefulness label (0-3) in words.
LINK_WORDS = {0: "not useful", 1: "marginally useful", 2: "useful", 3: "highly useful"}
#: A citation support verdict in words.
SUPPORT_WORDS = {"full": "fully supports", "partial": "partly supports", "none": "does not support"}


def _share(value: float) -> str:
    return f"{100 * value:.0f}%"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def link_reason(
    evidence: LinkEvidence, label: int, groups: Sequence[str] = ("relevance", "behaviour")
) -> str:
    """Why a link twin gave ``label``: the title's alignment with the query (relevance), how
    much and how early the answer cites it (behaviour) and, when the ``satisfaction`` group
    is on, the user's own signals."""
    parts = []
    if "relevance" in groups:
        parts.append(
            f"its title covers {_share(evidence.title_alignment)} of the query's key terms"
        )
    if "behaviour" in groups:
        parts.append(
            f"the answer cites it {_times(evidence.citation_count)}"
            f" (position score {evidence.position:.2f}, 1 = cited first)"
        )
    if "satisfaction" in groups:
        if evidence.query_satisfaction is not None:
            parts.append(
                f"the user rated the query {_share(evidence.query_satisfaction)} satisfied"
            )
        if evidence.span_overlap is not None:
            parts.append(
                f"{_share(evidence.span_overlap)} of the user's useful marks lie in the "
                "statements citing it"
            )
    evidence_text = "; ".join(parts) if parts else "the log has no evidence about it"
    return f"{evidence_text[0].upper()}{evidence_text[1:]}, so {LINK_WORDS.get(label, label)}."


def spans_reason(overlaps: Sequence[float], useful: Sequence[int]) -> str:
    """Why the spans twin marked ``useful`` of the response's units: their overlap with the
    query and intent is positive and at least the turn's mean."""
    if not overlaps:
        return "the response has no text unit to mark."
    mean = sum(overlaps) / len(overlaps)
    if not useful:
        return f"none of the {len(overlaps)} text units shares words with the query or intent."
    best = max(overlaps)
    return (
        f"{len(useful)} of {len(overlaps)} text units share at least the turn's mean overlap "
        f"({mean:.2f}) with the query and intent; the best overlaps {best:.2f}."
    )


def turn_reason(evidence: TurnEvidence, rating: float | None = None) -> str:
    """The evidence a satisfaction twin read one response by, in a sentence."""
    parts = [
        f"the answer covers {_share(evidence.query_coverage)} of the query's key terms",
        f"{_share(evidence.citation_support)} of its text carries a citation",
        f"layout clarity {evidence.clarity:.2f}",
    ]
    if evidence.reformulation is not None and evidence.reformulation > 0:
        parts.append(f"the next query repeats {_share(evidence.reformulation)} of this one")
    head = f"rated {rating:.0f}/10: " if rating is not None else ""
    return head + "; ".join(parts) + "."


def session_reason(turns: Sequence[TurnEvidence], rating: float | None = None) -> str:
    """The evidence a satisfaction twin read a whole session by: its turns' means."""
    if not turns:
        return "the session has no turn to read."
    n = len(turns)
    coverage = sum(t.query_coverage for t in turns) / n
    support = sum(t.citation_support for t in turns) / n
    reasked = sum(1 for t in turns if (t.reformulation or 0) > 0.5)
    head = f"rated {rating:.0f}/10 over {n} turn{'s' if n > 1 else ''}: " if rating else ""
    return (
        f"{head}the answers cover {_share(coverage)} of their queries' key terms on average, "
        f"{_share(support)} of their text carries a citation, and the user re-asked "
        f"{reasked} of {n} queries."
    )


def support_reason(support: str, features: Mapping[str, Any] | None, basis: str) -> str:
    """Why the citation-support twin gave ``support``, from the features it computed: how
    many of the statement's claims the source supports (and all its citations together),
    and for its least supported claim the share of key terms the source and its best
    passage hold, the similarity in meaning when it was read, and what is missing
    (``missing_numbers``, ``negation_mismatch``, ``missing_entities``); or from title and
    url only."""
    verdict = SUPPORT_WORDS.get(support, support)
    if basis != "source_text" or not features:
        return (
            f"the source {verdict} the statement, judged from its title and url only "
            "(no source text): at best partly."
        )
    parts = []
    claims = int(features.get("claims", 1))
    if claims == 0:
        return (
            f"the source {verdict} the statement: the statement makes no claim of its own, "
            "it only addresses whoever judges it."
        )
    if claims > 1:
        parts.append(
            f"it supports {features.get('claims_supported', 0)} of the statement's {claims} "
            f"claims, the statement's citations together {features.get('claims_full_by_citations', 0)} "
            "fully"
        )
    which = "the least supported claim's" if claims > 1 else "the statement's"
    parts += [
        f"the source holds {_share(float(features.get('coverage', 0)))} of {which} key terms",
        f"its best passage {_share(float(features.get('best_passage_coverage', 0)))}",
    ]
    own = int(features.get("own_words", 0))
    if own:
        parts.append(f"{own} of its words in none of the turn's sources, read as wording")
    if "semantic_similarity" in features:
        meaning = f"similarity in meaning {float(features['semantic_similarity']):.2f}"
        if "closer_than_uncited" in features:
            meaning += (
                f", closer than {_share(float(features['closer_than_uncited']))} of the "
                "sources it does not cite"
            )
        parts.append(meaning)
    numbers = features.get("missing_numbers") or []
    if numbers:
        parts.append(f"the number(s) {', '.join(map(str, numbers))} are not in the source")
    if features.get("negation_mismatch"):
        parts.append("the statement and the passage disagree on a negation")
    names = features.get("missing_entities") or []
    if names:
        parts.append(f"the name(s) {', '.join(map(str, names))} are not in the source")
    return f"the source {verdict} the statement: " + "; ".join(parts) + "."


def item_reason(useful: int, shown: int, threshold: float) -> str:
    """Why the ITEM twin kept ``useful`` of ``shown`` candidates: their lexical match with
    the pseudo-answer reaches ``threshold`` of the best one's."""
    return (
        f"{useful} of {shown} candidate links match the pseudo-answer's words at least "
        f"{_share(threshold)} as well as the best one."
    )


def rubric_reason(entries: Sequence[Mapping[str, Any]], grade_max: int) -> str:
    """Why the RUBRIC twin graded a passage so: how many of the rubric's questions it
    answers (a question's grade is the share of its terms the passage has) and the best."""
    graded = [e for e in entries if int(e.get("grade") or 0) > 0]
    if not graded:
        return f"the passage shares no term with any of the {len(entries)} rubric questions."
    best = max(graded, key=lambda e: int(e.get("grade") or 0))
    return (
        f"the passage answers {len(graded)} of {len(entries)} rubric questions in part; "
        f"best {best.get('grade')}/{grade_max} on question {best.get('question')}."
    )
