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
- ``offline/``: the offline twins (``twins``, ``item``, ``rubric``, ``citations``) and their features
  (``features``, ``lexical``).

Importing this package registers the built-in judges (one module each) and their offline
twins with the engine's offline provider.
"""

from genir_eval.judges import spans  # noqa: F401 - imported for their registrations
from genir_eval.judges.base import (
    Judge,
    JudgeStats,
    Label,
    ask,
    judge_names,
    judge_sessions,
    label_from_dict,
    label_to_dict,
    make_judge,
    register_judge,
)
from genir_eval.judges.citations import support  # noqa: F401
from genir_eval.judges.item import judge as _item_judge  # noqa: F401
from genir_eval.judges.links import dna, listwise, true  # noqa: F401
from genir_eval.judges.offline import citations as _citation_twin  # noqa: F401
from genir_eval.judges.offline import item as _item_twin  # noqa: F401
from genir_eval.judges.offline import rubric as _rubric_twin  # noqa: F401
from genir_eval.judges.offline import twins  # noqa: F401
from genir_eval.judges.offline.twins import BASELINE_NOTE
from genir_eval.judges.pairwise import PairwiseJudge as _pairwise  # noqa: F401
from genir_eval.judges.parsing import ReplyError, extract_object
from genir_eval.judges.rubric import grading  # noqa: F401
from genir_eval.judges.satisfaction import gah, geval, urs  # noqa: F401

__all__ = [
    "BASELINE_NOTE",
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
