"""Evidence measured on other data in a run's verdict (genir_eval/report/verdict.py): it is
shown, it counts as evidence that the headline tracks people, and it is never read as this
run's own figure in "what to look at next".

The runs are real offline runs of the product logs (fixtures/product_logs.md: no users'
ratings, so the headline has no figure of this run against people), each naming its
headline. The expected figures are the package's evidence file's rows, read by hand:
satisfaction.geval's pair agreement 0.677 [0.61, 0.74] on CrowdRAG (wholly above chance,
0.5: it tracks people), citation_precision's 0.393 [0.32, 0.47] (wholly below: it runs
against them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from genir_eval.report.verdict import run_verdict, verdict_lede
from genir_eval.rundir.folder import load_run
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.runner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "product_logs.md"


def _run(out: Path, headline: str):
    scenario = parse_scenario(
        {
            "version": 1,
            "name": f"evidence-{headline}",
            "input": {"path": str(LOGS), "format": "markdown"},
            "judges": [
                {"name": "citation_support", "options": {"allow_title_only": True}},
                {"name": "satisfaction.geval"},
            ],
            "aggregate": {"measures": ["citation_precision"]},
            "meta": {"headline": headline},
            "output": {"dir": str(out)},
        },
        base_dir=out.parent,
    )
    run_scenario(scenario, out_dir=out, overrides=Overrides(cache="none", journal="none"))
    return load_run(out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("evidence")
    return {h: _run(base / h, h) for h in ("satisfaction.geval", "citation_precision")}


def test_evidence_that_the_headline_tracks_people_counts_as_evidence(runs) -> None:
    verdict = run_verdict(runs["satisfaction.geval"])
    subjects = {d.subject: d for d in verdict.decisions}
    evidence = subjects["headline satisfaction.geval, measured before on other data"]
    assert evidence.verdict.words == "better than chance"
    assert evidence.verdict.severity == "good"
    assert evidence.figure.startswith("pair agreement 0.677 [0.61, 0.74] (n = 186)")
    # the headline tracks people by that evidence: no step asks to measure it, and none
    # offers the evidence line itself as a better headline
    assert not [s for s in verdict.next if s.startswith("nothing shows that")]
    assert not [s for s in verdict.next if "consider it as the headline" in s]
    assert not [s for s in verdict.next if "measured before" in s]


def test_evidence_measured_elsewhere_is_not_this_runs_own_bad_news(runs) -> None:
    verdict = run_verdict(runs["citation_precision"])
    subjects = {d.subject: d for d in verdict.decisions}
    evidence = subjects["headline citation_precision, measured before on other data"]
    assert evidence.verdict.words == "worse than chance"
    assert evidence.figure.startswith("pair agreement 0.393 [0.32, 0.47] (n = 239)")
    # shown in the verdict, but no step treats it as a figure of this run: nothing of this
    # run runs against people, and nothing shows that the headline tracks them
    assert not [s for s in verdict.next if "measured before" in s or "worse than chance" in s]
    assert (
        "nothing shows that citation_precision tracks people: label a sample "
        "(genir-eval label) to measure it"
    ) in verdict.next
    # what the headline is a score of, in its declared evidence kind's words
    # (genir_eval/records.py: citation support)
    assert any(s.startswith("citation_precision is a citation-support score") for s in verdict.next)


def test_the_one_line_verdict_leads_with_this_runs_own_decision(runs) -> None:
    verdict = run_verdict(runs["citation_precision"])
    assert verdict.decisions[0].subject.endswith("measured before on other data")
    lede = verdict_lede(verdict)
    # this run's decision (its mean on its own), not the evidence listed before it
    assert "In short</b>: headline citation_precision: <b>no users&#x27; ratings" in lede
    assert "measured before" not in lede and "worse than chance" not in lede
