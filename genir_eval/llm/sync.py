"""Run a coroutine from synchronous code (scripts, notebooks)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, or, when this thread already runs an event loop (Jupyter), run it
    on a fresh loop in a worker thread and wait for it. Create the engine inside ``coro``: an
    engine belongs to the event loop it first runs on."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="run_sync") as pool:
        return pool.submit(asyncio.run, coro).result()
