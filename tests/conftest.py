from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
URGE_SAMPLE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"
FIXTURES = ROOT / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runapi", action="store_true", default=False, help="run tests that call live LLM APIs"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "api: calls a live LLM API (opt-in with --runapi)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runapi"):
        return
    skip = pytest.mark.skip(reason="live-API test: pass --runapi (and set the key) to run it")
    for item in items:
        if "api" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def urge_sample_path() -> Path:
    if not URGE_SAMPLE.exists():
        pytest.fail(f"the URGE sample is expected at {URGE_SAMPLE}")
    return URGE_SAMPLE


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
