"""Moved to :mod:`genir_eval.stats.ppi` (generic statistics the judge kinds' comparisons
with gold read too); its names stay importable from here."""

from genir_eval.stats.ppi import *  # noqa: F403
from genir_eval.stats.ppi import __all__  # noqa: F401
