"""What a loader returns: the sessions read and the errors of the ones it skipped."""

from __future__ import annotations

from dataclasses import dataclass, field

from genir_eval.errors import InputError
from genir_eval.records import Session

__all__ = ["LoadResult"]


@dataclass
class LoadResult:
    """Sessions in file order; ``skipped`` holds one located error per session left out.

    ``skipped`` is only ever non-empty when the loader was asked to ``skip_invalid``:
    otherwise the first error is raised.
    """

    sessions: list[Session] = field(default_factory=list)
    skipped: list[InputError] = field(default_factory=list)
