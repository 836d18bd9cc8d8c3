"""``satisfaction.gah``: the same shape as ``satisfaction.urs`` with task-independent
dimensions (coherence, coverage, consistency, correctness, clarity) for every task type."""

from __future__ import annotations

from typing import Any

from genir_eval.judges.base import register_judge
from genir_eval.judges.satisfaction.common import GAH_DIMENSIONS
from genir_eval.judges.satisfaction.urs import DimensionalSatisfactionJudge
from genir_eval.records import Session

__all__ = ["GahSatisfactionJudge", "satisfaction_gah"]

NAME = "satisfaction.gah"

EMPHASIS = {
    "en": "Correctness and coverage weigh most in the overall score.",
    "zh": "总体得分中，correctness（正确性）和 coverage（覆盖度）权重最大。",
}


class GahSatisfactionJudge(DimensionalSatisfactionJudge):
    name = NAME
    task = NAME

    def dimensions(self, session: Session) -> tuple[tuple[str, ...], bool]:
        return GAH_DIMENSIONS, True

    def emphasis(self, language: str) -> str:
        return EMPHASIS[language]


@register_judge(NAME)
def satisfaction_gah(**options: Any) -> GahSatisfactionJudge:
    """Options: as for ``satisfaction.urs``."""
    return GahSatisfactionJudge(**options)
