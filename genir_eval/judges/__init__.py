"""genir-eval judges stage: Session -> labels, through the llm engine.

Importing this package registers the built-in judges (one module each) and their offline
twins with the engine's offline provider.
"""

from genir_eval.judges import (  # noqa: F401 - imported for their registrations
    item,
    link_dna,
    link_listwise,
    link_true,
    offline,
    rubric,
    satisfaction_gah,
    satisfaction_geval,
    satisfaction_urs,
    spans,
)
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
from genir_eval.judges.offline import BASELINE_NOTE
from genir_eval.judges.parsing import ReplyError, extract_object

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
