"""Scores against the users' binary feedback (thumbs): AUC and point-biserial r."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.cli import main
from genir_eval.meta.stats import binary_agreement
from genir_eval.runner.run import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[2]

# Computed by hand: positives {0.35, 0.8, 0.9, 0.7, 0.6}, negatives {0.1, 0.4, 0.2, 0.5,
# 0.3}; 23 of the 25 (positive, negative) pairs are ordered right -> AUC 0.92.
SCORES = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.7, 0.5, 0.3, 0.6]
THUMBS = [0, 0, 1, 1, 1, 0, 1, 0, 0, 1]


def test_auc_and_point_biserial_by_hand() -> None:
    result = binary_agreement(SCORES, THUMBS, n_boot=500, seed=0)
    assert result["n"] == 10 and result["n_up"] == 5 and result["n_down"] == 5
    assert result["auc"] == pytest.approx(0.92, abs=1e-12)
    # point-biserial r = (M1 - M0) / s_n * sqrt(p q): means 0.67 and 0.30, s_n (ddof 0)
    # of the ten scores 0.2491, p = q = 0.5 -> 0.7428
    assert result["point_biserial"] == pytest.approx(0.7428, abs=1e-4)
    lo, hi = result["ci95"]["auc"]
    assert lo <= 0.92 <= hi and hi <= 1.0


def test_ties_count_half_and_missing_pairs_are_dropped() -> None:
    result = binary_agreement([1.0, 1.0, None, 2.0], [1, 0, 1, None], n_boot=0)
    assert result["n"] == 2 and result["auc"] == pytest.approx(0.5)


def test_one_class_only_has_no_auc() -> None:
    assert binary_agreement([1.0, 2.0], [1, 1])["auc"] is None


def test_large_samples_use_normal_intervals() -> None:
    result = binary_agreement(SCORES * 3000, THUMBS * 3000)
    lo, hi = result["ci95"]["auc"]
    assert lo < 0.92 < hi and hi - lo < 0.02


def test_outcomes_must_be_binary() -> None:
    with pytest.raises(ValueError):
        binary_agreement([1.0, 2.0], [1, 2])


@pytest.mark.slow
def test_feedback_run_meta_summary_and_report(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "fb"
    run = run_scenario(
        ROOT / "scenarios" / "product-feedback.toml",
        out_dir=out,
        overrides=Overrides(cache="none", journal="none"),
    )
    assert run.meta is not None and not run.meta["correlations"]
    urs = run.meta["feedback"]["turn"]["satisfaction.urs"]
    # 18 turns, one without a thumb (fb-006 turn 2): 11 up, 6 down in the fixture
    assert (urs["n"], urs["n_up"], urs["n_down"]) == (17, 11, 6)
    thumbs = [t.thumbs for t in run.turns]
    scores = [t.scores.get("satisfaction.urs") for t in run.turns]
    assert urs["auc"] == pytest.approx(binary_agreement(scores, thumbs, n_boot=0)["auc"])
    assert (
        main(
            [
                "run",
                str(ROOT / "scenarios" / "product-feedback.toml"),
                "--out",
                str(out),
                "--cache",
                "none",
                "--journal",
                "none",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Turn scores vs the users' thumbs up/down" in text and "Session scores" in text
    soup = BeautifulSoup((out / "report.html").read_text(encoding="utf-8"), "html.parser")
    rows = soup.select("#feedback-agreement tr")[1:]
    assert len(rows) == len(run.meta["feedback"]["turn"])
    # no satisfaction: the headline shows the scores' own means, no correlation card
    assert soup.select("#headline #score-cards .card")
    assert soup.find(id="headline-session-spearman") is None
    assert "still failing, the answer did not help" in soup.get_text()
    assert soup.select(".turn .down") and soup.select(".turn .up")
    assert json.loads((out / "turns.jsonl").read_text().splitlines()[0])["thumbs"] == 1
