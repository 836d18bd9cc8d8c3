"""Limits that keep a run within what a provider accepts.

- :class:`AdaptiveLimit`: requests in flight, additive-increase / multiplicative-decrease
  (AIMD, as TCP congestion control, Jacobson 1988): a rate-limited reply halves the limit
  (not below 1, at most once per ``cooldown_s`` so one burst of 429s counts once), and
  every ``increase_every`` successes raise it by one, up to the configured maximum.
- :class:`RequestRate`: requests per minute with ``asyncio-throttle``. The minute is enforced
  over 250 ms sliding windows (``rpm / 240`` each) so that a run never bursts a whole
  minute's allowance at once (providers also meter over sub-minute windows), and requests
  reach the server as evenly spaced as they leave.
- :class:`TokenBudget`: tokens per minute over a sliding 60 s window; a call reserves its
  estimated input plus ``max_tokens`` and is reconciled with the real usage afterwards.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque

__all__ = ["AdaptiveLimit", "RequestRate", "TokenBudget", "Reservation"]


class AdaptiveLimit:
    """An asyncio semaphore whose size moves between 1 and ``maximum`` (AIMD)."""

    def __init__(self, maximum: int, *, increase_every: int = 8, cooldown_s: float = 1.0) -> None:
        if maximum < 1:
            raise ValueError("concurrency must be >= 1")
        self.maximum = maximum
        self.limit = maximum
        self.min_seen = maximum
        self.increase_every = max(1, increase_every)
        self.cooldown_s = cooldown_s
        self.in_flight = 0
        self.decreases = 0
        self._successes = 0
        self._last_decrease = -math.inf
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self, *, first: bool = False) -> None:
        """Wait for a slot; ``first`` jumps the queue (a retry of a judgment already begun,
        so started work finishes before new work starts)."""
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if first:
            self._waiters.appendleft(future)
        else:
            self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted just before the cancel arrived
            else:
                try:
                    self._waiters.remove(future)
                except ValueError:
                    pass
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)

    def on_success(self) -> None:
        if self.limit >= self.maximum:
            return
        self._successes += 1
        if self._successes >= self.increase_every:
            self._successes = 0
            self.limit += 1
            self._wake()

    def on_rate_limit(self) -> None:
        now = time.monotonic()
        if now - self._last_decrease < self.cooldown_s:
            return
        self._last_decrease = now
        self._successes = 0
        new = max(1, self.limit // 2)
        if new < self.limit:
            self.decreases += 1
        self.limit = new
        self.min_seen = min(self.min_seen, new)


class RequestRate:
    """At most ``rpm`` requests per minute, metered over ``max(window_s, 60/rpm)`` windows."""

    def __init__(self, rpm: float, *, window_s: float = 0.25) -> None:
        from asyncio_throttle import Throttler

        if rpm <= 0:
            raise ValueError("rpm must be > 0")
        self.rpm = rpm
        self.period = max(window_s, 60.0 / rpm)
        self.per_period = max(1, math.floor(rpm * self.period / 60.0))
        # The throttler polls every retry_interval; one waiter at a time (the lock) keeps that
        # to one timer instead of one per waiting request, so a fine interval stays cheap.
        self._throttler = Throttler(
            rate_limit=self.per_period,
            period=self.period,
            retry_interval=min(0.002, self.period / 10),
        )
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            await self._throttler.acquire()


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
