"""What a reader sees first, at 1280 and 800 px: the report of a failed run opens with the
failure, an unlabelled product run with its headline score, the URGE run with the
correlation with users, a citation-support run with its verdicts.

Headless Chromium lays each real report out in a window of the width and one screen's
height (:data:`SCREEN`); a measuring script let into a copy of the page reports where the
wanted elements lie and the text shown above the fold (``browser.layout``). Screenshots go
to ``$GENIR_SCREENSHOTS`` (default: the test's temporary folder) for a person to look at.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from browser import layout, run_chromium

from genir_eval.report.worst import worst_sessions
from genir_eval.rundir.folder import load_run
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.testing.fake_llm_server import FakeLLMServer, Fault

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = Overrides(cache="none", journal="none")
WIDTHS = (1280, 800)
SCREEN = 900  # the first screen's height, px

WANTED = [
    "#verdict-lede",
    "#run-verdict",
    "#run-failed",
    "#run-partial",
    "#headline",
    "#score-cards",
    "#headline-session-spearman",
    "#headline-turn-spearman",
    ".citation-verdicts",
    ".citation-verdicts .level",
    "#failures-section",
    "#sessions",
    "#details",
    "#failed-scores",
]


def _scenario_run(name: str, out: Path) -> Path:
    run_scenario(ROOT / "scenarios" / f"{name}.toml", out_dir=out, overrides=OFFLINE)
    return out


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every link judgment refused by the endpoint (a 400 for each call): the run fails."""
    folder = tmp_path_factory.mktemp("failed")
    with (
        FakeLLMServer(reply=lambda request: Fault("bad_request")) as server,
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setenv("OPENAI_API_KEY", server.api_key)
        scenario = folder / "failed.toml"
        scenario.write_text(
            f"""
name = "failed"
[input]
path = {json.dumps(str(ROOT / "fixtures" / "product_logs.md"))}
format = "markdown"
[llm]
provider = "openai"
model = "gpt-4o-mini"
base_url = {json.dumps(server.openai_base_url)}
[engine]
concurrency = 4
cache = false
max_attempts = 2
[[judges]]
name = "link_usefulness.dna"
[meta]
headline = "sdcg_urge"
""",
            encoding="utf-8",
        )
        run = run_scenario(scenario, out_dir=folder / "run", overrides=OFFLINE)
    assert run.info["status"]["ok"] is False
    return folder / "run"


@pytest.fixture(scope="module")
def product_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _scenario_run("product-offline", tmp_path_factory.mktemp("product"))


@pytest.fixture(scope="module")
def urge_run(tmp_path_factory: pytest.TempPathFactory, urge_sample_path: Path) -> Path:
    return _scenario_run("urge-offline", tmp_path_factory.mktemp("urge"))


@pytest.fixture(scope="module")
def feedback_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _scenario_run("product-feedback", tmp_path_factory.mktemp("feedback"))


@pytest.fixture(scope="module")
def citation_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _scenario_run("demo-citations", tmp_path_factory.mktemp("citations"))


def _first_screen(run: Path, width: int, tmp_path: Path, name: str) -> dict[str, Any]:
    report = run / "report.html"
    seen = layout(report, width, SCREEN, WANTED, tmp_path / "profile")
    assert seen["width"] <= width  # nothing wider than the window
    folder = Path(os.environ.get("GENIR_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"first-screen-{name}-{width}.png"
    run_chromium(
        tmp_path / "profile",
        f"--screenshot={png}",
        f"--window-size={width},{SCREEN}",
        report.as_uri(),
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return seen


def _says_the_verdict_and_the_worst_session(run: Path, seen: dict[str, Any]) -> str:
    """The verdict and its first next step, the worst session by name, are on the first
    screen; returns the first screen's text (the space the probe puts between inline
    elements before a colon taken out)."""
    text = re.sub(r"\s+:", ":", str(seen["first_screen"]))
    assert _on_first_screen(seen, "#verdict-lede")
    # the whole verdict follows the cards, before every table
    assert seen["elements"]["#run-verdict"]["top"] < seen["elements"]["#sessions"]["top"]
    assert "In short:" in text
    score, worst, _ = worst_sessions(load_run(run), 1)
    assert score is not None and worst
    assert f"read the worst session first: {worst[0].session_id} ({score} " in text
    return text


def _on_first_screen(seen: dict[str, Any], selector: str) -> bool:
    box = seen["elements"][selector]
    return bool(box and box["visible"] and box["bottom"] <= SCREEN)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_failed_run_opens_with_the_failure(failed_run: Path, tmp_path: Path, width: int) -> None:
    seen = _first_screen(failed_run, width, tmp_path, "failed")
    text = seen["first_screen"]
    assert _on_first_screen(seen, "#run-failed")
    assert "Run failed: these scores are not a result" in text
    # the reasons grouped, with their count and the endpoint they came from
    assert "29 calls failed with a permanent error" in text
    assert "bad request" in text and "127.0.0.1" in text and "gpt-4o-mini" in text
    # no score presented as a result: the score parts are folded away, below the failures
    for selector in ("#headline", "#score-cards"):
        box = seen["elements"][selector]
        assert box is not None and box["folded"] and not box["visible"], selector
    assert "sdcg_urge" not in text and "95% CI" not in text
    assert seen["elements"]["#failures-section"]["top"] < seen["elements"]["#sessions"]["top"]


@pytest.mark.parametrize("width", WIDTHS)
def test_an_unlabelled_run_opens_with_its_headline_score(
    product_run: Path, tmp_path: Path, width: int
) -> None:
    seen = _first_screen(product_run, width, tmp_path, "product")
    text = seen["first_screen"]
    assert _on_first_screen(seen, "#score-cards")
    assert "sdcg_urge" in text and "(headline)" in text and "95% CI [" in text
    assert "No user satisfaction in the input" in text
    assert seen["elements"]["#run-failed"] is None and seen["elements"]["#run-partial"] is None
    text = _says_the_verdict_and_the_worst_session(product_run, seen)
    # the headline's number with its scale and what it is, not a bare figure
    assert "a score on its own" in text and "higher is better" in text
    assert "no detectable relation with people" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_a_run_with_thumbs_opens_with_the_thumbs_verdicts(
    feedback_run: Path, tmp_path: Path, width: int
) -> None:
    seen = _first_screen(feedback_run, width, tmp_path, "feedback")
    text = _says_the_verdict_and_the_worst_session(feedback_run, seen)
    assert "thumbs" in text
    # a chance-level AUC is said as such, with its interval
    assert "chance-level: AUC" in text
    # the headline's relation with the thumbs, not "no users' ratings", is what "In short"
    # says, and no line above the thumbs denies that the input holds users' judgments
    assert "In short: headline sdcg_urge vs the users' thumbs: chance-level" in text
    assert "No user satisfaction" not in text and "no users' ratings" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_the_urge_run_opens_with_the_correlation_with_users(
    urge_run: Path, tmp_path: Path, width: int
) -> None:
    seen = _first_screen(urge_run, width, tmp_path, "urge")
    text = seen["first_screen"]
    for selector in ("#headline-turn-spearman", "#headline-session-spearman"):
        assert _on_first_screen(seen, selector), selector
    assert "against the users' own satisfaction ratings" in text and "Spearman" in text
    text = _says_the_verdict_and_the_worst_session(urge_run, seen)
    assert "no detectable relation with users" in text
    # a 12-session page reaches its per-session evidence within a few screens
    assert seen["elements"]["#sessions"]["top"] < 8.5 * SCREEN  # after the verdict's lede


@pytest.mark.parametrize("width", WIDTHS)
def test_a_citation_run_opens_with_its_verdicts(
    citation_run: Path, tmp_path: Path, width: int
) -> None:
    seen = _first_screen(citation_run, width, tmp_path, "citations")
    text = seen["first_screen"]
    assert _on_first_screen(seen, ".citation-verdicts")
    # the row label (the judge's name, citation_support) fits its column, not cut behind
    # the cards beside it
    assert not seen["elements"][".citation-verdicts .level"]["overflows"]
    for words in ("fully supported", "partly supported", "not supported", "citations"):
        assert words in text, words
    # one link has no source text on purpose: a partial run, said so at the top
    assert _on_first_screen(seen, "#run-partial")
    # the share per judge, as the threshold reads it (1 of 17, not 1 of every judge's 25)
    assert "1 judgment missing: citation_support 1 of 17 (5.9%)" in text
    assert "no source text" in text
    text = _says_the_verdict_and_the_worst_session(citation_run, seen)
    assert "too few to tell" in text and "[-1.00, 1.00]" not in text
    # a 'too few to tell' line is as large as the text around it (its severity's class once
    # took the page's .small rule: 80%)
    lede = seen["elements"]["#verdict-lede"]
    assert lede["font_size"] == seen["body_font_size"]
