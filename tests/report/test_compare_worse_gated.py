"""``compare --html``'s list of sessions that got worse (genir_eval/report/comparison.py)
follows the score that regressed, not the first score compared: a reader is shown the
sessions behind the verdict. The documents are written by hand (compare's JSON, one per
score): the first score passes with session s0 worse, the second regresses with s1 worse;
the runs are two small offline URS runs holding both sessions."""

from __future__ import annotations

from typing import Any

import pytest

from genir_eval.report.comparison import render_comparison
from genir_eval.rundir.folder import load_run


def _session(sid: str) -> dict[str, object]:
    return {
        "version": 1,
        "session_id": sid,
        "language": "en",
        "turns": [{"index": 1, "query": f"alpha {sid}?", "response_text": f"alpha {sid}"}],
    }


def _document(metric: str, verdict: str, worse_key: str) -> dict[str, Any]:
    return {
        "metric": metric,
        "level": "session",
        "n": 2,
        "mean_a": 1.0,
        "mean_b": 0.75,
        "mean_delta": -0.25,
        "ci95": [-0.5, 0.0],
        "p_value": 0.5,
        "p_exact": True,
        "cohen_dz": None,
        "higher_is_better": True,
        "missing": [],
        "only_a": [],
        "only_b": [],
        "worse": [{"key": worse_key, "a": 1.0, "b": 0.5, "delta": -0.5}],
        "verdict": verdict,
        "reasons": ["second_score: mean dropped"] if verdict == "regression" else [],
        "undecided": [],
        "notes": [],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, urs_run) -> tuple[Any, Any]:
    folder = tmp_path_factory.mktemp("gated")
    sessions = [_session("s0"), _session("s1")]
    return load_run(urs_run(folder, "a", sessions)), load_run(urs_run(folder, "b", sessions))


@pytest.mark.parametrize("order", ["pass-first", "regression-first"])
def test_the_worse_sessions_are_the_regressed_scores(runs: tuple[Any, Any], order: str) -> None:
    documents = [
        _document("first_score", "pass", "s0"),
        _document("second_score", "regression", "s1"),
    ]
    if order == "regression-first":
        documents.reverse()
    run_a, run_b = runs
    page = render_comparison(
        documents, verdict="regression", rule="REGRESSION (exit 1)", run_a=run_a, run_b=run_b
    )
    worse = page[page.index("<h2 id='worse'>") :]
    assert worse.startswith("<h2 id='worse'>Got worse first, by second_score")
    assert "<h3>1. s1:" in worse and "<h3>1. s0:" not in worse
    banner = page[page.index("id='verdict'") : page.index("<h2 id='worse'>")]
    assert "Got worse most: <b>s1</b>" in banner


def test_without_a_regression_the_first_score_is_listed(runs: tuple[Any, Any]) -> None:
    documents = [_document("first_score", "pass", "s0"), _document("second_score", "pass", "s1")]
    run_a, run_b = runs
    page = render_comparison(documents, verdict="pass", rule="PASS", run_a=run_a, run_b=run_b)
    worse = page[page.index("<h2 id='worse'>") :]
    assert worse.startswith("<h2 id='worse'>Got worse first, by first_score")
    assert "<h3>1. s0:" in worse
