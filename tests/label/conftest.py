from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from label_helpers import make_run  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder of six sessions, four of them with hostile text, judged offline (link
    usefulness, citation support, satisfaction). Read-only: tests give their own --store."""
    return make_run(tmp_path_factory.mktemp("hostile"))


def _browser_paths() -> tuple[str, str]:
    chromium = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    driver = CHROMEDRIVER if os.access(CHROMEDRIVER, os.X_OK) else shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("chromium or chromedriver is missing under CI: run .ci/install_chromium.sh")
    pytest.skip(
        "Debian's chromium and chromium-driver are not installed "
        "(.ci/install_chromium.sh installs them)"
    )


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Callable[[], object]]:
    """Starts headless Chromium sessions through Debian's chromedriver (given by path, so
    selenium downloads nothing); all of them quit at the end."""
    chromium, driver_path = _browser_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    started: list[object] = []

    def start() -> object:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1280,900",
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
