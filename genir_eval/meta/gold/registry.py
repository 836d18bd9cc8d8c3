"""Which comparison with gold each judge kind gets.

A kind's comparison with gold reads its labels beside the gold the logs carry and reduces
them with the statistics (:mod:`genir_eval.meta.stats`) and the measures (:mod:`genir_eval.metrics`),
so it belongs to the meta-evaluation, not to the judges: the built-in kinds' comparisons are
registered here by :mod:`genir_eval.meta.gold.builtin`, one function a kind, under the kind's
name. A kind defined outside the package either registers one the same way
(``register_gold("<kind>")(comparison)``) or declares its own blocks on the kind
(:meth:`genir_eval.judges.kinds.JudgeKind.gold_blocks`), which is what :func:`gold_blocks`
falls back to.
"""

from __future__ import annotations

from collections.abc import Callable

from genir_eval.judges.kinds import GoldBlock, GoldContext, JudgeKind

__all__ = ["Comparison", "register_gold", "gold_blocks"]

#: A kind's comparison: the kind and the request -> its named blocks, in ``meta.json``'s order.
Comparison = Callable[[JudgeKind, GoldContext], list[GoldBlock]]

_COMPARISONS: dict[str, Comparison] = {}


def register_gold(kind_name: str) -> Callable[[Comparison], Comparison]:
    """Register ``comparison`` as the comparison with gold of the kind ``kind_name``."""

    def register(comparison: Comparison) -> Comparison:
        _COMPARISONS[kind_name] = comparison
        return comparison

    return register


def gold_blocks(kind: JudgeKind, context: GoldContext) -> list[GoldBlock]:
    """``kind``'s labels against gold, one named block each: its registered comparison, else
    the blocks the kind declares itself (none for a kind with nothing of its own)."""
    comparison = _COMPARISONS.get(kind.name)
    if comparison is None:
        return kind.gold_blocks(context)
    return comparison(kind, context)
