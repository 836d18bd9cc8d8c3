"""Code written against the engine's earlier signature (``Engine(provider, concurrency=8,
rpm=600, attempt_timeout=5)``) still runs: the keywords become the ``EngineConfig`` they
name, with a ``DeprecationWarning`` that shows the new form; a keyword neither form knows,
or keywords beside a configuration, is a ``TypeError``."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from genir_eval.errors import ConfigError
from genir_eval.llm import EngineConfig
from genir_eval.llm.config import LEGACY_KEYWORDS
from genir_eval.llm.engine import Engine
from genir_eval.llm.providers.offline import OfflineProvider
from genir_eval.llm.store.cache import Cache


def _close(engine: Engine) -> None:
    asyncio.run(engine.aclose())


#: every keyword of the earlier signature, with a value other than its default
EARLIER = {
    "concurrency": 8,
    "rpm": 600,
    "tpm": 90_000,
    "max_attempts": 2,
    "attempt_timeout": 5,
    "deadline": 40,
    "stop_after": 3,
    "give_up_after": 20,
}


def test_the_earlier_keywords_make_the_configuration_they_name() -> None:
    with pytest.warns(DeprecationWarning, match=r"EngineConfig\(.*concurrency=") as caught:
        engine = Engine(OfflineProvider(), quiet=True, **EARLIER)
    try:
        renamed = {"timeout" if k == "attempt_timeout" else k: v for k, v in EARLIER.items()}
        assert engine.config == EngineConfig(**renamed)
        assert engine.config != EngineConfig()
        assert (engine.concurrency, engine.rpm, engine.tpm) == (8, 600, 90_000)
        assert engine.config.timeout == 5 and engine.health.stop_after == 3
    finally:
        _close(engine)
    # the warning points at the caller's line, not the engine's
    assert caught[0].filename == __file__
    assert "timeout=" in str(caught[0].message) and "attempt_timeout" in str(caught[0].message)


def test_every_earlier_keyword_is_a_configuration_field() -> None:
    fields = set(EngineConfig.__dataclass_fields__)
    assert set(LEGACY_KEYWORDS.values()) <= fields
    assert set(LEGACY_KEYWORDS) == set(EARLIER)


def test_the_earlier_cache_mode_keyword_still_overrides_the_cache_s_own(tmp_path) -> None:
    cache = Cache(tmp_path / "c.sqlite")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # cache_mode alone is not deprecated: no warning
        engine = Engine(OfflineProvider(), cache=cache, cache_mode="replay", quiet=True)
    try:
        assert engine.cache_mode == "replay" and cache.mode == "read-write"
    finally:
        _close(engine)


def test_the_new_form_gives_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine = Engine(OfflineProvider(), EngineConfig(concurrency=4), quiet=True)
    try:
        assert engine.concurrency == 4
    finally:
        _close(engine)


def test_an_unknown_keyword_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="'concurency'"):
        Engine(OfflineProvider(), concurency=4)


def test_keywords_beside_a_configuration_are_refused() -> None:
    with pytest.raises(TypeError, match="not both"):
        Engine(OfflineProvider(), EngineConfig(), concurrency=4)


def test_an_earlier_keyword_out_of_bounds_is_the_configuration_s_error() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigError, match="concurrency"):
        Engine(OfflineProvider(), concurrency=0)
