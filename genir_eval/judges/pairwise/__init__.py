"""The pairwise preference judge kind: which of two answers people would prefer.

Everything that knows the kind lives here: the judge (:mod:`.judge`), its offline twin
(:mod:`.twin`), how its verdicts become rows and meet gold (:mod:`.rows`) and the rankings
built from them (:mod:`.ranking`: Bradley-Terry with ties, style control, cycles).
Importing the package registers the judge and its twin.
"""

from genir_eval.judges.base import register_judge
from genir_eval.judges.pairwise.judge import (
    NAME,
    Option,
    Pair,
    PairVerdict,
    PairwiseJudge,
    combine,
    parse_preference,
)

register_judge(NAME)(PairwiseJudge)

__all__ = ["Option", "Pair", "PairVerdict", "PairwiseJudge", "combine", "parse_preference"]
