"""Moved to :mod:`genir_eval.stats.resample` (generic statistics the judge kinds' comparisons
with gold read too); its names stay importable from here."""

from genir_eval.stats.resample import *  # noqa: F403
from genir_eval.stats.resample import __all__  # noqa: F401
