"""The judges by name: every built-in judge loaded (one module each, with the offline twins
registered with the engine's offline provider), and the lookups a scenario, a result row or
``genir-eval judges`` goes through. :func:`~genir_eval.judges.base.register_judge` adds a
judge under a name; this module sits above every judge, so the lookups never reach up.
"""

from __future__ import annotations

from typing import Any

from genir_eval.errors import ConfigError, did_you_mean
from genir_eval.judges import (
    base,
    spans,  # noqa: F401 - imported for their registrations
)
from genir_eval.judges.base import Judge
from genir_eval.judges.citations import support  # noqa: F401
from genir_eval.judges.item import judge as _item_judge  # noqa: F401
from genir_eval.judges.links import dna, listwise, true  # noqa: F401
from genir_eval.judges.nuggets import NuggetJudge as _nuggets  # noqa: F401
from genir_eval.judges.offline import citations as _citation_twin  # noqa: F401
from genir_eval.judges.offline import item as _item_twin  # noqa: F401
from genir_eval.judges.offline import rubric as _rubric_twin  # noqa: F401
from genir_eval.judges.offline import twins  # noqa: F401
from genir_eval.judges.pairwise import PairwiseJudge as _pairwise  # noqa: F401
from genir_eval.judges.prompting import check_template_file
from genir_eval.judges.rubric import grading  # noqa: F401
from genir_eval.judges.satisfaction import gah, geval, urs  # noqa: F401

__all__ = ["judge_names", "make_judge"]


def make_judge(name: str, **options: Any) -> Judge:
    """Rebuild a judge from its registry name and options."""
    try:
        factory = base.REGISTRY[name]
    except KeyError:
        hint = did_you_mean(name, judge_names())
        known = ", ".join(judge_names())
        raise ConfigError(f"unknown judge {name!r}{hint}; expected one of: {known}") from None
    judge = factory(**options)  # refuses an option it does not take, or of the wrong type
    if isinstance(options.get("template"), str):
        check_template_file(options["template"])
    return judge


def judge_names() -> list[str]:
    """Every registered judge's name, sorted."""
    return sorted(base.REGISTRY)
