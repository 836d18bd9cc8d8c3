"""Limits that keep a run within what a provider accepts, one module per concept.

- :mod:`~genir_eval.llm.limits.concurrency`: requests in flight (:class:`AdaptiveLimit`, AIMD)
  and judgments between entering the engine and their stored answer (:class:`LookupWindow`).
- :mod:`~genir_eval.llm.limits.window`: the sliding window of sends a request rate is kept
  through (:class:`SendWindow`, which says why a window rather than even pacing or a token
  bucket).
- :mod:`~genir_eval.llm.limits.rate`: a configured request rate (:class:`RequestRate`); a retry
  of a judgment already begun goes before new work.
- :mod:`~genir_eval.llm.limits.learned`: without one, the rate the provider accepts, learned
  from its replies (:class:`LearnedRate`).
- :mod:`~genir_eval.llm.limits.tokens`: tokens per minute (:class:`TokenBudget`).
- :mod:`~genir_eval.llm.limits.budget`: what a run may spend in all (:class:`Budget`:
  ``--max-cost``, ``--max-tokens``).
"""

from genir_eval.llm.limits.budget import Budget, Spend
from genir_eval.llm.limits.concurrency import AdaptiveLimit, LookupWindow
from genir_eval.llm.limits.learned import LearnedRate
from genir_eval.llm.limits.rate import RateGate, RequestRate
from genir_eval.llm.limits.tokens import Reservation, TokenBudget
from genir_eval.llm.limits.window import Send, SendWindow

__all__ = [
    "AdaptiveLimit",
    "Budget",
    "Spend",
    "LearnedRate",
    "LookupWindow",
    "RateGate",
    "RequestRate",
    "Reservation",
    "Send",
    "SendWindow",
    "TokenBudget",
]
