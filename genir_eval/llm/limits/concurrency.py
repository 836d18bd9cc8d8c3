"""How many requests are in flight, and how many judgments look up their stored answer at once.

- :class:`AdaptiveLimit`: requests in flight, additive-increase / multiplicative-decrease
  (AIMD, as TCP congestion control, Jacobson 1988). Evidence of overload (an attempt timed
  out, a 503 or 529; not a 429, which speaks of a rate, and says when to come back) lowers
  the limit once per congestion event: an overload of a request sent before the last
  decrease, or within ``cooldown_s`` of it, is the same event (TCP's one reduction per window
  of data, RFC 5681 section 3.1), so a burst counts once. A decrease is bounded: at most a
  halving and at least one, but never below the concurrency the provider has been serving
  successfully over the last ``window_s`` (rate of successes times their latency, Little's
  law; BBR keeps in flight what the bottleneck delivers rather than halving on loss, Cardwell
  et al. 2016, ACM Queue 14(5)). An isolated overload therefore dips the limit to what the
  provider allows instead of halving it below that, while a sustained overload, where
  successes fall, still halves it down to 1. Every ``increase_every`` successes raise it by
  one, up to the configured maximum. A request may name its ``holder`` (the judgment it is
  for): the holder keeps its slot past the request, for its repair call and its retries,
  until it gives the slot back (the engine: once the judgment's label is committed to the
  journal, so a process killed at any moment has at most ``limit`` judgments to repeat; and
  while a retry waits out its backoff, when no reply is held).
- :class:`LookupWindow`: judgments between entering the engine and their journal/cache answer.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Hashable

from genir_eval.llm.limits.waiters import wait_in_line

__all__ = ["AdaptiveLimit", "LookupWindow"]


class LookupWindow:
    """At most ``size`` judgments between entering the engine and their cache answer.

    Without it a run of N judgments fingerprints all N (canonical JSON + SHA-256) and queues
    all N cache lookups before the event loop can resume the first one, so the first request
    waits for every fingerprint (~50 ms for 2,000). Past the window a judgment only queues
    (first come, first served), and a slot passes straight to the next in line.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self.active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.active < self.size and not self._waiters:
            self.active += 1
            return
        await wait_in_line(self._waiters, False, give_back=self.release)

    def release(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)  # the slot passes to the next in line
                return
        self.active -= 1


class AdaptiveLimit:
    """An asyncio semaphore whose size moves between 1 and ``maximum`` (AIMD)."""

    def __init__(
        self,
        maximum: int,
        *,
        increase_every: int = 8,
        cooldown_s: float = 1.0,
        window_s: float = 2.0,
    ) -> None:
        if maximum < 1:
            raise ValueError("concurrency must be >= 1")
        self.maximum = maximum
        self.limit = maximum
        self.min_seen = maximum
        self.increase_every = max(1, increase_every)
        self.cooldown_s = cooldown_s
        self.window_s = window_s
        self.in_flight = 0
        self.decreases = 0
        self._successes = 0
        self._last_decrease = -math.inf
        self._waiters: deque[asyncio.Future[None]] = deque()
        # (finished, latency) of the successful requests that finished within window_s.
        self._served: deque[tuple[float, float]] = deque()
        self._latency_sum = 0.0
        self._first_sent = math.inf
        # holders keeping their slot past a request, until release(holder)
        self._held: set[Hashable] = set()

    async def acquire(self, *, first: bool = False, holder: Hashable | None = None) -> None:
        """Wait for a slot; ``first`` jumps the queue (a retry of a judgment already begun,
        so started work finishes before new work starts). A ``holder`` keeps the slot until
        ``release(holder)`` and does not wait again meanwhile: its later requests share it."""
        if holder is not None and holder in self._held:
            return
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
        else:
            await wait_in_line(self._waiters, first, give_back=self.release)
        if holder is None:
            return
        if holder in self._held:
            self.release()  # the holder got a slot while this request waited: share that one
        else:
            self._held.add(holder)

    def release(self, holder: Hashable | None = None) -> None:
        """Give a slot back; with ``holder``, the slot that holder keeps (none: nothing)."""
        if holder is not None:
            if holder not in self._held:
                return
            self._held.remove(holder)
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)

    def on_success(self, latency: float | None = None) -> None:
        """A request succeeded; ``latency`` (seconds, measured by the caller) feeds the
        served-concurrency estimate that bounds decreases."""
        if latency is not None:
            now = time.monotonic()
            self._first_sent = min(self._first_sent, now - latency)
            self._served.append((now, latency))
            self._latency_sum += latency
            self._expire(now)
        if self.limit >= self.maximum:
            return
        self._successes += 1
        if self._successes >= self.increase_every:
            self._successes = 0
            self.limit += 1
            self._wake()

    def served(self) -> float:
        """How many requests the provider has been serving successfully at once: the rate of
        successes over the last ``window_s`` times their mean latency (Little's law). Early
        in a run the rate is taken over the time since the first reply could have come back."""
        now = time.monotonic()
        self._expire(now)
        if not self._served:
            return 0.0
        latency = self._latency_sum / len(self._served)
        span = min(self.window_s, max(latency, now - self._first_sent - latency))
        if span <= 0:
            return 0.0
        return len(self._served) / span * latency

    def _expire(self, now: float) -> None:
        while self._served and self._served[0][0] < now - self.window_s:
            self._latency_sum -= self._served.popleft()[1]

    def on_overload(self, *, sent_at: float | None = None) -> None:
        """A request sent at ``sent_at`` (``time.monotonic()``; ``None``: unknown) met an
        overloaded provider (timed out, 503, 529)."""
        now = time.monotonic()
        if sent_at is not None and sent_at < self._last_decrease:
            return  # sent before the last decrease: part of the congestion already acted on
        if now - self._last_decrease < self.cooldown_s:
            return
        self._last_decrease = now
        self._successes = 0
        floor = math.ceil(self.served())
        new = max(1, min(self.limit - 1, max(self.limit // 2, floor)))
        if new < self.limit:
            self.decreases += 1
        self.limit = new
        self.min_seen = min(self.min_seen, new)
