"""genir-eval: evaluate generative search sessions against what users found useful.

The records (:class:`Session` and its parts) are imported eagerly and cheaply; the working
functions are imported on first use (PEP 562), so ``import genir_eval.records`` does not pull
in scipy, the judges or the engine. A worked example is in :mod:`genir_eval.runner`'s
docstring.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from genir_eval.records import (
    Dissatisfaction,
    Gold,
    Link,
    Segment,
    Session,
    Statement,
    Turn,
    session_from_dict,
    session_to_dict,
)

if TYPE_CHECKING:
    from genir_eval.ingest import load_sessions, write_jsonl
    from genir_eval.judges import judge_sessions, make_judge
    from genir_eval.meta.urge_table import urge_table
    from genir_eval.runner import (
        assert_run,
        compare_runs,
        load_run,
        load_scenario,
        run_scenario,
    )
    from genir_eval.runner.export import load_tables

from genir_eval.records import PACKAGE_VERSION as __version__

# name -> the module it lives in, imported when the name is first asked for
_LAZY = {
    "load_sessions": "genir_eval.ingest",
    "write_jsonl": "genir_eval.ingest",
    "make_judge": "genir_eval.judges",  # the package: importing it registers the judges
    "judge_sessions": "genir_eval.judges",
    "load_scenario": "genir_eval.runner",
    "run_scenario": "genir_eval.runner",
    "load_run": "genir_eval.runner",
    "load_tables": "genir_eval.runner.export",
    "compare_runs": "genir_eval.runner",
    "assert_run": "genir_eval.runner",
    "urge_table": "genir_eval.meta.urge_table",
}

__all__ = [
    "__version__",
    # records
    "Dissatisfaction",
    "Gold",
    "Link",
    "Segment",
    "Session",
    "Statement",
    "Turn",
    "session_from_dict",
    "session_to_dict",
    # logs in and out
    "load_sessions",
    "write_jsonl",
    # judges
    "make_judge",
    "judge_sessions",
    # runs
    "load_scenario",
    "run_scenario",
    "load_run",
    "load_tables",
    "compare_runs",
    "assert_run",
    # meta-evaluation
    "urge_table",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'genir_eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
