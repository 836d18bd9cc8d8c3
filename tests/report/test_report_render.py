"""The report as a browser sees it: headless Chromium loads the file, no network.

Skips only when Chromium is absent outside CI; under CI (``CI=true``) a missing browser is a
failure, since ``.ci/install_chromium.sh`` is meant to provide it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.report.html import write_report

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("chromium is missing under CI: run .ci/install_chromium.sh first")
    pytest.skip("chromium is not installed (.ci/install_chromium.sh installs it)")


def _run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [_chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


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
