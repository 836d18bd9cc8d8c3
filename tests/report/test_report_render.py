"""The report as a browser sees it: headless Chromium loads the file, no network
(Chromium is found and started by ``browser.py``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from browser import run_chromium
from bs4 import BeautifulSoup

from genir_eval.report.html import write_report

pytestmark = pytest.mark.browser


def _run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    stdout = run_chromium(tmp_path / "chromium-profile", *args)
    return subprocess.CompletedProcess(args, 0, stdout=stdout)


def test_rendered_dom_has_headline_and_plots_and_no_injection(
    run_dir: Path, tmp_path: Path
) -> None:
    report = write_report(run_dir)
    dom = _run_chromium(tmp_path, "--dump-dom", report.as_uri()).stdout
    soup = BeautifulSoup(dom, "html.parser")
    meta = json.loads((run_dir / "meta.json").read_text())
    for level in ("turn", "session"):
        expected = meta["correlations"][level]["sdcg_urge"]["spearman"]
        card = soup.find(id=f"headline-{level}-spearman")
        assert card is not None, f"headline card for {level} missing from the DOM"
        assert card.find(class_="value").get_text() == f"{expected:.3f}"
    assert len(soup.find_all("svg")) >= 2
    assert soup.select("#scatter svg circle, #scatter svg path, #scatter svg use")
    # The logs' <script> did not run (it would retitle the page) and injected nothing.
    assert soup.title is not None and soup.title.get_text() == "genir-eval report: test-run"
    assert soup.find("script") is None
    assert soup.find(id="injected") is None
    assert soup.find("img") is None
    assert "document.title='pwned'" in soup.get_text()


def test_screenshot_renders(run_dir: Path, tmp_path: Path) -> None:
    report = write_report(run_dir)
    png = tmp_path / "report.png"
    _run_chromium(tmp_path, f"--screenshot={png}", "--window-size=1280,2400", report.as_uri())
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # a blank page compresses to a few kB
