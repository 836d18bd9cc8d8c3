"""Running a judge to meta-evaluate it: the judge's labels through an engine, then
:mod:`genir_eval.meta.evaluate` (and :mod:`genir_eval.meta.item_eval` for ITEM and RUBRIC)
to compare them with gold. ``genir-eval meta`` and the benches call this; ``meta/`` itself
only compares labels it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.base import Judge, Label, judge_sessions
from genir_eval.judges.kinds import GoldContext, judge_kind
from genir_eval.judges.links.true import NAME as TRUE_JUDGE
from genir_eval.judges.offline.twins import BASELINE_NOTE
from genir_eval.judges.registry import make_judge
from genir_eval.llm.build import offline_engine
from genir_eval.llm.engine import Engine
from genir_eval.meta.evaluate import META_VERSION, judge_instructions, score_labels
from genir_eval.meta.gold import gold_blocks
from genir_eval.meta.item_eval import ITEM_JUDGES, evaluate_item
from genir_eval.records import Session

__all__ = [
    "DEFAULT_LINK_BASELINE",
    "evaluate_judge",
    "evaluate_labels",
    "offline_link_labels",
    "compare_item",
]

#: The offline link judge a satisfaction judge is combined with: the TRUE twin (its kind's
#: folder names it, as every judge's name is spelled where the judge is).
DEFAULT_LINK_BASELINE = TRUE_JUDGE


def _is_offline(engine: Any) -> bool:
    return getattr(getattr(engine, "provider", None), "name", "") == "offline"


async def offline_link_labels(
    sessions: Sequence[Session], name: str = DEFAULT_LINK_BASELINE
) -> list[Label]:
    """Link labels from an offline twin, for combining with a satisfaction judge."""
    engine = offline_engine(quiet=True)
    try:
        return await judge_sessions(make_judge(name), sessions, engine)
    finally:
        await engine.aclose()


async def evaluate_judge(
    judge: Judge | str,
    sessions: Sequence[Session],
    engine: Engine,
    *,
    options: Mapping[str, Any] | None = None,
    link_judge: str = DEFAULT_LINK_BASELINE,
    n_boot: int = 1000,
    seed: int = 0,
    ppi_labelled: int | None = None,
) -> dict[str, Any]:
    """Run ``judge`` (a judge or a registry name built with ``options``) on ``sessions``
    through ``engine`` and score it against their gold labels (:func:`evaluate_labels`)."""
    if isinstance(judge, str):
        judge = make_judge(judge, **dict(options or {}))
    labels = await judge_sessions(judge, sessions, engine)
    return await evaluate_labels(
        judge,
        sessions,
        labels,
        engine,
        link_judge=link_judge,
        n_boot=n_boot,
        seed=seed,
        ppi_labelled=ppi_labelled,
    )


async def evaluate_labels(
    judge: Judge,
    sessions: Sequence[Session],
    labels: Sequence[Label],
    engine: Engine,
    *,
    link_judge: str = DEFAULT_LINK_BASELINE,
    n_boot: int = 1000,
    seed: int = 0,
    ppi_labelled: int | None = None,
) -> dict[str, Any]:
    """Score ``labels``, given by ``judge`` on ``sessions`` through ``engine``, against the
    sessions' gold labels. A satisfaction judge is combined with ``sdcg_urge`` from the
    offline twin of ``link_judge``. ``ppi_labelled``: see :func:`ppi_scores`."""
    link_labels: list[Label] | None = None
    link_source: str | None = None
    if judge_kind(judge.kind).combines_with_link_labels:
        link_labels = await offline_link_labels(sessions, link_judge)
        link_source = f"offline twin of {link_judge} (baseline)"
    result: dict[str, Any] = {
        "version": META_VERSION,
        "judge": {
            "name": judge.name,
            "kind": judge.kind,
            "options": dict(judge.options),
            "provider": getattr(engine.provider, "name", None),
            "model": engine.model,
            "baseline": _is_offline(engine),
        },
        "n_sessions": len(sessions),
    }
    if _is_offline(engine):
        # a judge whose twin reads evidence of its own says which (the nugget judge's)
        result["baseline_note"] = getattr(judge, "baseline_note", None) or BASELINE_NOTE
    result.update(
        score_labels(
            sessions,
            labels,
            kind=judge.kind,
            link_labels=link_labels,
            link_source=link_source,
            n_boot=n_boot,
            seed=seed,
            instructions=judge_instructions(judge),
            ppi_labelled=ppi_labelled,
        )
    )
    stats = getattr(judge, "stats", None)
    if stats is not None:
        result["replies"] = stats.rates()
    result["engine"] = engine.stats()
    return result


async def compare_item(
    sessions: Sequence[Session],
    engine: Any,
    judges: Sequence[str] = ITEM_JUDGES,
    *,
    gold_min: int = 3,
    k: int = 5,
    options: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run each judge on ``sessions`` through ``engine`` and evaluate it (one report per
    judge, in the order given): the block its kind names after itself
    (:func:`evaluate_item` for ITEM judges, :func:`evaluate_rubric` for RUBRIC ones; the
    former for a judge of any other kind). ``options`` go to every judge."""
    reports: dict[str, dict[str, Any]] = {}
    context = GoldContext(gold_min=gold_min, k=k)
    for name in judges:
        judge = make_judge(name, **dict(options or {}))
        labels = await judge_sessions(judge, sessions, engine)
        own = [b for b in gold_blocks(judge_kind(judge.kind), context) if b.name == judge.kind]
        if not own:
            reports[name] = evaluate_item(sessions, labels, gold_min=gold_min, k=k)
            continue
        own[0].add(sessions, labels, None)
        reports[name] = dict(own[0].result() or {})
    return reports
