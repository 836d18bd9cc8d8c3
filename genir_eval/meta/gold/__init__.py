"""Each judge kind's comparison with gold (the link labels against the experts', ratings
against the users' satisfaction, spans against the marks, useful-link sets, citation
verdicts, nugget scores per system): :func:`gold_blocks` gives a kind's blocks, the
built-in kinds' comparisons being registered by :mod:`genir_eval.meta.gold.builtin`."""

from __future__ import annotations

from genir_eval.meta.gold import builtin as _builtin  # noqa: F401 - registers the comparisons
from genir_eval.meta.gold.registry import gold_blocks, register_gold

__all__ = ["gold_blocks", "register_gold"]
