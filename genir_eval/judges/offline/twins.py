"""Offline twins: deterministic baselines that answer every judge's prompt from the log alone.

Each twin is registered with the engine's offline provider under its judge's task and
replies in the judge's own reply format, so the same parsing path runs. They read the
structured request context (never the rendered prompt, so text planted in a response
cannot steer them) and use only evidence present in the log
(:mod:`genir_eval.judges.offline.features`): lexical alignment, citation credit and position, response structure, and, where the judge's
options enable it (``link_usefulness.true`` with the ``satisfaction`` signal group), the
user's feedback. Every constant is an a-priori choice documented here, not fitted to data:

- link usefulness: ``score = mean(relevance, behaviour)`` of the enabled groups, each in
  [0, 1]; the label is the score's quarter (``floor(4 * score)``, 3 at most). Relevance is
  the title's alignment (the source's own words; the citing statements are the engine's
  words, written to match the query whatever the source's worth). With feedback on (the
  TRUE twin's ``satisfaction`` group) the user's satisfaction acts as a soft prior: the
  score is scaled by ``0.75 + 0.25 * mean(query satisfaction, share of the user's useful
  marks inside the citing statements)``, so feedback can lower the evidence by a quarter;
- spans: a unit is useful when its n-gram overlap with query + intent is at least the turn's
  mean overlap and positive (above-average alignment);
- satisfaction: each turn's evidence (:class:`~genir_eval.judges.offline.features.TurnEvidence`,
  each signal in [0, 1]) read as the judge's dimensions, mapped linearly to 1-10
  (``1 + 9 * reading``, rounded) and averaged over the turns for the session (every turn
  counts the same, see :func:`session_reading`). Dimension readings
  (:func:`dimension_readings`): factuality and correctness <- citation support (share of the
  statement text carrying a citation); consistency <- cited coverage (the query's key terms
  in the cited statements); completeness and coverage <- query-term coverage; clarity,
  logical coherence and coherence <- layout clarity (at most five sentences per block,
  length-free); appropriateness <- intent alignment; richness <- distinct sources cited;
  user satisfaction <- ``mean(query coverage, intent alignment) * (1 - reformulation)``,
  where reformulation is the Jaccard similarity of the next query's key terms with this
  one's (0 for the last turn: re-asking is the user's sign of failure, a topic shift and the
  end of the session are neutral); creativity, engagement, fairness and responsibility,
  which the log says nothing about, read :func:`answer_quality`. The designs differ:

  - ``satisfaction.urs``: its task type's five dimensions; overall = their weighted mean
    with factuality and user satisfaction counting twice (URGE's rubric: they weigh most);
  - ``satisfaction.gah``: the five generic dimensions, all about the answer itself (the
    user's reformulation does not enter); overall = weighted mean with correctness and
    coverage counting twice (its prompt's emphasis);
  - ``satisfaction.geval``: one overall per turn, the breadth of sources the answer draws
    on (``source_count``, ``1 - 2^-(distinct sources / 2)``) times ``1 - reformulation``.
    The design was chosen by cross-validation over the CrowdRAG-25 development topics
    (``python bench/twin_cv.py``, 5 x repeated 4-fold over topics): choosing among 13
    a-priori designs (:func:`answer_quality`'s five readings of G-Eval's steps, each alone,
    all five, each left out) agrees with people on 0.650 [0.573, 0.728] of the pairs it
    decides on topics it never saw, its simplest ingredient, the breadth of sources, 0.677
    [0.613, 0.740] on the same topics (in sample, all five readings: 0.685). A twin that
    does not beat its ingredient out of sample uses the ingredient: the published baseline
    "the answer citing more distinct passages wins" (Gienapp et al., SIGIR 2025), on the
    judge's 1-10 scale.

  Each block carries the dimensions and the overall, so the meta-evaluation reports both the
  overall and the dimension mean, as for the LLM judges.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from genir_eval.judges.common import JudgeContext
from genir_eval.judges.offline.features import (
    LinkEvidence,
    TurnEvidence,
    link_evidence,
    segment_alignment,
    turn_evidence,
)
from genir_eval.judges.offline.reasons import link_reason, session_reason, spans_reason, turn_reason
from genir_eval.judges.satisfaction.common import DIMENSION_TEXT, GAH_DIMENSIONS, dimensions_for
from genir_eval.llm.providers.base import Request
from genir_eval.llm.providers.offline import register_offline
from genir_eval.records import Session, Turn

__all__ = [
    "BASELINE_NOTE",
    "link_score",
    "link_label",
    "OVERALL_EMPHASIS",
    "answer_quality",
    "dimension_readings",
    "weighted_overall",
    "session_reading",
    "turn_rating",
    "register_twins",
]

BASELINE_NOTE = (
    "offline twins are deterministic baselines computed from the log (lexical alignment, "
    "citation credit and position, response structure, and feedback signals where enabled), "
    "not LLM judgments"
)

# The dimensions each design's prompt says weigh most in the overall score.
OVERALL_EMPHASIS: dict[str, tuple[str, ...]] = {
    "urs": ("factuality", "user_satisfaction"),
    "gah": ("correctness", "coverage"),
}


def _context(request: Request) -> JudgeContext:
    context = request.context
    if not isinstance(context, JudgeContext):
        raise TypeError(f"offline twin for {request.task!r} needs a JudgeContext")
    return context


def _quarter(score: float) -> int:
    return max(0, min(3, int(math.floor(4.0 * score))))


def link_score(
    evidence: LinkEvidence, groups: tuple[str, ...] = ("relevance", "behaviour")
) -> float:
    """The twin's usefulness evidence in [0, 1] from the enabled log groups."""
    parts = []
    if "relevance" in groups:
        parts.append(evidence.relevance)
    if "behaviour" in groups:
        parts.append(evidence.behaviour)
    if not parts:
        satisfaction = evidence.satisfaction
        return satisfaction if satisfaction is not None else 0.5
    return sum(parts) / len(parts)


