"""A line of waiters that the owner of a limit serves one by one (retries of judgments
already begun at its head)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

__all__ = ["wait_in_line"]


async def wait_in_line(
    waiters: deque[asyncio.Future[None]], first: bool, *, give_back: Callable[[], None]
) -> None:
    """Queue in ``waiters`` (at the head when ``first``: a retry of a judgment already begun,
    so started work finishes before new work starts) until the owner of the queue grants the
    turn by setting the waiter's result. Cancelled while waiting, the place is given up; a turn
    granted just before the cancel arrived is handed back through ``give_back``."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    if first:
        waiters.appendleft(future)
    else:
        waiters.append(future)
    try:
        await future
    except asyncio.CancelledError:
        if future.done() and not future.cancelled():
            give_back()
        else:
            try:
                waiters.remove(future)
            except ValueError:
                pass
        raise
