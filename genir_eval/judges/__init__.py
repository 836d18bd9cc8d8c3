"""genir-eval judges stage: Session -> labels, through the llm engine.

The judges come in families, one folder each, with the shared pieces beside them:

- ``base`` (the Judge protocol, registry, :func:`ask`), ``parsing`` (reply parsing and
  repair), ``prompting`` (templates, fences, language) and ``common`` (built-in judge plumbing);
- ``links/``: link usefulness (``dna``, ``true``, ``listwise``);
- ``satisfaction/``: session satisfaction (``geval``, ``urs``, ``gah``, shared ``common``);
- ``spans``: which response spans are useful;
- ``citations/``: whether each cited source supports its statement (``support``);
- ``item/``: ITEM iterative utility judgments (candidates, replies, loop, judge);
- ``rubric/``: RUBRIC question banks (``bank``) and grading (``grading``);
- ``nuggets/``: TREC RAG nugget evaluation (creation, importance, assignment, nugget files);
- ``kinds`` (the :class:`~genir_eval.judges.kinds.JudgeKind` protocol and registry: what a
  kind's labels become in the tables, how they meet gold, how the report shows them), one
  ``kind.py`` per folder declaring its kind;
- ``lexical``: tokens, BM25, ROUGE-L and key terms (the twins' features and ITEM's stop rule);
- ``offline/``: the offline twins (``twins``, ``item``, ``rubric``, ``citations``) and their
  features (``features``, ``semantic``);
- ``registry``: every built-in judge loaded, :func:`make_judge` and :func:`judge_names`.

Importing this package registers the built-in judges (one module each, loaded by
``registry``, which also holds :func:`make_judge` and :func:`judge_names`) and their offline
twins with the engine's offline provider.
"""

from genir_eval.judges import spans
from genir_eval.judges.base import (
    Judge,
    JudgeStats,
    Label,
    ask,
    judge_sessions,
    label_from_dict,
    label_to_dict,
    register_judge,
)
from genir_eval.judges.citations import kind as _citations_kind
from genir_eval.judges.item import kind as _item_kind
from genir_eval.judges.kinds import JudgeKind, judge_kind, judge_kinds, register_kind
from genir_eval.judges.links import kind as _links_kind
from genir_eval.judges.nuggets import kind as _nuggets_kind
from genir_eval.judges.offline.twins import BASELINE_NOTE
from genir_eval.judges.pairwise import kind as _pairwise_kind
from genir_eval.judges.parsing import ReplyError, extract_object
from genir_eval.judges.registry import judge_names, make_judge
from genir_eval.judges.rubric import kind as _rubric_kind
from genir_eval.judges.satisfaction import kind as _satisfaction_kind

#: The built-in judge kinds (:mod:`genir_eval.judges.kinds`), in the order the summary and
#: the report show them. A new kind is its folder and its line here.
BUILTIN_KINDS: tuple[JudgeKind, ...] = (
    _links_kind.KIND,
    spans.KIND,
    _satisfaction_kind.KIND,
    _item_kind.KIND,
    _rubric_kind.KIND,
    _citations_kind.KIND,
    _pairwise_kind.KIND,
    _nuggets_kind.KIND,
)
for _kind in BUILTIN_KINDS:
    register_kind(_kind)

__all__ = [
    "BASELINE_NOTE",
    "BUILTIN_KINDS",
    "JudgeKind",
    "judge_kind",
    "judge_kinds",
    "register_kind",
    "Judge",
    "JudgeStats",
    "Label",
    "ReplyError",
    "ask",
    "extract_object",
    "judge_names",
    "judge_sessions",
    "label_from_dict",
    "label_to_dict",
    "make_judge",
    "register_judge",
]