def link_label(evidence: LinkEvidence, groups: tuple[str, ...] = ("relevance", "behaviour")) -> int:
    """The twin's 0-3 label: the score's quarter, the score scaled by the user's feedback
    (``0.75 + 0.25 * satisfaction``) when the ``satisfaction`` group is on."""
    score = link_score(evidence, groups)
    satisfaction = evidence.satisfaction
    if "satisfaction" in groups and satisfaction is not None and len(groups) > 1:
        score *= 0.75 + 0.25 * satisfaction
    return _quarter(score)


def _dna(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None and ctx.link_id is not None
    evidence = link_evidence(ctx.session, ctx.turn, ctx.link_id)
    # the DNA judge names its prompt switches in every request's options (DnaLinkJudge.SWITCHES)
    aspects = bool(ctx.options["aspects"])
    judges = int(ctx.options["judges"])

    def one(weight: float) -> dict[str, int]:
        score = weight * evidence.relevance + (1.0 - weight) * evidence.behaviour
        out = {"O": _quarter(score)}
        if aspects:
            out = {"M": _quarter(evidence.relevance), "T": _quarter(evidence.behaviour), **out}
        return out

    reason = link_reason(evidence, one(0.5)["O"])
    if judges > 1:
        # Simulated raters who weigh relevance and the engine's reliance differently.
        weights = [0.25 + 0.5 * i / (judges - 1) for i in range(judges)]
        return json.dumps({"judges": [one(w) for w in weights], "reason": reason})
    return json.dumps({**one(0.5), "reason": reason})


def _true(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None and ctx.link_id is not None
    groups = tuple(ctx.extra.get("groups") or ("relevance", "behaviour", "satisfaction"))
    evidence = link_evidence(ctx.session, ctx.turn, ctx.link_id)
    label = link_label(evidence, groups)
    return json.dumps({"reasoning": link_reason(evidence, label, groups), "label": label})


def _listwise(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None
    evidence = {
        str(link_id): link_evidence(ctx.session, ctx.turn, link_id)
        for link_id in ctx.extra.get("ids", ctx.turn.cited_link_ids)
    }
    labels = {link_id: link_label(e) for link_id, e in evidence.items()}
    reasons = {link_id: link_reason(e, labels[link_id]) for link_id, e in evidence.items()}
    return json.dumps({"labels": labels, "reasons": reasons})


def _spans(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None
    overlaps = segment_alignment(ctx.session, ctx.turn)
    mean = sum(overlaps) / len(overlaps) if overlaps else 0.0
    useful = [i for i, v in enumerate(overlaps) if v > 0 and v >= mean]
    return json.dumps({"useful_segments": useful, "reason": spans_reason(overlaps, useful)})


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def answer_quality(evidence: TurnEvidence) -> float:
    """G-Eval's evaluation steps read from the log, equally weighted: correct (citation
    support), relevant (intent alignment), complete (the mean of query-term coverage and the
    breadth of sources drawn on), clear (layout) and, where the log has the cited sources'
    text, written for the reader (:attr:`~TurnEvidence.synthesis`: the share not pasted from
    those sources). The same evidence the pairwise twin compares
    (:mod:`genir_eval.judges.pairwise.twin`), so the two twins order answers alike."""
    readings = [
        evidence.citation_support,
        evidence.intent_alignment,
        _mean([evidence.query_coverage, evidence.source_count]),
        evidence.clarity,
    ]
    if evidence.synthesis is not None:
        readings.append(evidence.synthesis)
    return _mean(readings)


def dimension_readings(
    evidence: TurnEvidence, dims: Iterable[str] = tuple(DIMENSION_TEXT["en"])
) -> dict[str, float]:
    """Each of ``dims``' reading in ``[0, 1]``: the evidence closest to its rubric text
    (:data:`~genir_eval.judges.satisfaction.common.DIMENSION_TEXT`). Dimensions the log says
    nothing about (creativity, engagement, fairness and responsibility, any other name) read
    the turn's :func:`answer_quality`."""
    alignment = _mean([evidence.query_coverage, evidence.intent_alignment])
    readings = {
        "factuality": evidence.citation_support,
        "correctness": evidence.citation_support,
        "consistency": evidence.cited_coverage,
        "completeness": evidence.query_coverage,
        "coverage": evidence.query_coverage,
        "user_satisfaction": alignment * evidence.not_reasked,
        "clarity": evidence.clarity,
        "logical_coherence": evidence.clarity,
        "coherence": evidence.clarity,
        "appropriateness": evidence.intent_alignment,
        "richness": evidence.source_count,
    }
    quality = answer_quality(evidence)
    return {d: readings.get(d, quality) for d in dims}


def weighted_overall(readings: dict[str, float], dims: tuple[str, ...], design: str) -> float:
    """The overall reading: the dimensions' weighted mean, the design's emphasised dimensions
    (:data:`OVERALL_EMPHASIS`) counting twice, as the judges' prompts say they weigh most."""
    emphasis = OVERALL_EMPHASIS.get(design, ())
    weights = {d: 2.0 if d in emphasis else 1.0 for d in dims}
    return sum(weights[d] * readings[d] for d in dims) / sum(weights.values())


def turn_rating(session: Session, turn: Turn) -> float:
    """G-Eval twin's 1-10 rating of a response: the breadth of the sources it cites
    (:attr:`~TurnEvidence.source_count`, the design cross-validation kept, see the module
    docstring) discounted by how closely the next query re-asks this one, mapped linearly."""
    evidence = turn_evidence(session, turn)
    return 1.0 + 9.0 * evidence.source_count * evidence.not_reasked


def _rating(value: float) -> int:
    return max(1, min(10, int(round(value))))


def session_reading(turns: list[float]) -> float:
    """A session's reading from its turns': their mean. Users' session satisfaction follows
    the last query most (the recency effect, Liu et al., "Investigating Cognitive Effects in
    Session-level Search User Satisfaction", KDD 2019), but that holds for the users' own
    turn ratings; the twin's turn readings are weak estimates, and weighing one of them more
    only adds its noise, so every turn counts the same."""
    return _mean(turns)


def _geval(request: Request) -> str:
    ctx = _context(request)
    turns = [turn_rating(ctx.session, t) for t in ctx.session.turns]
    session = session_reading(turns) if turns else 1.0
    evidence = [turn_evidence(ctx.session, t) for t in ctx.session.turns]
    return json.dumps(
        {
            "scores": [_rating(v) for v in [*turns, session]],
            "reason": session_reason(evidence, _rating(session)),
            "turns": [
                {"turn": t.index, "reason": turn_reason(e, _rating(v))}
                for t, e, v in zip(ctx.session.turns, evidence, turns, strict=True)
            ],
        }
    )


def _dimension_block(
    readings: list[dict[str, float]],
    dims: tuple[str, ...],
    design: str,
    evidence: list[TurnEvidence],
) -> dict[str, Any]:
    """One rated block from the readings of its turns (one turn, or all the session's, in
    order, aggregated by :func:`session_reading`), its critique the evidence read."""
    mean = {d: session_reading([r[d] for r in readings]) for d in dims}
    overall = _rating(1.0 + 9.0 * weighted_overall(mean, dims, design))
    critique = (
        turn_reason(evidence[0], overall)
        if len(evidence) == 1
        else session_reason(evidence, overall)
    )
    return {
        "critique": critique,
        "dimensions": {d: _rating(1.0 + 9.0 * mean[d]) for d in dims},
        "overall": overall,
    }


def _dimensional(request: Request) -> str:
    ctx = _context(request)
    session = ctx.session
    design = "gah" if request.task.endswith("gah") else "urs"
    dims = tuple(ctx.extra.get("dimensions") or ())
    if not dims:
        dims = GAH_DIMENSIONS if design == "gah" else dimensions_for(session.task_type)[0]
    evidence = [turn_evidence(session, t) for t in session.turns]
    readings = [dimension_readings(e, dims) for e in evidence]
    turns = [
        {"turn": t.index, **_dimension_block([r], dims, design, [e])}
        for t, r, e in zip(session.turns, readings, evidence, strict=True)
    ]
    return json.dumps(
        {"turns": turns, "session": _dimension_block(readings, dims, design, evidence)},
        ensure_ascii=False,
    )


_TWINS = {
    "link_usefulness.dna": _dna,
    "link_usefulness.true": _true,
    "link_usefulness.listwise": _listwise,
    "spans": _spans,
    "satisfaction.geval": _geval,
    "satisfaction.urs": _dimensional,
    "satisfaction.gah": _dimensional,
}


def register_twins() -> None:
    """Register every twin with the offline provider (idempotent)."""
    for task, handler in _TWINS.items():
        register_offline(task, handler)


register_twins()
