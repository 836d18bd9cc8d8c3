"""genir-eval llm stage: providers behind one interface, and the engine that runs judges'
calls concurrently with limits, retries, a persistent cache and a resumable journal.

A judge builds a :class:`Request`, awaits ``engine.complete(request)`` (a :class:`Completion` or
a :class:`Failure`, never an exception for provider errors), parses the text and journals the
outcome with ``await engine.record(request, result, value=parsed)``. With a journal, a judgment
keeps its in-flight slot until that record: a caller of ``complete`` records every judgment.
"""

from genir_eval.llm.build import build_engine, offline_engine, open_engine
from genir_eval.llm.config import DEFAULT_CACHE_PATH, EngineConfig
from genir_eval.llm.engine import Engine
from genir_eval.llm.prices import Price, PriceTable, load_prices
from genir_eval.llm.providers.base import (
    Completion,
    ErrorClass,
    Failure,
    GenerateConfig,
    JudgmentKey,
    Message,
    Provider,
    ProviderError,
    Request,
    TokenLogprob,
    Usage,
)
from genir_eval.llm.providers.factory import make_provider, resolve_provider
from genir_eval.llm.providers.offline import OfflineProvider, offline_handler, register_offline
from genir_eval.llm.store.cache import CACHE_MODES, Cache, CacheMode, cache_key
from genir_eval.llm.store.journal import Journal, JournalEntry
from genir_eval.llm.sync import run_sync

__all__ = [
    "CACHE_MODES",
    "Cache",
    "CacheMode",
    "Completion",
    "DEFAULT_CACHE_PATH",
    "Engine",
    "EngineConfig",
    "ErrorClass",
    "Failure",
    "GenerateConfig",
    "Journal",
    "JournalEntry",
    "JudgmentKey",
    "Message",
    "OfflineProvider",
    "Price",
    "PriceTable",
    "Provider",
    "ProviderError",
    "Request",
    "TokenLogprob",
    "Usage",
    "build_engine",
    "cache_key",
    "load_prices",
    "make_provider",
    "offline_engine",
    "offline_handler",
    "open_engine",
    "register_offline",
    "resolve_provider",
    "run_sync",
]
