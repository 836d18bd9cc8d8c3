"""The one way to open an :class:`~genir_eval.llm.engine.Engine`: from an
:class:`~genir_eval.llm.config.EngineConfig`, with the provider, the cache, the journal and
the price table that configuration names.

The command line (``cli/engine_options.py``: one engine owning its storage), the run
(``runner/executor.py``: one engine per provider group over a shared cache) and
``runner/judge_eval.py`` (the offline twin's engine) all build theirs here, so a setting
means the same on every path: the provider's attempt timeout and HTTP pools follow the
configuration's ``timeout`` and ``concurrency`` wherever an engine is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from genir_eval.errors import GenirError
from genir_eval.llm.config import DEFAULT_CACHE_PATH, EngineConfig
from genir_eval.llm.prices import PriceTable, load_prices
from genir_eval.llm.providers.base import Provider
from genir_eval.llm.providers.factory import make_provider
from genir_eval.llm.store.cache import Cache
from genir_eval.llm.store.journal import Journal

if TYPE_CHECKING:
    from genir_eval.llm.engine import Engine

__all__ = [
    "open_provider",
    "open_cache",
    "open_prices",
    "open_engine",
    "build_engine",
    "offline_engine",
]


def open_provider(
    config: EngineConfig, name: str, *, model: str | None = None, base_url: str | None = None
) -> Provider:
    """The provider ``name`` for ``model`` at ``base_url``, its attempt timeout and HTTP
    connection pools and the cap on a reply's bytes set from ``config`` (``timeout``,
    ``concurrency``, ``max_reply_bytes``)."""
    return make_provider(
        name,
        model=model,
        base_url=base_url,
        timeout=config.timeout,
        concurrency=config.concurrency,
        max_reply_bytes=config.max_reply_bytes,
    )


def open_cache(config: EngineConfig) -> Cache | None:
    """The reply cache ``config`` names, in its ``cache_mode``; none when there is no cache
    file or the mode is ``off``."""
    if config.cache is None or config.cache_mode == "off":
        return None
    return Cache(config.cache, mode=config.cache_mode)  # type: ignore[arg-type]


def open_prices(config: EngineConfig) -> PriceTable:
    """The packaged price table with ``config.prices`` over it."""
    return load_prices(config.prices)


def open_engine(
    config: EngineConfig,
    provider: Provider,
    *,
    cache: Cache | None = None,
    journal: Journal | None = None,
    prices: PriceTable | None = None,
    **runtime: Any,
) -> Engine:
    """An engine for ``provider`` with ``config``'s limits, retries and failure policy over
    the given (already opened) storage and price table; ``runtime`` holds what is not
    configuration (progress and quiet, a notice, a shared rate gate, ``owns_storage``)."""
    # looked up when called, so a test may count the engines a command opens
    from genir_eval.llm import engine as engine_module

    return engine_module.Engine(
        provider, config, cache=cache, journal=journal, prices=prices, **runtime
    )


def build_engine(
    config: EngineConfig,
    provider: str | Provider,
    *,
    model: str | None = None,
    base_url: str | None = None,
    **runtime: Any,
) -> Engine:
    """An engine owning everything ``config`` names: the provider (a name is built with
    :func:`open_provider`), the cache, the journal (``journal=True``: the cache file, else
    :data:`~genir_eval.llm.config.DEFAULT_CACHE_PATH`) and the price table; closing the
    engine closes them. What was opened is closed again when a later part cannot be."""
    if isinstance(provider, str):
        provider = open_provider(config, provider, model=model, base_url=base_url)
    cache: Cache | None = None
    journal: Journal | None = None
    try:
        cache = open_cache(config)
        if config.journal is not False:
            place = config.journal if config.journal is not True else config.cache
            journal = Journal(Path(place or DEFAULT_CACHE_PATH))
        prices = open_prices(config)
    except GenirError:
        if cache is not None:
            cache.close()
        if journal is not None:
            journal.close()
        raise
    return open_engine(config, provider, cache=cache, journal=journal, prices=prices, **runtime)


def offline_engine(**runtime: Any) -> Engine:
    """An engine over the offline provider (the judges' offline twins) with no cache and no
    journal: computing a twin's label costs less than storing it."""
    from genir_eval.llm.providers.offline import OfflineProvider

    return build_engine(EngineConfig(cache=None, journal=False), OfflineProvider(), **runtime)
