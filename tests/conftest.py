from __future__ import annotations

import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
URGE_SAMPLE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"
FIXTURES = ROOT / "fixtures"


#: Where the opt-in real-model tests find an OpenAI-compatible server, and its model name.
LOCAL_BASE_URL_ENV = "GENIR_LOCAL_BASE_URL"
LOCAL_MODEL_ENV = "GENIR_LOCAL_MODEL"
DEFAULT_LOCAL_BASE_URL = "http://127.0.0.1:8091/v1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runapi", action="store_true", default=False, help="run tests that call live LLM APIs"
    )
    parser.addoption(
        "--require-shared",
        action="store_true",
        default=False,
        help=(
            "fail, not skip, the tests that read the shared data (../shared: the URGE sample, "
            "CrowdRAG); the default when the CI environment variable is set"
        ),
    )
    parser.addoption(
        "--runlocal",
        action="store_true",
        default=False,
        help=(
            "run tests against a local OpenAI-compatible LLM server "
            f"(${LOCAL_BASE_URL_ENV}, default {DEFAULT_LOCAL_BASE_URL}; ${LOCAL_MODEL_ENV}, "
            "default 'local')"
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "api: calls a live LLM API (opt-in with --runapi)")
    config.addinivalue_line(
        "markers", "local: calls a local OpenAI-compatible LLM server (opt-in with --runlocal)"
    )
    config.addinivalue_line(
        "markers",
        "browser: drives headless Chromium (slow; -m 'not browser' leaves them out)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    opt_in = {
        "api": (
            config.getoption("--runapi"),
            "live-API test: pass --runapi (and set the key) to run it",
        ),
        "local": (
            config.getoption("--runlocal"),
            "real-model test: pass --runlocal with a local server running to run it",
        ),
    }
    for marker, (enabled, reason) in opt_in.items():
        if enabled:
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@dataclass(frozen=True)
class LocalServer:
    base_url: str
    model: str


@pytest.fixture(scope="session")
def local_llm() -> LocalServer:
    """The local OpenAI-compatible server of the ``--runlocal`` tests; the test is skipped
    (not failed) when nothing answers there."""
    base_url = os.environ.get(LOCAL_BASE_URL_ENV, DEFAULT_LOCAL_BASE_URL).rstrip("/")
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=5.0) as response:
            response.read()
    except (OSError, ValueError) as error:
        pytest.skip(f"no local LLM server at {base_url} ({type(error).__name__}: {error})")
    return LocalServer(base_url=base_url, model=os.environ.get(LOCAL_MODEL_ENV, "local"))


#: Set by ``.ci/run`` (this project's CI, where ../shared is beside the checkout): a test of
#: the shared data fails there rather than skips. The GitHub workflow sets it to 0: GitHub's
#: runners have no ../shared (third-party data, never copied into the repository).
REQUIRE_SHARED_ENV = "GENIR_REQUIRE_SHARED"


def shared_required(config: pytest.Config) -> bool:
    """Whether a test of the shared data fails rather than skips without it: with
    ``--require-shared``, or with ``$GENIR_REQUIRE_SHARED`` set and not empty or
    ``false``/``0``/``no`` (``.ci/run`` sets it)."""
    required = os.environ.get(REQUIRE_SHARED_ENV, "").strip().lower()
    return bool(config.getoption("--require-shared")) or required not in ("", "0", "false", "no")


@pytest.fixture
def shared(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """``shared(path, what)``: ``path`` of the shared data (``../shared``) when it is there;
    otherwise the test is skipped with the reason (what is missing, where it was looked for,
    how to require it), or fails when the shared data is required (:func:`shared_required`)."""

    def need(path: Path, what: str) -> Path:
        if path.exists():
            return path
        message = f"{what} is not at {path} (the shared data, ../shared)"
        if shared_required(request.config):
            pytest.fail(f"{message}: required here (--require-shared or {REQUIRE_SHARED_ENV} set)")
        pytest.skip(
            f"{message}; pass --require-shared (or set {REQUIRE_SHARED_ENV}=1) to fail instead"
        )

    return need


@pytest.fixture(scope="session")
def urge_sample_path(request: pytest.FixtureRequest) -> Path:
    """The real URGE sample in ../shared; without it the test skips with the reason, or
    fails where the shared data is required (:func:`shared_required`: this project's CI)."""
    if not URGE_SAMPLE.exists():
        message = f"the URGE sample is not at {URGE_SAMPLE} (the shared data, ../shared)"
        if shared_required(request.config):
            pytest.fail(f"{message}: required here (--require-shared or {REQUIRE_SHARED_ENV} set)")
        pytest.skip(f"{message}; pass --require-shared (or set {REQUIRE_SHARED_ENV}=1) to fail")
    return URGE_SAMPLE


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


def _urs_run(folder: Path, name: str, sessions: list[dict[str, object]]) -> Path:
    """``sessions`` (canonical JSONL records) written as ``name``.jsonl and run offline through
    ``genir-eval run`` with the URS satisfaction judge; the run folder."""
    import json

    from genir_eval.cli import main

    logs = folder / f"{name}.jsonl"
    logs.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    scenario = folder / f"{name}.toml"
    scenario.write_text(
        f'version = 1\nname = "{name}"\n\n[input]\npath = "{name}.jsonl"\n\n'
        '[[judges]]\nname = "satisfaction.urs"\n',
        encoding="utf-8",
    )
    out = folder / f"run-{name}"
    assert main(["run", str(scenario), "--out", str(out), "--quiet", "--cache", "none"]) == 0
    return out


@pytest.fixture(scope="session")
def urs_run():
    """Runs a list of sessions offline with the URS judge: ``urs_run(folder, name, sessions)``
    is the run folder (the two-run comparisons' pages and gates are built from such runs)."""
    return _urs_run
