"""Every registered judge with what it labels and the options it takes (name, type, default,
bound or choices, help): what ``genir-eval judges`` lists and a scenario's ``options = {...}``
may set. The options are read from each judge's own table (its class's ``OPTIONS``,
:mod:`genir_eval.judges.options`), the one place they are declared.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from genir_eval.judges.options import Option, options_of
from genir_eval.judges.registry import judge_names, make_judge

__all__ = ["JudgeEntry", "judge_catalog"]


@dataclass(frozen=True)
class JudgeEntry:
    name: str
    kind: str
    summary: str
    options: tuple[Option, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "summary": self.summary,
            "options": [o.to_dict() for o in self.options],
        }


SUMMARIES: dict[str, str] = {
    "item-as": "ITEM (Zhang et al. 2024): a pseudo-answer from the selected links, then a "
    "utility judgment over all links; repeated until the useful set stops changing",
    "item-ars": "ITEM: a pseudo-answer, the links ranked by relevance to it, then a utility "
    "judgment over that order; repeated until the useful set stops changing",
    "item-ar": "ITEM: a pseudo-answer, the links ranked by utility; the top k are the useful "
    "set; repeated until it stops changing",
    "item-vanilla": "ITEM baseline: one listwise utility judgment of the links, no answer",
    "item-joint": "ITEM baseline: the pseudo-answer and the utility judgment in one call",
    "item-ksample": "ITEM baseline: several listwise judgments over seeded shuffles of the "
    "links, majority vote",
    "rubric": "RUBRIC (Farzi & Dietz 2024): a bank of questions per turn, each statement and "
    "cited link graded 0-5 on how well it answers them",
    "rubric-thomas": "RUBRIC baseline: each passage graded 0-2 directly (Thomas et al. 2024, "
    "M/T/O aspects)",
    "rubric-yesno": "RUBRIC baseline: each passage judged relevant or not directly",
}
"""Judges described on their own where one module registers several (the ITEM variants and
baselines, RUBRIC and its baselines); the others are summarised by their module's docstring."""

_ROLE = re.compile(r":\w+:`~?([^`]+)`")


def _summary(name: str, judge: Any) -> str:
    if name in SUMMARIES:
        return SUMMARIES[name]
    module = sys.modules.get(type(judge).__module__)
    doc = (module.__doc__ if module else None) or type(judge).__doc__ or ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    if first.startswith("``") and ":" in first:
        first = first.split(":", 1)[1].strip()
    # no reStructuredText roles or literals on a terminal
    return _ROLE.sub(r"\1", first).replace("``", "")


def judge_catalog() -> list[JudgeEntry]:
    """Every registered judge, by name: kind, one-line summary, the options it reads."""
    entries = []
    for name in judge_names():
        judge = make_judge(name)
        entries.append(JudgeEntry(name, str(judge.kind), _summary(name, judge), options_of(judge)))
    return entries
