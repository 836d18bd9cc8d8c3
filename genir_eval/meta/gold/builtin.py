"""The built-in judge kinds' comparisons with gold, registered under each kind's name (see
:mod:`genir_eval.meta.gold.registry`); their pieces are this folder's modules."""

from __future__ import annotations

from genir_eval.judges.kinds import GoldBlock, GoldContext, JudgeKind
from genir_eval.judges.link_sets import figures_block
from genir_eval.judges.nuggets.kind import NAME as NUGGETS
from genir_eval.kind_names import (
    CITATION_SUPPORT,
    ITEM,
    LINK_USEFULNESS,
    RUBRIC,
    SATISFACTION,
    SPANS,
)
from genir_eval.meta.gold import session
from genir_eval.meta.gold.citations import citation_support_block
from genir_eval.meta.gold.item import ItemFigures
from genir_eval.meta.gold.links import link_pairs_block
from genir_eval.meta.gold.nuggets import system_scores_block
from genir_eval.meta.gold.registry import register_gold
from genir_eval.meta.gold.rubric import RubricFigures
from genir_eval.meta.gold.spans import span_block

__all__: list[str] = []


@register_gold(LINK_USEFULNESS)
def _links(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    """Each link label against the experts', then the link measures from the judge's own
    labels against the users' satisfaction, ordering, thumbs and session means."""
    return [
        session.degeneracy_block(context, links=True),
        link_pairs_block(kind.name, context),
        session.satisfaction_block(SATISFACTION, context, own_links=True),
        session.ordering_block(context),
        session.thumbs_block(context, links=True),
        session.session_means_block(context, links=True),
    ]


@register_gold(SATISFACTION)
def _satisfaction(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    """The judge's turn and session ratings against the users' satisfaction, ordering,
    thumbs and session means."""
    return [
        session.degeneracy_block(context, links=False),
        session.satisfaction_block(kind.name, context, own_links=False),
        session.ordering_block(context),
        session.thumbs_block(context, links=False),
        session.session_means_block(context, links=False),
    ]


@register_gold(CITATION_SUPPORT)
def _citations(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    return [citation_support_block(kind.name)]


@register_gold(SPANS)
def _spans(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    return [span_block(kind.name)]


@register_gold(ITEM)
def _item(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    return figures_block(kind.name, ItemFigures(gold_min=context.gold_min, k=context.k))


@register_gold(RUBRIC)
def _rubric(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    return figures_block(kind.name, RubricFigures(gold_min=context.gold_min, k=context.k))


@register_gold(NUGGETS)
def _nuggets(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    return [system_scores_block(kind.name, context)]
