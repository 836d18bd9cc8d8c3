from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "label"))

from view_helpers import tiny_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
URGE_SAMPLE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four sessions of view_helpers.tiny_run (read-only)."""
    return tiny_run(tmp_path_factory.mktemp("tiny") / "run")


def _run_scenario(text: str, folder: Path) -> Path:
    scenario = folder / "scenario.toml"
    scenario.write_text(text, encoding="utf-8")
    out = folder / "run"
    subprocess.run(
        [sys.executable, "-m", "genir_eval", "run", str(scenario), "--out", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=600,
    )
    return out


def _urge_text(request: pytest.FixtureRequest) -> str:
    if not URGE_SAMPLE.is_file():
        message = f"the URGE sample is not at {URGE_SAMPLE} (the shared data, ../shared)"
        required = os.environ.get("GENIR_REQUIRE_SHARED", "").strip().lower()
        if request.config.getoption("--require-shared") or required not in ("", "0", "false", "no"):
            pytest.fail(message)
        pytest.skip(message)
    text = (ROOT / "scenarios" / "urge-offline.toml").read_text(encoding="utf-8")
    text = text.replace('"../../shared/urge/urge_sample_dev.csv"', repr(str(URGE_SAMPLE)))
    return text.replace('"../.genir-cache/cache.sqlite"', '"cache.sqlite"')


@pytest.fixture(scope="session")
def urge_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scenarios/urge-offline.toml run into a temporary folder (the real URGE sample)."""
    return _run_scenario(_urge_text(request), tmp_path_factory.mktemp("urge"))


@pytest.fixture(scope="session")
def urge_run_b(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same sessions with TRUE reading no satisfaction signal: its link labels, and the
    scores made of them, change; the other judges' do not."""
    text = _urge_text(request).replace(
        'signals = "relevance,behaviour,satisfaction"', 'signals = "relevance,behaviour"'
    )
    text = text.replace('name = "urge-offline"', 'name = "urge-offline-b"')
    return _run_scenario(text, tmp_path_factory.mktemp("urge-b"))


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Callable[..., object]]:
    """Headless Chromium sessions through Debian's chromedriver (by path: selenium downloads
    nothing), at the width asked for; all quit at the end."""
    chromium = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    driver_path = CHROMEDRIVER if os.access(CHROMEDRIVER, os.X_OK) else shutil.which("chromedriver")
    if not (chromium and driver_path):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium or chromedriver is missing under CI: run .ci/install_chromium.sh")
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    started: list[object] = []

    def start(width: int = 1280, height: int = 900) -> object:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--allow-file-access-from-files",
            f"--window-size={width},{height}",
            f"--user-data-dir={tmp_path / f'profile-{len(started)}'}",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        driver.set_page_load_timeout(120)
        started.append(driver)
        return driver

    os.environ.setdefault("SE_OFFLINE", "true")
    yield start
    for driver in started:
        driver.quit()  # type: ignore[attr-defined]
