"""The tests of the shared data (../shared) skip with their reason where it is absent, and
fail instead in the project's CI (``$GENIR_REQUIRE_SHARED``, which ``.ci/run`` sets) or with
``--require-shared``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

MISSING = Path("/nonexistent/shared/urge/urge_sample_dev.csv")


def test_present_shared_data_is_returned(shared: Any, tmp_path: Path) -> None:
    assert shared(tmp_path, "a folder") == tmp_path


@pytest.mark.parametrize("ci", ["", "0", "false"])
def test_absent_shared_data_skips_with_its_reason(
    shared: Any, monkeypatch: pytest.MonkeyPatch, ci: str, request: pytest.FixtureRequest
) -> None:
    if request.config.getoption("--require-shared"):
        pytest.skip("--require-shared given: absent data fails (the test below)")
    monkeypatch.setenv("GENIR_REQUIRE_SHARED", ci)
    with pytest.raises(pytest.skip.Exception, match="the URGE sample is not at /nonexistent"):
        shared(MISSING, "the URGE sample")


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_absent_shared_data_fails_where_required(
    shared: Any, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("GENIR_REQUIRE_SHARED", ci)
    with pytest.raises(pytest.fail.Exception, match="required here"):
        shared(MISSING, "the URGE sample")
