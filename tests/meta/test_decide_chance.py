"""Each statistic's chance level and the verdict it gives (genir_eval/meta/decide.py), one row
per statistic the verdicts name, and the thumbs' verdict of a run read through it.

Chance, from the statistics' definitions (not from the module's table): a correlation of any
kind (Pearson, Spearman, Kendall, the point-biserial r, which is Pearson's r with a 0/1
variable) and Cohen's kappa are 0 when the score knows nothing; an AUC and a pair agreement
(the share of pairs ordered as people ordered them) are 0.5."""

from __future__ import annotations

import pytest

from genir_eval.meta.decide import Verdict, chance_of, relation, statistic_label

# (statistic as the code names it, chance from its definition, printed name)
CHANCE = [
    ("pearson", 0.0, "Pearson r"),
    ("spearman", 0.0, "Spearman rho"),
    ("kendall", 0.0, "Kendall tau"),
    ("point_biserial", 0.0, "point-biserial r"),
    ("point-biserial r", 0.0, "point-biserial r"),
    ("r", 0.0, "r"),
    ("kappa", 0.0, "kappa"),
    ("auc", 0.5, "AUC"),
    ("pair agreement", 0.5, "pair agreement"),
    ("agreement", 0.5, "agreement"),
]


@pytest.mark.parametrize(("statistic", "chance", "label"), CHANCE)
def test_each_statistic_is_read_against_its_own_chance(
    statistic: str, chance: float, label: str
) -> None:
    assert chance_of(statistic) == chance
    assert statistic_label(statistic) == label
    # an interval just above chance tracks, just below runs against, across it neither
    # (n = 30: enough for an interval)
    above = relation(statistic, chance + 0.2, (chance + 0.05, chance + 0.35), 30)
    below = relation(statistic, chance - 0.2, (chance - 0.35, chance - 0.05), 30)
    across = relation(statistic, chance, (chance - 0.1, chance + 0.1), 30)
    assert (above.severity, below.severity, across.severity) == ("good", "bad", "none")


@pytest.mark.parametrize("statistic", ["point_biserial", "point-biserial r"])
def test_a_point_biserial_r_between_0_and_one_half_tracks_the_thumbs(statistic: str) -> None:
    # r = 0.30 [0.10, 0.45] over 40 turns: wholly above 0, the r's chance; read against an
    # AUC's 0.5 it would run against the users instead
    verdict = relation(statistic, 0.30, (0.10, 0.45), 40, against="users")
    assert verdict == Verdict("tracks users", "good")
    # and a negative one [-0.45, -0.10] runs against them, where 0.5 would call it the same
    assert relation(statistic, -0.3, (-0.45, -0.10), 40) == Verdict("runs against users", "bad")
    # an interval over 0 is no relation, whatever it is next to 0.5
    assert relation(statistic, 0.1, (-0.05, 0.25), 40).severity == "none"
