"""Limits that keep a run within what a provider accepts.

- :class:`AdaptiveLimit`: requests in flight, additive-increase / multiplicative-decrease
  (AIMD, as TCP congestion control, Jacobson 1988). A rate-limited reply lowers the limit once
  per congestion event: a 429 for a request sent before the last decrease, or within
  ``cooldown_s`` of it, is the same event (TCP's one reduction per window of data, RFC 5681
  section 3.1), so a burst of 429s counts once. A decrease is bounded: at most a halving and at
  least one, but never below the concurrency the provider has been serving successfully over
  the last ``window_s`` (rate of successes times their latency, Little's law; BBR
  keeps in flight what the bottleneck delivers rather than halving on loss, Cardwell et al.
  2016, ACM Queue 14(5)). An isolated 429 therefore dips the limit to what the provider
  allows instead of halving it below that, while a sustained overload, where successes fall,
  still halves it down to 1. Every ``increase_every`` successes raise it by one, up to the
  configured maximum.
- :class:`RequestRate`: requests per minute, with ``asyncio-throttle``'s ``Throttler`` over
  250 ms sliding windows (``rpm / 240`` each) so that a run never bursts a whole minute's
  allowance at once (providers also meter over sub-minute windows); the first window is paced
  so the stream stays evenly spaced, and a retry of a judgment already begun goes before new
  work.
- :class:`TokenBudget`: tokens per minute over a sliding 60 s window; a call reserves its
  estimated input plus ``max_tokens`` and is reconciled with the real usage afterwards.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable

__all__ = ["AdaptiveLimit", "LookupWindow", "RequestRate", "TokenBudget", "Reservation"]


async def _wait_in_line(
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
        await _wait_in_line(self._waiters, False, give_back=self.release)

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

    async def acquire(self, *, first: bool = False) -> None:
        """Wait for a slot; ``first`` jumps the queue (a retry of a judgment already begun,
        so started work finishes before new work starts)."""
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return
        await _wait_in_line(self._waiters, first, give_back=self.release)

    def release(self) -> None:
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

    def on_rate_limit(self, *, sent_at: float | None = None) -> None:
        """A request sent at ``sent_at`` (``time.monotonic()``; ``None``: unknown) was
        rate-limited."""
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


class RequestRate:
    """At most ``rpm`` requests per minute: an :class:`asyncio_throttle.Throttler` allowing
    ``per_period`` requests in any ``period`` seconds, with a priority gate in front of it.

    - ``period`` is ``max(window_s, 60/rpm)`` (250 ms by default) and ``per_period`` is
      ``floor(rpm * period / 60)``: the allowance is spread over the minute. The throttler
      admits a request only while fewer than ``per_period`` were sent in the closed window
      ``[now - period, now]``, so any 1 s window holds at most ``rpm / 60`` requests sent.
    - The provider counts arrivals, not sends, and the delay between them varies: the first
      requests of a run wait behind the client's start-up work and open connections (measured
      against the fake server: up to ~120 ms at start, p99 ~6 ms afterwards). The throttler's
      period is therefore lengthened by ``guard`` (1%: 10 ms of slack per second) and, during
      the first ``warmup_s`` seconds, by a further ``warmup_guard`` decaying to zero (22.5% at
      the start over 1 s: ~110 ms of slack over the first second, where the late first
      arrivals fall, and none after it, where they no longer share a 1 s window with the
      stream). Costs about 1% of throughput and ~0.11 s per run. The fake server counts at most ``rpm / 60`` in every
      1 s window in ``tests/llm/test_limits.py``; under ``bench/bench_engine.py``'s heavier
      client load (2000 judgments at once, cache and journal on) it counted 200-203 for a
      limit of 200 (client event-loop lag beyond the guard), against 204-213 unguarded.
    - The first window is paced: its requests go ``period / per_period`` apart rather than in
      one burst at time zero. A throttler replays its first window's pattern in every later one
      (request ``k + per_period`` goes when request ``k`` leaves the window), so paced from the
      start the stream stays evenly spaced; a burst would be replayed as a burst, and the first
      one, slowed by opening connections, reaches the provider late enough to share a 1 s
      window with the fifth.
    - The throttler polls (it sleeps ``retry_interval`` between checks). Only the request at
      the head of the gate polls, so waiting costs one wake-up per ``retry_interval`` however
      many requests wait; the small ``retry_interval`` (1 ms, not the library's 10 ms) keeps a
      turn from being granted late. The gate is a queue in which a retry of a judgment already
      begun (``first=True``) goes before new work.
    """

    def __init__(
        self,
        rpm: float,
        *,
        window_s: float = 0.25,
        retry_interval: float = 0.001,
        guard: float = 0.01,
        warmup_guard: float = 0.225,
        warmup_s: float = 1.0,
    ) -> None:
        if rpm <= 0:
            raise ValueError("rpm must be > 0")
        from asyncio_throttle import Throttler

        self.rpm = rpm
        self.period = max(window_s, 60.0 / rpm)
        self.per_period = max(1, math.floor(rpm * self.period / 60.0))
        self.guard = guard
        self.warmup_guard = warmup_guard
        self.warmup_s = warmup_s
        self.throttler = Throttler(
            rate_limit=self.per_period,
            period=self.period * (1.0 + guard + warmup_guard),
            retry_interval=retry_interval,
        )
        self.sent = 0
        self._spacing = self.throttler.period / self.per_period
        self._start: float | None = None
        self._busy = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self, *, first: bool = False) -> None:
        """Wait until a request may be sent; ``first`` jumps the queue (a retry)."""
        await self._enter(first)
        try:
            loop = asyncio.get_running_loop()
            if self._start is None:
                self._start = loop.time()
            elapsed = loop.time() - self._start
            if self.sent < self.per_period:
                delay = self._start + self.sent * self._spacing - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif elapsed < self.warmup_s:
                warm = self.warmup_guard * (1.0 - elapsed / self.warmup_s)
                self.throttler.period = self.period * (1.0 + self.guard + warm)
            else:
                self.throttler.period = self.period * (1.0 + self.guard)
            await self.throttler.acquire()
            self.sent += 1
        finally:
            self._leave()

    async def _enter(self, first: bool) -> None:
        if not self._busy and not self._waiters:
            self._busy = True
            return
        await _wait_in_line(self._waiters, first, give_back=self._leave)

    def _leave(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)  # the gate passes straight to the next in line
                return
        self._busy = False


class Reservation:
    __slots__ = ("time", "tokens", "live")

    def __init__(self, at: float, tokens: int) -> None:
        self.time = at
        self.tokens = tokens
        self.live = True


class TokenBudget:
    """At most ``tpm`` tokens per sliding minute (estimated before, reconciled after)."""

    window_s = 60.0

    def __init__(self, tpm: int) -> None:
        if tpm <= 0:
            raise ValueError("tpm must be > 0")
        self.tpm = tpm
        self._log: deque[Reservation] = deque()
        self._used = 0
        self._lock = asyncio.Lock()

    def _expire(self, now: float) -> None:
        while self._log and now - self._log[0].time >= self.window_s:
            old = self._log.popleft()
            old.live = False
            self._used -= old.tokens

    async def acquire(self, estimate: int) -> Reservation:
        async with self._lock:
            while True:
                now = time.monotonic()
                self._expire(now)
                # A request larger than the whole budget still goes, alone in its window.
                if self._used + estimate <= self.tpm or not self._log:
                    reservation = Reservation(now, estimate)
                    self._log.append(reservation)
                    self._used += estimate
                    return reservation
                await asyncio.sleep(max(0.01, self.window_s - (now - self._log[0].time)))

    def reconcile(self, reservation: Reservation, actual: int) -> None:
        if reservation.live:
            self._used += actual - reservation.tokens
        reservation.tokens = actual
