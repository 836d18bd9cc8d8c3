"""The headline rule (genir_eval/meta/headline.py): which score a run leads with, given which
judges ran and the evidence that each tracks people."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.errors import ConfigError
from genir_eval.meta.headline import (
    EVIDENCE_PATH,
    Figure,
    choose_headline,
    evidence,
    figures_for,
    is_grounding,
    read_evidence,
)

ROOT = Path(__file__).resolve().parents[2]


def _figure(score: str, value: float, ci: tuple[float, float], statistic: str = "pair agreement"):
    return Figure(score, statistic, "made up", value, ci, 100, "offline twin", "by hand", "today")


# invented figures, so the rule is tested apart from what the package's file measured
FIGURES = (
    # lower bounds on a correlation's scale (an agreement a as 2a - 1, Kendall's tau of pairs)
    _figure("judge.a", 0.70, (0.60, 0.80)),  # 0.60 agreement: 0.20
    _figure("judge.b", 0.75, (0.55, 0.95)),  # 0.55 agreement: 0.10
    _figure("judge.b", 0.40, (0.25, 0.55), "Spearman"),  # 0.25
    _figure("judge.c", 0.52, (0.45, 0.60)),  # no evidence: the interval holds chance
    _figure("sdcg_urge", 0.30, (0.20, 0.40), "Spearman"),  # a measure, never a judge's score
)


@pytest.mark.parametrize(
    ("judges", "named", "expected"),
    [
        # the scenario's own headline is kept, whatever the evidence
        ([("a", "judge.a")], "sdcg_urge", ("sdcg_urge", "scenario", None)),
        # one judge with evidence leads, under its id in this run
        ([("c", "judge.c"), ("mine", "judge.a")], None, ("mine", "evidence", "judge.a")),
        # the highest lower bound above chance leads (judge.b's Spearman 0.25 > judge.a's 0.20)
        ([("a", "judge.a"), ("b", "judge.b")], None, ("b", "evidence", "judge.b")),
        # no judge with evidence: the fallback, said to have none
        ([("c", "judge.c"), ("x", "judge.x")], None, ("old", "no evidence", None)),
        ([], None, ("old", "no evidence", None)),
    ],
)
def test_which_score_leads(
    judges: list[tuple[str, str]], named: str | None, expected: tuple[str, str, str | None]
) -> None:
    chosen = choose_headline(judges, "old", named=named, figures=FIGURES)
    assert (chosen.score, chosen.chosen_by, chosen.judge) == expected


def test_a_tie_in_evidence_goes_to_the_scenarios_first_judge() -> None:
    figures = (_figure("j.1", 0.7, (0.6, 0.8)), _figure("j.2", 0.8, (0.6, 0.9)))
    assert choose_headline([("2", "j.2"), ("1", "j.1")], None, figures=figures).score == "2"
    assert choose_headline([("1", "j.1"), ("2", "j.2")], None, figures=figures).score == "1"


@pytest.mark.parametrize(
    ("figure", "verdict"),
    [
        (_figure("s", 0.685, (0.592, 0.783)), "better than chance"),
        (_figure("s", 0.484, (0.402, 0.556)), "chance-level"),
        (_figure("s", 0.393, (0.321, 0.473)), "worse than chance"),
        (_figure("s", 0.476, (-0.17, 0.81), "Spearman"), "no detectable relation with people"),
        (_figure("s", 0.374, (0.10, 0.60), "Spearman"), "tracks people"),
        (_figure("s", -0.374, (-0.60, -0.10), "Spearman"), "runs against people"),
    ],
)
def test_a_figure_says_whether_its_interval_clears_chance(figure: Figure, verdict: str) -> None:
    assert figure.verdict() == verdict
    assert verdict in figure.text()


@pytest.mark.parametrize(
    ("score", "grounding"),
    [
        ("sdcg_urge", True),
        ("sDCG-URGE(br=1.35, bq=1.05)", True),
        ("sdcg_urge@link_usefulness.true", True),
        ("gold:sdcg_urge", True),
        ("citation_precision", True),
        ("citation_precision(partial=0)", True),
        ("unsupported_claims", True),
        ("satisfaction.geval", False),
        ("z(sdcg_urge+satisfaction.urs)", False),
        ("my_judge", False),
    ],
)
def test_grounding_scores_are_the_measures(score: str, grounding: bool) -> None:
    assert is_grounding(score) is grounding


def test_the_package_evidence_names_its_commands_and_leads_with_a_quality_score() -> None:
    figures = evidence()
    assert figures
    for figure in figures:
        script = figure.command.split()[1] if figure.command.startswith("python ") else None
        if script is not None:
            assert (ROOT / script).is_file(), figure.command
        assert figure.ci95 is None or figure.ci95[0] <= figure.value <= figure.ci95[1]
    # whatever was measured, the rule never lets a grounding measure lead by evidence
    names = sorted({f.score for f in figures})
    chosen = choose_headline([(n, n) for n in names], None)
    assert chosen.score is None or not is_grounding(chosen.score)
    assert figures_for("no such judge") == []


def test_a_bad_evidence_row_is_a_located_error(tmp_path: Path) -> None:
    good = json.loads(EVIDENCE_PATH.read_text(encoding="utf-8"))["figures"][0]
    bad = {k: v for k, v in good.items() if k != "statistic"}
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps({"version": 1, "figures": [good, bad]}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"evidence\.json: figures\[1\].*statistic"):
        read_evidence(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="evidence.json"):
        read_evidence(path)
