"""What the engine keeps on disk: the reply cache shared across runs (``cache``), the run's
journal of judgments (``journal``), both through one SQLite connection per file owned by its
own thread (``_sqlite``)."""

from genir_eval.llm.store.cache import CACHE_MODES, Cache, CacheMode, cache_key
from genir_eval.llm.store.journal import Journal, JournalEntry

__all__ = ["CACHE_MODES", "Cache", "CacheMode", "Journal", "JournalEntry", "cache_key"]
