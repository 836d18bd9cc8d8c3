"""Headless Chromium for the report tests: where it is, how it is started.

Skips only when Chromium is absent outside CI; under CI (``CI=true``) a missing browser is a
failure, since ``.ci/install_chromium.sh`` is meant to provide it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

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
    "--hide-scrollbars",
]


def chromium() -> str:
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("chromium is missing under CI: run .ci/install_chromium.sh first")
    pytest.skip("chromium is not installed (.ci/install_chromium.sh installs it)")


def run_chromium(profile: Path, *args: str) -> str:
    """Run Chromium once with its own profile folder; its stdout (e.g. ``--dump-dom``)."""
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return done.stdout
