"""A broken install of the semantic extra (a package that fails on import with something
other than ImportError, a weights file that does not load) falls back to lexical evidence
with a warning saying why, and the run says lexical: never a traceback."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from genir_eval.judges.offline import semantic
from genir_eval.judges.offline.citations import support_verdict

SOURCE = "Servers host websites and store files for many users around the world."
STATEMENT = "Servers host websites."


@pytest.fixture(autouse=True)
def fresh_model_state() -> Iterator[None]:
    semantic._load.cache_clear()
    semantic._broken = None
    yield
    semantic._load.cache_clear()
    semantic._broken = None


class _Broken(types.ModuleType):
    """A module whose every attribute raises, as a half-installed binary package does."""

    def __getattr__(self, name: str) -> object:
        raise OSError(f"libsafetensors.so: cannot open shared object file ({name})")


def _assert_lexical_fallback() -> None:
    with pytest.warns(RuntimeWarning, match="lexical evidence instead"):
        assert semantic.embedder() is None
    assert not semantic.available()
    assert semantic.evidence_name() == "lexical"
    # the offline twin still judges, on lexical evidence
    verdict, _, features = support_verdict(STATEMENT, SOURCE)
    assert verdict == "full"
    assert "semantic_similarity" not in features


def test_a_package_that_fails_on_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "safetensors.numpy", _Broken("safetensors.numpy"))
    _assert_lexical_fallback()


def test_weights_that_do_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def corrupt(path: str) -> object:
        raise RuntimeError("Error while deserializing header: HeaderTooLarge")

    fake = types.ModuleType("safetensors.numpy")
    fake.load_file = corrupt  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "safetensors.numpy", fake)
    _assert_lexical_fallback()


def test_the_warning_names_the_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "safetensors.numpy", _Broken("safetensors.numpy"))
    with pytest.warns(RuntimeWarning) as caught:
        semantic.embedder()
    (warning,) = caught
    assert "OSError" in str(warning.message) and "libsafetensors" in str(warning.message)


def test_a_missing_extra_is_still_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    # an ImportError means the extra is not installed: lexical, without a warning
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    assert semantic.embedder() is None
    assert semantic._broken is None
