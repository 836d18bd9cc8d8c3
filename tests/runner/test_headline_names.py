"""A judge's evidence follows its registered name through a whole run, whatever id the
scenario gives it: the run's headline choice (runner/run.py) and the report's headline card
(report/card.py) both look it up by name. The expected figures are the package's evidence
file's rows for satisfaction.geval (genir_eval/data/headline_evidence.json), whose pair
agreement 0.677 [0.61, 0.74] on CrowdRAG clears chance."""

from __future__ import annotations

import json
from pathlib import Path

from genir_eval.meta.headline import figures_for
from genir_eval.report.card import headline_card
from genir_eval.rundir.folder import load_run
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.runner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_a_judge_under_another_id_still_leads_by_its_evidence(tmp_path: Path) -> None:
    out = tmp_path / "run"
    scenario = parse_scenario(
        {
            "version": 1,
            "name": "renamed",
            "input": {"path": str(ROOT / "fixtures" / "product_logs.md"), "format": "markdown"},
            "judges": [{"name": "satisfaction.geval", "id": "mine"}],
            "output": {"dir": str(out)},
        },
        base_dir=tmp_path,
    )
    run_scenario(scenario, out_dir=out, overrides=Overrides(cache="none", journal="none"))
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert info["headline"] == {
        "score": "mine",
        "chosen_by": "evidence",
        "judge": "satisfaction.geval",
    }
    card = headline_card(load_run(out))
    assert card is not None and card.score == "mine" and card.judge == "satisfaction.geval"
    stored = figures_for("satisfaction.geval")
    assert len(stored) >= 1 and sorted(card.figures, key=repr) == sorted(stored, key=repr)
    assert card.tracks
