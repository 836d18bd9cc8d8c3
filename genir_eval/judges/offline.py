"""Offline twins: deterministic baselines that answer every judge's prompt from the log alone.

Each twin is registered with the engine's offline provider under its judge's task and
replies in the judge's own reply format, so the same parsing path runs. They read the
structured request context (never the rendered prompt, so text planted in a response
cannot steer them) and use only evidence present in the log (:mod:`genir_eval.judges.features`):
lexical alignment, citation credit and position, response structure, and, where the judge's
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
- satisfaction: each turn's evidence (:class:`~genir_eval.judges.features.TurnEvidence`)
  mapped linearly to 1-10; the session is the mean of its turns.
"""

from __future__ import annotations

import json
import math
from typing import Any

from genir_eval.judges.common import JudgeContext
from genir_eval.judges.features import LinkEvidence, link_evidence, segment_alignment, turn_evidence
from genir_eval.judges.satisfaction_common import GAH_DIMENSIONS, dimensions_for
from genir_eval.llm.base import Request
from genir_eval.llm.offline import register_offline
from genir_eval.records import Session, Turn

__all__ = [
    "BASELINE_NOTE",
    "link_score",
    "link_label",
    "turn_rating",
    "register_twins",
]

BASELINE_NOTE = (
    "offline twins are deterministic baselines computed from the log (lexical alignment, "
    "citation credit and position, response structure, and feedback signals where enabled), "
    "not LLM judgments"
)


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
    aspects = bool(ctx.options.get("aspects", True))
    judges = int(ctx.options.get("judges", 1))

    def one(weight: float) -> dict[str, int]:
        score = weight * evidence.relevance + (1.0 - weight) * evidence.behaviour
        out = {"O": _quarter(score)}
        if aspects:
            out = {"M": _quarter(evidence.relevance), "T": _quarter(evidence.behaviour), **out}
        return out

    if judges > 1:
        # Simulated raters who weigh relevance and the engine's reliance differently.
        weights = [0.25 + 0.5 * i / (judges - 1) for i in range(judges)]
        return json.dumps({"judges": [one(w) for w in weights]})
    return json.dumps(one(0.5))


def _true(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None and ctx.link_id is not None
    groups = tuple(ctx.extra.get("groups") or ("relevance", "behaviour", "satisfaction"))
    evidence = link_evidence(ctx.session, ctx.turn, ctx.link_id)
    label = link_label(evidence, groups)
    reasoning = (
        f"offline twin: relevance {evidence.relevance:.2f}, behaviour {evidence.behaviour:.2f}"
    )
    return json.dumps({"reasoning": reasoning, "label": label})


def _listwise(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None
    labels = {
        str(link_id): link_label(link_evidence(ctx.session, ctx.turn, link_id))
        for link_id in ctx.extra.get("ids", ctx.turn.cited_link_ids)
    }
    return json.dumps({"labels": labels})


def _spans(request: Request) -> str:
    ctx = _context(request)
    assert ctx.turn is not None
    overlaps = segment_alignment(ctx.session, ctx.turn)
    mean = sum(overlaps) / len(overlaps) if overlaps else 0.0
    useful = [i for i, v in enumerate(overlaps) if v > 0 and v >= mean]
    return json.dumps({"useful_segments": useful})


def turn_rating(session: Session, turn: Turn) -> float:
    """The twin's 1-10 rating of a response: its evidence mean mapped linearly."""
    return 1.0 + 9.0 * turn_evidence(session, turn).mean


def _rating(value: float) -> int:
    return max(1, min(10, int(round(value))))


def _geval(request: Request) -> str:
    ctx = _context(request)
    turns = [turn_rating(ctx.session, t) for t in ctx.session.turns]
    session = sum(turns) / len(turns) if turns else 1.0
    return json.dumps({"scores": [_rating(v) for v in [*turns, session]]})


def _dimension_block(session: Session, turns: list[Turn], dims: tuple[str, ...]) -> dict[str, Any]:
    evidence = [turn_evidence(session, t) for t in turns]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    # Each dimension reads the evidence closest to it; the rest use the overall mean.
    readings = {
        "factuality": mean([e.grounding for e in evidence]),
        "correctness": mean([e.grounding for e in evidence]),
        "consistency": mean([e.grounding for e in evidence]),
        "user_satisfaction": mean(
            [(e.answer_alignment + e.intent_alignment) / 2 for e in evidence]
        ),
        "coverage": mean([e.intent_alignment for e in evidence]),
        "completeness": mean([e.intent_alignment for e in evidence]),
        "clarity": mean([e.structure for e in evidence]),
        "logical_coherence": mean([e.structure for e in evidence]),
        "coherence": mean([e.structure for e in evidence]),
        "richness": mean([e.source_count for e in evidence]),
    }
    overall_mean = mean([e.mean for e in evidence])
    dimensions = {d: _rating(1.0 + 9.0 * readings.get(d, overall_mean)) for d in dims}
    return {
        "critique": "offline twin: computed from log evidence",
        "dimensions": dimensions,
        "overall": _rating(1.0 + 9.0 * overall_mean),
    }


def _dimensional(request: Request) -> str:
    ctx = _context(request)
    session = ctx.session
    dims = tuple(ctx.extra.get("dimensions") or ())
    if not dims:
        dims = (
            GAH_DIMENSIONS if request.task.endswith("gah") else dimensions_for(session.task_type)[0]
        )
    turns = [{"turn": t.index, **_dimension_block(session, [t], dims)} for t in session.turns]
    return json.dumps(
        {"turns": turns, "session": _dimension_block(session, list(session.turns), dims)},
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
