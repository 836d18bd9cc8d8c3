"""The report of real runs as a browser shows it: a product's unlabelled logs and the URGE
sample, rendered by headless Chromium at 800 and 1400 px.

The DOM Chromium builds must hold the score table, the session index (every session, each
linking to its turns) and a turn whose citation markers link to its sources and whose sources
carry the judges' labels and reasons. The page must not be wider than the window (the layout
holds at 800 px: wide tables scroll inside their own box). Screenshots are written to
``$GENIR_SCREENSHOTS`` (default: the test's temporary folder) for a person to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser import run_chromium
from bs4 import BeautifulSoup

from genir_eval.report.html import CSP
from genir_eval.runner.run import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = Overrides(cache="none", journal="none")
WIDTHS = (800, 1400)


@pytest.fixture(scope="module")
def product_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("product")
    run = run_scenario(ROOT / "scenarios" / "product-offline.toml", out_dir=out, overrides=OFFLINE)
    assert run.meta is None  # no satisfaction in these logs: the unlabelled case
    return out


@pytest.fixture(scope="module")
def urge_run(tmp_path_factory: pytest.TempPathFactory, urge_sample_path: Path) -> Path:
    out = tmp_path_factory.mktemp("urge")
    run_scenario(ROOT / "scenarios" / "urge-offline.toml", out_dir=out, overrides=OFFLINE)
    return out


def _dom(report: Path, width: int, profile: Path) -> tuple[BeautifulSoup, int]:
    """The DOM Chromium builds at a window ``width`` px wide, and the page's scroll width.
    The report forbids scripts, so a copy whose CSP lets one measuring script run (it only
    sets the title) is loaded instead."""
    probe = report.with_name(f"probe-{width}.html")
    text = report.read_text(encoding="utf-8").replace(
        CSP, "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"
    )
    script = "<script>document.title = 'W=' + document.documentElement.scrollWidth;</script>"
    probe.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    try:
        html = run_chromium(profile, f"--window-size={width},1200", "--dump-dom", probe.as_uri())
    finally:
        probe.unlink()
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title
    assert title is not None and title.get_text().startswith("W="), title
    for script in soup.find_all("script"):
        script.decompose()  # the probe's own; the report has none (checked below)
    return soup, int(title.get_text()[2:])


def _screenshot(report: Path, width: int, name: str, profile: Path) -> bytes:
    folder = Path(os.environ.get("GENIR_SCREENSHOTS") or profile.parent)
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"{name}-{width}.png"
    run_chromium(profile, f"--screenshot={png}", f"--window-size={width},4000", report.as_uri())
    return png.read_bytes()


def _check_report(soup: BeautifulSoup, n_sessions: int) -> None:
    # the score table: one row per session score, each with n and a mean
    rows = soup.select("#scores-session tr[data-score]")
    assert rows, "no score table"
    for row in rows:
        cells = row.find_all("td")
        assert re.fullmatch(r"\d+", cells[1].get_text()), cells[1]
    assert soup.select("#scores-session svg.hist")
    # the session index lists every session, each linking to its turns
    index = soup.select("#session-index table.session-index tr")[1:]
    assert len(index) == n_sessions
    for link in soup.select("#session-index a"):
        assert soup.find(id=link["href"].removeprefix("#")) is not None, link["href"]
    # a turn with citation markers linked to its source rows, and judges' reasons
    markers = soup.select(".turn .response a.cite")
    assert markers, "no citation marker in any turn"
    for marker in markers:
        target = soup.find(id=marker["href"].removeprefix("#"))
        assert target is not None and target.name == "tr", marker["href"]
    reasons = [r.get_text() for r in soup.select(".turn table.sources .reason")]
    assert any(r.strip() for r in reasons), "no judge reason next to a source"
    assert soup.select(".turn details.raw pre"), "no raw reply"
    assert soup.find(id="glossary") is not None and soup.find(id="offline-banner") is not None


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_unlabelled_product_run(product_run: Path, tmp_path: Path, width: int) -> None:
    report = product_run / "report.html"
    assert "<script" not in report.read_text(encoding="utf-8")
    soup, page_width = _dom(report, width, tmp_path / "profile")
    assert page_width <= width  # the layout holds: nothing wider than the window
    _check_report(soup, 12)
    assert soup.find(id="no-meta") is not None
    # nothing to correlate with: the headline is the scores' own means, no correlation card
    assert soup.select("#headline #score-cards .card")
    assert soup.find(id="headline-session-spearman") is None
    # the logged <script> of session acme-008 is text, and the sessions without citations
    # are counted as missing with their reason
    assert "<script>alert('x')</script>" in soup.get_text()  # shown as text
    sdcg = soup.select_one("#scores-session tr[data-score='sdcg_urge']")
    assert sdcg is not None and "2 no citations" in sdcg.get_text()
    agreement = soup.select("#judge-agreement-links tr")
    assert len(agreement) == 2  # the two link judges compared without gold
    # both are offline twins: the page says their agreement is the heuristics' own
    assert soup.find(id="twin-agreement-note") is not None
    assert _screenshot(report, width, "product", tmp_path / "profile")[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_urge_run(urge_run: Path, tmp_path: Path, width: int) -> None:
    report = urge_run / "report.html"
    assert "<script" not in report.read_text(encoding="utf-8")
    soup, page_width = _dom(report, width, tmp_path / "profile")
    assert page_width <= width
    _check_report(soup, 12)
    assert soup.find(id="headline-session-spearman") is not None
    # gold and predicted useful spans are highlighted in the responses
    assert soup.select(".response .g-user") and soup.select(".response .pred")
    assert _screenshot(report, width, "urge", tmp_path / "profile")[:8] == b"\x89PNG\r\n\x1a\n"


def test_numbers_never_print_as_negative_zero() -> None:
    # a coefficient of -0.0004 rounds to zero: printed 0.000, while -0.001 keeps its sign
    from genir_eval.report import judge_quality, summary
    from genir_eval.report.views import fmt

    for number in (fmt, summary._num, judge_quality._num):
        assert number(-0.0004) == "0.000" and number(-0.0) == "0.000"
        assert number(-0.001) == "-0.001"
    entry = {"n": 20, "spearman": -0.001, "ci95": {"spearman": [-0.004, 0.3]}}
    assert summary._with_ci(entry, "spearman") == "-0.001 [0.00, 0.30]"
