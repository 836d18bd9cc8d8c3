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
- :class:`LearnedRate`: without a configured request rate, the rate the provider accepts,
  learned from its replies and paced to (see the class).
- :class:`TokenBudget`: tokens per minute over a sliding 60 s window; a call reserves its
  estimated input plus ``max_tokens`` and is reconciled with the real usage afterwards.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from genir_eval.llm.base import RateLimitInfo

__all__ = [
    "AdaptiveLimit",
    "LearnedRate",
    "LookupWindow",
    "RateGate",
    "RequestRate",
    "TokenBudget",
    "Reservation",
]


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
      stream). Costs about 1% of throughput and ~0.11 s per run.
    - A request admitted just before the client stalls (a busy event loop, or a process the
      OS does not schedule on a loaded machine) is sent when the stall ends, together with
      those admitted after it: its arrival moves by the stall into the next requests' 1 s
      window. So the margin grows with the stalls this client has seen: while requests wait
      here a watcher sleeps ``lag_tick_s`` at a time and measures how late it wakes, and the
      period is lengthened by ``lag_factor`` times the largest lateness of the last seconds
      (decaying with ``lag_horizon_s``), on top of ``guard``. A calm client pays nothing
      more; one stalling 20 ms paces ~4% slower, which a client that slow could not use
      anyway. Before this the fake server counted 201-207 requests in some 1 s windows against
      a limit of 200 under ``bench/bench_engine.py``'s client load.
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
        lag_factor: float = 2.0,
        lag_horizon_s: float = 5.0,
        lag_tick_s: float = 0.005,
        max_margin: float = 0.5,
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
        self.lag_factor = lag_factor
        self.lag_horizon_s = lag_horizon_s
        self.max_margin = max_margin
        self.lag_tick_s = lag_tick_s
        self.lag = 0.0  # the client's recent largest stall, decaying (seconds)
        self.max_lag = 0.0
        self._lag_at = 0.0
        self._watcher: asyncio.Task[None] | None = None
        self.sent = 0
        self._spacing = self.throttler.period / self.per_period
        self._start: float | None = None
        self._busy = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def margin(self, now: float) -> float:
        """How much the period is lengthened beyond the warm-up: ``guard`` plus the lag's."""
        decayed = self.lag * math.exp(-(now - self._lag_at) / self.lag_horizon_s)
        return min(self.max_margin, self.guard + self.lag_factor * decayed)

    def _note_lag(self, lag: float, now: float) -> None:
        decayed = self.lag * math.exp(-(now - self._lag_at) / self.lag_horizon_s)
        self.lag = max(lag, decayed)
        self._lag_at = now
        self.max_lag = max(self.max_lag, lag)

    async def _watch(self) -> None:
        """Measure how late this client wakes while requests wait; stop when none does."""
        loop = asyncio.get_running_loop()
        while self._busy or self._waiters:
            due = loop.time() + self.lag_tick_s
            await asyncio.sleep(self.lag_tick_s)
            now = loop.time()
            self._note_lag(max(0.0, now - due), time.monotonic())
        self._watcher = None

    def _ensure_watcher(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def acquire(self, *, first: bool = False) -> None:
        """Wait until a request may be sent; ``first`` jumps the queue (a retry)."""
        await self._enter(first)
        self._ensure_watcher()
        try:
            loop = asyncio.get_running_loop()
            if self._start is None:
                self._start = loop.time()
            elapsed = loop.time() - self._start
            if self.sent < self.per_period:
                delay = self._start + self.sent * self._spacing - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            else:
                now = time.monotonic()
                warm = 0.0
                if elapsed < self.warmup_s:
                    warm = self.warmup_guard * (1.0 - elapsed / self.warmup_s)
                self.throttler.period = self.period * (1.0 + self.margin(now) + warm)
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


class RateGate(Protocol):
    """What paces an engine's sends and hears how the provider took them (:class:`LearnedRate`,
    or a cluster-wide limiter standing in for it)."""

    async def acquire(self, *, first: bool = False) -> None: ...

    def on_answer(self, info: RateLimitInfo | None = None) -> None: ...

    def on_rate_limit(
        self, *, sent_at: float | None = None, info: RateLimitInfo | None = None
    ) -> None: ...


class LearnedRate:
    """Requests paced to the rate the provider accepts, when the user gave none.

    An in-flight limit alone cannot keep to a provider's request rate: after a 429 it climbs
    back by latency-sized steps while the rate allows none (against a server limiting to R
    requests a second it had 60-80% of its calls rejected and reached 0.60 of R). This paces
    the sends instead, evenly ``1 / rate`` apart, with the rate learned from two signals:

    - **stated**: a reply's ``x-ratelimit-limit-requests`` (OpenAI) or
      ``anthropic-ratelimit-requests-limit`` (Anthropic) header gives the requests allowed per
      minute; the pace never goes above ``limit / 60 * (1 - guard)``.
    - **observed**: a 429 means the pace is too fast. Once per congestion event (a 429 for a
      request sent before the last decrease, or within ``cooldown_s`` of it, is the same
      event, as in :class:`AdaptiveLimit`) the pace drops to the lower of ``backoff`` times the
      current pace and the rate of the provider's answers (every reply but a 429) over the
      last ``window_s``: what the provider actually accepted while it was rejecting the rest.
      The first 429 of a run sets the first pace the same way, the unpaced sending rate
      standing for the current pace. Between 429s the pace climbs
      by ``increase`` of itself per second (a probe for more: providers raise limits, and
      the estimate may be low), so a 429 comes back now and then, as the price of finding
      the limit without being told it.

    Before any signal, requests are not paced (only the in-flight limit applies). Retries of
    judgments already begun (``first=True``) go before new work, as with :class:`RequestRate`.
    """

    def __init__(
        self,
        *,
        window_s: float = 1.0,
        backoff: float = 0.95,
        increase: float = 0.01,
        cooldown_s: float = 1.0,
        guard: float = 0.02,
    ) -> None:
        self.window_s = window_s
        self.backoff = backoff
        self.increase = increase
        self.cooldown_s = cooldown_s
        self.guard = guard
        self.stated: float | None = None  # requests per second the headers allow
        self.learned: float | None = None  # requests per second set at the last decrease
        self.decreases = 0
        self._learned_at = 0.0
        self._last_decrease = -math.inf
        self._unmeasured = False  # the last cut went by the sending rate alone
        self._answers: deque[float] = deque()  # when the provider's non-429 replies came
        self._sends: deque[float] = deque()  # sends before any pace was set
        self._first_answer: float | None = None
        self._next_at = -math.inf
        self._busy = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def rate(self, now: float | None = None) -> float | None:
        """The pace in requests per second (``None``: not paced)."""
        ceiling = None if self.stated is None else self.stated * (1.0 - self.guard)
        if self.learned is None:
            return ceiling
        now = time.monotonic() if now is None else now
        learned = self.learned * (1.0 + self.increase * max(0.0, now - self._learned_at))
        return learned if ceiling is None else min(learned, ceiling)

    async def acquire(self, *, first: bool = False) -> None:
        """Wait for this request's turn at the current pace."""
        if self.stated is None and self.learned is None and not self._waiters:
            self.note_send()
            return
        if not self._busy and not self._waiters:
            self._busy = True
        else:
            await _wait_in_line(self._waiters, first, give_back=self._leave)
        try:
            while True:
                now = time.monotonic()
                rate = self.rate(now)
                if rate is None:
                    return
                if self._next_at <= now:
                    # No credit for idle time: the next request goes one spacing after this.
                    self._next_at = now + 1.0 / rate
                    return
                # The pace may change while waiting (a 429): re-read it after a short sleep.
                await asyncio.sleep(min(self._next_at - now, 0.05))
        finally:
            self._leave()

    def _leave(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                return
        self._busy = False

    def note_send(self) -> None:
        """An unpaced send: until a pace is set, the sending rate is what a 429 goes by."""
        now = time.monotonic()
        self._sends.append(now)
        while self._sends[0] < now - self.window_s:
            self._sends.popleft()

    def on_answer(self, info: RateLimitInfo | None = None) -> None:
        """The provider answered (anything but a 429): count it; read its rate-limit headers."""
        now = time.monotonic()
        if self._first_answer is None:
            self._first_answer = now
        self._answers.append(now)
        self._expire(now)
        self._read(info)

    def _read(self, info: RateLimitInfo | None) -> None:
        if info is not None and info.limit:
            self.stated = info.limit / 60.0

    def _expire(self, now: float) -> None:
        while self._answers and self._answers[0] < now - self.window_s:
            self._answers.popleft()

    def answered(self, now: float | None = None) -> float | None:
        """The provider's answers per second over the last ``window_s`` (``None``: none)."""
        now = time.monotonic() if now is None else now
        self._expire(now)
        if not self._answers or self._first_answer is None:
            return None
        span = min(self.window_s, now - self._first_answer)
        if span < 0.1 * self.window_s or len(self._answers) < 4:
            return None  # too few answers to measure a rate
        return len(self._answers) / span

    def on_rate_limit(
        self, *, sent_at: float | None = None, info: RateLimitInfo | None = None
    ) -> None:
        """A request sent at ``sent_at`` (``time.monotonic()``) got a 429."""
        self._read(info)
        now = time.monotonic()
        current = self.rate(now)
        answered = self.answered(now)
        if (sent_at is not None and sent_at < self._last_decrease) or (
            now - self._last_decrease < self.cooldown_s
        ):
            # Part of the congestion already acted on: no further cut. But when that cut
            # had no measured acceptance to go by (the opening burst's sending rate, before
            # enough answers were counted), each 429 of the event brings the pace down to
            # the provider's answers as they are measured.
            if self._unmeasured and answered is not None and current is not None:
                if answered < current:
                    self.learned = max(answered, 1.0 / 60.0)
                    self._learned_at = now
            return
        if current is None and len(self._sends) >= 4:
            # The first 429, maybe before any reply: the unpaced sending rate was too much.
            current = len(self._sends) / max(now - self._sends[0], 0.1 * self.window_s)
        candidates = [
            r for r in (answered, None if current is None else current * self.backoff) if r
        ]
        if not candidates:
            return  # nothing to go by yet: the in-flight limit and the backoff act alone
        self._last_decrease = now
        self._unmeasured = answered is None
        self.learned = max(min(candidates), 1.0 / 60.0)
        self._learned_at = now
        self.decreases += 1


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
