"""The ITEM judges' offline twin: an extractive pseudo-answer, lexical utility and BM25
rankings, i.e. pseudo-relevance feedback iterated under ITEM's stop rules."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.item.candidates import Candidate
from genir_eval.judges.lexical import BM25, key_terms, tokenize
from genir_eval.judges.offline.reasons import item_reason
from genir_eval.llm.providers.offline import register_offline

__all__ = ["OFFLINE_TASKS", "offline_reply"]


def extractive_answer(candidates: Sequence[Candidate]) -> str:
    """The pseudo-answer of the offline twin: the sentences of the selected candidates."""
    sentences: list[str] = []
    for c in candidates:
        for s in (c.title, *c.statements):
            if s and s not in sentences:
                sentences.append(s)
    return "\n".join(sentences)


def lexical_scores(ctx: Mapping[str, Any], shown: Sequence[Candidate]) -> dict[int, float]:
    """Query + pseudo-answer against each candidate (pseudo-relevance feedback).

    ``s(c) = (1 - w) * BM25(query, c) / max + w * BM25(answer, c) / max`` with ``w`` the
    feedback weight (0 without an answer); each part is normalised by its maximum over all
    of the turn's candidates, so pointwise calls score as listwise ones do.
    """
    pool: list[Candidate] = list(ctx.get("all_candidates") or shown)
    index = BM25([tokenize(c.text) for c in pool])
    query_scores = index.scores(key_terms(ctx["query"]))
    answer = ctx.get("answer")
    weight = float(ctx["offline"]["feedback"]) if answer else 0.0
    answer_scores = index.scores(tokenize(answer)) if answer else [0.0] * len(pool)

    def normalised(values: list[float]) -> list[float]:
        top = max(values, default=0.0)
        return [v / top if top > 0 else 0.0 for v in values]

    q, a = normalised(query_scores), normalised(answer_scores)
    if not any(q):
        # A query sharing no term with any candidate: rely on the pseudo-answer alone.
        weight = 1.0 if answer else weight
    by_id = {c.id: (1 - weight) * q[i] + weight * a[i] for i, c in enumerate(pool)}
    return {c.id: by_id[c.id] for c in shown}


def offline_reply(request: Any) -> str:
    """The offline twin's reply to an ITEM request, in the format the LLM is asked for.

    Dispatches on ``request.context["step"]``: the extractive pseudo-answer, the lexical
    utility set (score >= ``offline.threshold`` of the best), BM25 rankings.
    """
    ctx: Mapping[str, Any] = request.context
    step = ctx["step"]
    shown: list[Candidate] = list(ctx["candidates"])
    if step == "answer":
        if ctx.get("mode") == "implicit":
            terms = key_terms(ctx["query"])
            text = "; ".join(terms) or ctx["query"]
        else:
            text = extractive_answer(shown) or ctx["query"]
        return json.dumps({"answer": text}, ensure_ascii=False)
    if step == "joint":
        answer = extractive_answer(shown)
        ctx = {**ctx, "answer": answer}
    scores = lexical_scores(ctx, shown)
    threshold = float(ctx["offline"]["threshold"])
    if step in ("rank_relevance", "rank_utility"):
        order = sorted(shown, key=lambda c: -scores[c.id])
        return json.dumps({"ranking": [c.id for c in order]})
    if step == "judge_pointwise":
        return json.dumps({"useful": scores[shown[0].id] >= threshold})
    useful = [c.id for c in shown if scores[c.id] >= threshold]
    reason = item_reason(len(useful), len(shown), threshold)
    if step == "joint":
        return json.dumps(
            {"answer": ctx["answer"], "useful": useful, "reason": reason}, ensure_ascii=False
        )
    return json.dumps({"useful": useful, "reason": reason})


OFFLINE_TASKS = tuple(
    f"item.{step}"
    for step in (
        "answer",
        "judge",
        "judge_pointwise",
        "rank_relevance",
        "rank_utility",
        "vanilla",
        "joint",
    )
)

for _task in OFFLINE_TASKS:
    register_offline(_task, offline_reply)
