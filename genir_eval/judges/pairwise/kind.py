"""The pairwise preference kind: its verdicts compare two answers, so it gives no score
of its own to a turn or a session and meets people's preferences through
:mod:`genir_eval.meta.preferences` (its rows and rankings: :mod:`.rows`, :mod:`.ranking`)."""

from __future__ import annotations

from genir_eval.judges.kinds import JudgeKind
from genir_eval.kind_names import PAIRWISE
from genir_eval.records import PREFERENCE as EVIDENCE

__all__ = ["Pairwise", "KIND"]


class Pairwise(JudgeKind):
    name = PAIRWISE
    evidence = EVIDENCE


KIND = Pairwise()
