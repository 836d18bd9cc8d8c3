"""A one-line progress line on stderr: calls done, calls started and not yet done, rate,
failures, cache hits.

The judges find their calls as they go (a link judge one per cited link, a session judge one
per session, window by window), so the number of calls a run will make is not known while it
runs: the line counts what is done and what is under way, and draws no bar, total or ETA
that would grow and move backwards as more calls are found (``0/1 -> 0/268 -> 717``).

Written here rather than taken from tqdm: it redraws at most ten times a second (so the hot
path only bumps counters), and it draws only when the stream is a TTY.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress", "Heartbeat"]


class Progress:
    def __init__(
        self,
        total: int = 0,
        *,
        stream: TextIO | None = None,
        quiet: bool = False,
        label: str = "judging",
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.label = label
        self.done = 0
        self.failures = 0
        self.cached = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    def add_total(self, n: int) -> None:
        self.total += n
        self._maybe_draw()

    def update(self, *, failed: bool = False, cached: bool = False) -> None:
        self.done += 1
        self.failures += failed
        self.cached += cached
        self._maybe_draw()

    @property
    def under_way(self) -> int:
        """Calls started and not yet done (never negative)."""
        return max(self.total - self.done, 0)

    def line(self) -> str:
        """``judging: 120 calls done, 16 under way, 35.2/s, failed 0, cached 3``: counts
        that only grow, whatever calls the judges find next (see the module docstring)."""
        elapsed = max(1e-9, time.monotonic() - self._start)
        rate = self.done / elapsed
        return (
            f"{self.label}: {self.done:,} calls done, {self.under_way:,} under way, "
            f"{rate:,.1f}/s, failed {self.failures}, cached {self.cached}"
        )

    def _maybe_draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        # the command line's guarded stream escapes control characters written to a
        # terminal; the line's own carriage return and erase go through its raw door
        write = getattr(self.stream, "write_control", self.stream.write)
        write("\r" + self.line() + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and (self._drawn or self.done):
            self._maybe_draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
        self.enabled = False


class Heartbeat:
    """Without a terminal there is no progress bar: print ``genir-eval: <describe()>`` every
    ``every_s`` seconds instead, so a log shows what a long or stuck run waits for.

    Runs as a task on the current event loop from construction to :meth:`aclose`."""

    def __init__(
        self, describe: Callable[[], str], *, stream: TextIO, every_s: float = 30.0
    ) -> None:
        self.describe = describe
        self.stream = stream
        self.every_s = every_s
        self.lines = 0
        self._task = asyncio.ensure_future(self._beat())

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            try:
                print(f"genir-eval: {self.describe()}", file=self.stream, flush=True)
            except (OSError, ValueError):
                return  # the log is gone (closed pipe): the run goes on without it
            self.lines += 1

    async def aclose(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
