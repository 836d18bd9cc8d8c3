"""The judge kinds' names, the one place outside ``genir_eval/judges/`` that spells them.

A judge kind is named where its labels meet a file format: the canonical JSONL's and URGE's
gold fields (``gold.link_usefulness``, ``gold.citation_support``) carry the kind's name, so
the records and the readers (which come before the judges) take the names from here, and
each kind in ``genir_eval/judges/<kind>/`` declares itself under the same name. Every other
stage asks the kinds' registry (:mod:`genir_eval.judges.kinds`) instead of naming a kind.
"""

from __future__ import annotations

__all__ = [
    "LINK_USEFULNESS",
    "SATISFACTION",
    "SPANS",
    "CITATION_SUPPORT",
    "ITEM",
    "RUBRIC",
    "PAIRWISE",
    "KIND_NAMES",
    "NUGGETS_FILE",
    "NUGGET_GOLD",
]

LINK_USEFULNESS = "link_usefulness"
SATISFACTION = "satisfaction"
SPANS = "spans"
CITATION_SUPPORT = "citation_support"
ITEM = "item"
RUBRIC = "rubric"
PAIRWISE = "pairwise"

#: The built-in kinds' names.
KIND_NAMES = (LINK_USEFULNESS, SPANS, SATISFACTION, ITEM, RUBRIC, CITATION_SUPPORT, PAIRWISE)

#: The gold field of people's nugget labels: per turn, each nugget id of the turn's query
#: with whether the answer supports it (``support``, ``partial_support``, ``not_support``),
#: as the nugget judge assigns them.
NUGGET_GOLD = "nugget_assignments"

#: The file a run's nugget judge writes into the run folder (its nuggets, one a line), which
#: ``run.json`` lists with its SHA-256 like the tables (:data:`genir_eval.rundir.rows.RUN_FILES`).
NUGGETS_FILE = "nuggets.jsonl"
