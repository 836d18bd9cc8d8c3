"""Limits that keep a run within what a provider accepts.

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
  one, up to the configured maximum.
- :class:`RequestRate`: requests per minute, kept as at most ``rpm / 60`` in any 1 s window
  at the provider by a sliding window of sends (:class:`SendWindow`, which says why a window
  rather than even pacing or a token bucket); a retry of a judgment already begun goes before
  new work.
- :class:`LearnedRate`: without a configured request rate, the rate the provider accepts,
  learned from its replies and paced to once they show a limit (see the class).
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
    "Send",
    "SendWindow",
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


class SendWindow:
    """A sliding log of sends: at most ``cap`` stamped within any ``window_s``, spaced so that
    a catch-up never bursts (the admission logic of :class:`RequestRate` and
    :class:`LearnedRate`; the caller holds the gate and sleeps).

    Why a sliding window, and not even pacing or a token bucket:

    - Even pacing ``1 / rate`` apart with no credit for idle time loses every delay for good: a
      client the OS deschedules for 50 ms sends 50 ms later, and every later request too. On a
      loaded machine that cost a quarter of the throughput (0.73 of the bound).
    - A token bucket of capacity ``b`` at rate ``r`` admits ``b + r`` in a 1 s window: to keep
      that at most ``R`` it must run at ``R - b``, and it gives back at most ``b`` of the time lost
      to a stall.
    - A sliding window admits while fewer than ``cap`` sends fall in the last ``window_s``:
      ``cap`` in ANY window of that length, exactly, however the sends are bunched, and a send
      delayed by a stall leaves its place free for the next one (the whole window's worth of
      credit, never more). The provider counts arrivals, which trail the sends by a delay
      ``d``; arrivals in a 1 s window come from sends within ``1 + (d_max - d_min)`` s, so a
      window lengthened by the delay's spread keeps the promise at the provider too. A count
      margin (``cap`` below ``R``) absorbs a few late sends whatever their delay.

    The sends are also spaced at least ``window_s / (cap * catch_up)`` apart: the window
    replays its first pattern (send ``k + cap`` goes when send ``k`` leaves), so a burst would be
    replayed as a burst at every window edge, where a few late arrivals of one burst would
    share a 1 s window with the early ones of the next; spaced, a catch-up after a stall runs at
    ``catch_up`` times the rate, and never as one burst.

    Each send is counted from when it left: the engine tells the window when the request was
    written to the provider (:func:`~genir_eval.llm.base.report_departure`; the SDK providers
    report it from their HTTP connection), after the SDK built it, waited for a connection or
    opened one, and after any stall of the client in between; the stamp given at the grant is
    then replaced by that time. What is left between the stamp and the provider's count is the
    network and the provider's own reading of the request, which the window's length covers.

    For a send whose departure is not reported (a provider that cannot tell) two delays are
    guessed instead: the first requests of a run wait behind the client's start-up work and
    opening connections (measured against the fake server: up to ~120 ms at the start, p99
    ~6 ms afterwards), so sends in the first ``warmup_s`` are stamped up to ``warmup_extra_s``
    later (decaying to zero); and a send admitted just before the client stalls (a busy event
    loop, a process the OS does not schedule) goes out when the stall ends: when the gate
    wakes more than ``late_s`` after it meant to, the sends admitted within ``pipeline_s``
    before it went to sleep are stamped at the time it woke.

    A send counted from its departure makes the send ``cap`` later wait for that departure, and
    then the next send's own delay to leave adds up window after window: so a send is granted
    ahead by the shortest delay to departure among those granted in the last second, at most
    ``max_lead_s`` (a small part of the window's time margin, so a send leaving much faster
    than the recent ones still keeps the window).

    The stamps stay in order (a stamp moved later moves the later sends' stamps with it, never
    earlier: counted longer, never shorter).
    """

    def __init__(
        self,
        *,
        catch_up: float = 2.0,
        warmup_s: float = 1.0,
        warmup_extra_s: float = 0.3,
        pipeline_s: float = 0.1,
        late_s: float = 0.01,
        max_lead_s: float = 0.003,
    ) -> None:
        self.catch_up = catch_up
        self.max_lead_s = max_lead_s
        self.warmup_s = warmup_s
        self.warmup_extra_s = warmup_extra_s
        self.pipeline_s = pipeline_s
        self.late_s = late_s
        self._sends: deque[Send] = deque()
        self.sent = 0
        self.departed = 0  # sends whose departure was reported
        self.restamped = 0
        self.max_late = 0.0  # the longest the gate woke late (seconds): the client's stalls
        self.max_delay = 0.0  # the longest from a grant to its reported departure (seconds)
        self._last = -math.inf
        self._start: float | None = None
        self.lead_s = 1.0
        self._delays: deque[tuple[float, float]] = deque()

    @property
    def stamps(self) -> list[float]:
        """The times the sends still in a window are counted from, oldest first."""
        return [send.at for send in self._sends]

    def _expire(self, now: float, window_s: float) -> None:
        sends = self._sends
        while sends and sends[0].at <= now - window_s:
            sends.popleft()

    def count(self, now: float, window_s: float) -> int:
        """Sends stamped within the last ``window_s``."""
        self._expire(now, window_s)
        return len(self._sends)

    def next_at(self, now: float, cap: int, window_s: float) -> float:
        """The earliest time a send may go (``<= now``: at once)."""
        self._expire(now, window_s)
        at = self._last + window_s / (cap * self.catch_up)
        sends = self._sends
        if len(sends) >= cap:
            # Granted ahead by the shortest recent wait from a grant to its departure, the
            # send leaves no sooner than the window allows.
            lead = min(self._delays[0][1], self.max_lead_s) if self._delays else 0.0
            at = max(at, sends[len(sends) - cap].at + window_s - lead)
        return at

    def admit(self, now: float) -> Send:
        """Count a send granted at ``now``; the returned handle reports its departure."""
        if self._start is None:
            self._start = now
        warm = self.warmup_extra_s * max(0.0, 1.0 - (now - self._start) / self.warmup_s)
        send = Send(self, now, now + warm)
        self._sends.append(send)
        self._last = now
        self.sent += 1
        return send

    def depart(self, send: Send, at: float) -> None:
        """``send`` was written to the provider at ``at``: count it from then."""
        if send.departed:
            return
        send.departed = True
        self.departed += 1
        delay = max(0.0, at - send.granted)
        self.max_delay = max(self.max_delay, delay)
        # the shortest delay of the sends granted within the last lead_s, kept as a
        # monotonic queue (the first holds the minimum)
        delays = self._delays
        while delays and delays[-1][1] >= delay:
            delays.pop()
        delays.append((send.granted, delay))
        while delays[0][0] < send.granted - self.lead_s:
            delays.popleft()
        sends = self._sends
        for i in range(len(sends) - 1, -1, -1):
            if sends[i] is send:
                break
        else:
            return  # already out of every window
        # Never before an earlier send's stamp, and later sends no earlier than this one.
        send.at = max(at, sends[i - 1].at) if i > 0 else at
        self._order(i + 1)

    def _order(self, i: int) -> None:
        sends = self._sends
        for j in range(max(1, i), len(sends)):
            if sends[j].at < sends[j - 1].at:
                sends[j].at = sends[j - 1].at

    def woke(self, slept_at: float, due: float, now: float) -> None:
        """The gate slept from ``slept_at`` meaning to wake at ``due`` and woke at ``now``."""
        late = now - due
        self.max_late = max(self.max_late, late)
        if late <= self.late_s:
            return
        # Sends admitted just before the sleep may still have been on their way out when
        # the client stalled; and when this process was not scheduled, the provider's side
        # may not have been either (a loaded machine): count them from now.
        sends = self._sends
        first = len(sends)
        for i in range(len(sends) - 1, -1, -1):
            send = sends[i]
            if send.granted < slept_at - self.pipeline_s:
                break
            if send.at < now:
                send.at = now
                self.restamped += 1
                first = i
        self._order(first + 1)


class Send:
    """One send in a :class:`SendWindow`: when it was granted and the time it is counted from
    (its departure once reported)."""

    __slots__ = ("granted", "at", "departed", "_window")

    def __init__(self, window: SendWindow, granted: float, at: float) -> None:
        self.granted = granted
        self.at = at
        self.departed = False
        self._window = window

    def depart(self, at: float) -> None:
        """The request was written to the provider at ``at`` (``time.monotonic()``)."""
        self._window.depart(self, at)


async def _paced(
    gate: _Gate,
    first: bool,
    limits: Callable[[float], tuple[int, float] | None],
    *,
    ready: Callable[[float], float] | None = None,
    max_sleep: float = math.inf,
) -> tuple[Send, bool] | None:
    """Wait in ``gate``'s line, then until ``gate.window`` admits a send under ``limits(now)``
    (``(cap, window_s)``; ``None``: not paced) and, when given, ``ready(now)`` (the earliest
    time another constraint allows). Sleeps at most ``max_sleep`` at a time so that limits
    changing meanwhile are re-read. Returns ``None`` when the send was not paced, else the
    send and whether it had to wait for the pace."""
    await gate.enter(first)
    window = gate.window
    waited = False
    try:
        while True:
            now = time.monotonic()
            current = limits(now)
            if current is None:
                return None
            cap, window_s = current
            at = window.next_at(now, cap, window_s)
            if ready is not None:
                at = max(at, ready(now))
            if at <= now:
                return window.admit(now), waited
            waited = True
            due = min(at, now + max_sleep)
            await asyncio.sleep(due - now)
            window.woke(now, due, time.monotonic())
    finally:
        gate.leave()


class _Gate:
    """One request at a time through a :class:`SendWindow`, in a queue where a retry of a
    judgment already begun (``first=True``) goes before new work."""

    def __init__(self, window: SendWindow) -> None:
        self.window = window
        self._busy = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def idle(self) -> bool:
        return not self._busy and not self._waiters

    async def enter(self, first: bool) -> None:
        if self.idle:
            self._busy = True
            return
        await _wait_in_line(self._waiters, first, give_back=self.leave)

    def leave(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)  # the gate passes straight to the next in line
                return
        self._busy = False


class RequestRate:
    """At most ``rpm / 60`` requests in any 1 s window at the provider (and so at most ``rpm``
    in any minute): a :class:`SendWindow` of ``cap = floor(rpm / 60 * (1 - guard))`` sends per
    ``window_s * (1 + jitter)`` (``window_s`` is 1 s, or ``60 / rpm`` below 60 rpm).

    - ``jitter`` (1%: 10 ms) covers the spread of the delay from a send leaving (reported by
      the provider, see :class:`SendWindow`) to the provider counting it: measured against the
      fake server on 127.0.0.1 from the HTTP connection's write of the request headers to the
      server's arrival stamp, 0.1-8 ms (p99 3-4 ms); before the sends were counted from their
      departure, from the grant it was up to 60 ms (an SDK building the request, a connection
      opening, the event loop busy between the two). ``guard`` (0 by default) keeps ``cap``
      below the rate by a fraction, a count margin for a provider whose own clock is coarser.
      Counting from departures let the margin shrink from 2% of the count and 2% of the time
      (0.95 of the rate) to 1% of the time: with 5% of the calls retried (500/503/dropped),
      which spend the rate too, a run at 30/s went from 0.86-0.87 of the bound to 0.90-0.92.
    - Before, requests went out through ``asyncio-throttle``'s ``Throttler`` over 250 ms
      windows, lengthened by twice the client's measured stalls: the Throttler logs a send
      when it is granted and cannot move it when a stall delays it, so the margin had to cover
      the worst stall on every window, and a starved client lost a quarter of its rate (0.73 of
      the bound) while still passing the limit now and then.
    """

    def __init__(
        self,
        rpm: float,
        *,
        window_s: float = 1.0,
        guard: float = 0.0,
        jitter: float = 0.01,
        catch_up: float = 4.0,
        unreported: tuple[float, float] = (0.02, 0.02),
    ) -> None:
        if rpm <= 0:
            raise ValueError("rpm must be > 0")
        self.rpm = rpm
        per_second = rpm / 60.0
        base = max(window_s, 1.0 / per_second)
        self.cap = max(1, math.floor(per_second * base * (1.0 - guard)))
        self.window_s = base * (1.0 + jitter)
        # Until a provider reports a departure (and for one that never does), sends are
        # counted from their grant, whose delay to the provider is longer and wider: the
        # window keeps the margins that took then, ``unreported = (guard, jitter)``.
        self._unreported = (
            max(1, math.floor(per_second * base * (1.0 - unreported[0]))),
            base * (1.0 + unreported[1]),
        )
        self.window = SendWindow(catch_up=catch_up, late_s=base * jitter)
        self._gate = _Gate(self.window)

    @property
    def sent(self) -> int:
        return self.window.sent

    @property
    def max_lag(self) -> float:
        """The longest the gate woke late: how long this client stalled (seconds)."""
        return self.window.max_late

    def _limits(self, now: float) -> tuple[int, float]:
        if not self.window.departed:
            return self._unreported
        return self.cap, self.window_s

    async def acquire(self, *, first: bool = False) -> Send:
        """Wait until a request may be sent; ``first`` jumps the queue (a retry). Returns the
        send, to report its departure to."""
        paced = await _paced(self._gate, first, self._limits)
        assert paced is not None  # a configured rate always paces
        return paced[0]


class RateGate(Protocol):
    """What paces an engine's sends and hears how the provider took them (:class:`LearnedRate`,
    or a cluster-wide limiter standing in for it)."""

    async def acquire(self, *, first: bool = False) -> Send | None:
        """Wait for the send's turn; returns the :class:`Send` to report its departure to, if
        the gate counts from departures."""

    def on_answer(self, info: RateLimitInfo | None = None) -> None: ...

    def on_rate_limit(
        self, *, sent_at: float | None = None, info: RateLimitInfo | None = None
    ) -> None: ...


class LearnedRate:
    """Requests paced to the rate the provider accepts, when the user gave none.

    An in-flight limit alone cannot keep to a provider's request rate: after a 429 it climbs
    back by latency-sized steps while the rate allows none (against a server limiting to R
    requests a second it had 60-80% of its calls rejected and reached 0.60 of R). This paces
    the sends instead, through a :class:`SendWindow` holding ``floor(rate)`` sends per
    ``floor(rate) / rate`` seconds (so time lost to a stall is made up within the window), with
    the rate learned from these signals:

    - **stated**: a reply's ``x-ratelimit-limit-requests`` (OpenAI) or
      ``anthropic-ratelimit-requests-limit`` (Anthropic) header gives the requests allowed per
      minute; the pace never goes above ``limit / 60 * (1 - guard)``. The same reply's
      ``remaining`` (requests left when it arrived) and ``reset`` (time until the allowance is
      full again) say where the provider's own count stands: a send waits until ``remaining``,
      plus what the limit restored since, less this client's sends since, allows one more
      (until ``reset``, after which it is full). This keeps to the provider's count when
      something else spends the same allowance (another run with the same key) or the opening
      burst spent it.
    - **named**: a 429 whose body names the limit it enforces (OpenAI's "on requests per min
      (RPM): Limit 500", Anthropic's "rate limit ... of 50 requests per minute"; see
      :func:`~genir_eval.llm.classify.parse_limit_message`) states it as the headers do; one
      that names another limit (tokens per minute, requests per day) is evidence of a limit
      without its figure.
    - **observed**: 429s that keep coming at a steady send rate: at least
      ``evidence_refusals`` of them within ``window_s``, making up more of the provider's
      replies in it than a provider refusing ``evidence_share`` (5%) of the calls at random
      would send but once in a thousand windows (a binomial tail: 29 of 320 replies, 7 of
      37). A provider enforcing a rate ``R`` refuses ``1 - R / S`` of the calls sent at
      ``S`` (37% at 320 a second against 200), every call past its limit. Until then a 429
      is noise (an overloaded endpoint, a burst elsewhere on a shared key): the request that
      met it waits its Retry-After and goes again, and neither the pace nor the in-flight
      limit is touched. 1.7% of the calls refused at random (36 of 2,107) made the rate
      learned from every 429 a fraction of what the provider served: a run 5-8x slower than
      unpaced, and than its peers (``../shared/peerbench``).

    Once a limit is evident the pace is cut, once per congestion event (a 429 for a request
    sent before the last decrease, or within ``cooldown_s`` of it, is the same event, as in
    :class:`AdaptiveLimit`), to the lower of ``backoff`` times the current pace and the rate
    of the provider's answers (every reply but a 429) over the last ``window_s``: what the
    provider actually accepted while it was rejecting the rest. The first cut goes by the
    unpaced sending rate as the current pace. While paced with sends waiting for the pace,
    every 429 is the limit's (the run sits at the pace, near the limit); paced but below it
    (nothing waiting), a 429 needs the evidence again. After a cut from a pace the provider mostly took (its answers at
    least 90% of the pace), the pace climbs back to ``recover`` (98%) of that pace (or of
    the answers, if fewer) within ``recover_s``, fast at first and levelling off (CUBIC's
    concave growth, Ha, Rhee and Xu 2008; RFC 8312): a cut of 5% then costs ~1% of the
    throughput instead of 2.5% over the five seconds a 1%/s climb takes. Beyond that, and
    after any other cut, the pace climbs by ``increase`` of itself per second (a probe for
    more: providers raise limits, and the estimate may be low), so a 429 comes back now and
    then, as the price of finding the limit without being told it. While sends keep waiting
    for the pace (it, not the work, holds the run back) and no 429 comes, the pace is
    further multiplied by ``1 + probe * t**3`` after ``t`` such seconds, at most
    ``probe_max`` (CUBIC's convex probing; +3% at 2 s, +11% at 3 s, +25% from 4 s on): a cut
    measured low, under client stalls or faults (a run stuck at 0.83 of the limit climbed
    back only 1% a second), is made up in a few seconds, and a run below its pace (nothing
    waiting) never probes. When the 429s stop, sends waiting for the pace ``forget_s``
    without one taken for the limit's, the learned pace is dropped and sends go unpaced again (a stated limit stays): a limit that was there
    comes back as 429s, and is learned again within a fraction of a second.

    Before any evidence sends go unpaced: a limit is then met by the first seconds' burst,
    which is what tells it from noise (the share refused). ``opening`` paces them instead
    from ``opening`` requests a second, as TCP's slow start opens its congestion window (RFC
    5681 section 3.1): ``opening_growth`` times the rate actually sent over the last
    ``opening_window_s``, which compounds to a doubling about every ``opening_window_s``
    (0.46 s with 1.5 and 0.5 s) while the work keeps up with the pace, and stays at
    ``opening_growth`` times the work's own rate when the work is slower (so a slow stretch
    does not bank a burst for later, as RFC 7661 keeps an idle window from growing); a limit
    ends it. It is off by default: it rejected fewer calls at the start (19-23 of about 620
    instead of 137-138 against a server allowing 30 a second), but cost every run its ramp,
    about ``0.66 * ln(R / opening)`` seconds to reach a rate ``R`` (3.6 s for 2,000 a
    second; 80 sessions judged in 1.6 s instead of 0.8 s), and a 429 costs no tokens.
    Retries of judgments already begun (``first=True``) go before new work, as with
    :class:`RequestRate`.
    """

    def __init__(
        self,
        *,
        window_s: float = 1.0,
        backoff: float = 0.95,
        increase: float = 0.01,
        cooldown_s: float = 1.0,
        guard: float = 0.02,
        recover: float = 0.98,
        recover_s: float = 2.0,
        probe: float = 0.004,
        probe_max: float = 1.25,
        evidence_refusals: int = 3,
        evidence_share: float = 0.05,
        forget_s: float = 5.0,
        opening: float | None = None,
        opening_growth: float = 1.5,
        opening_window_s: float = 0.5,
    ) -> None:
        self.window_s = window_s
        self.opening = opening
        self.opening_growth = opening_growth
        self.opening_window_s = opening_window_s
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
        self._refusals: deque[float] = deque()  # when its 429s came
        self.evidence_refusals = evidence_refusals
        self.evidence_share = evidence_share
        self.forget_s = forget_s
        self.refused = 0  # 429s
        self.ignored = 0  # 429s taken for noise: retried, the pace untouched
        self.forgotten = 0  # learned paces dropped when the 429s stopped
        self._last_refusal = -math.inf
        self._sends: deque[float] = deque()  # sends before any pace was learned
        self._first_answer: float | None = None
        self.recover = recover
        self.recover_s = recover_s
        self.probe = probe
        self.probe_max = probe_max
        self._held_since: float | None = None  # sends have waited for the pace since then
        self._target: float | None = None  # the pace to climb back to after a cut
        self.window = SendWindow()
        self._gate = _Gate(self.window)
        # what the provider's headers last said of its count: (sent_at, remaining, limit per
        # second, when its allowance is full again)
        self._provider: tuple[float, float, float, float] | None = None
        self.log_s = 2.0
        self._sent: deque[float] = deque()  # this client's sends over the last log_s

    def rate(self, now: float | None = None) -> float | None:
        """The pace in requests per second (``None``: not paced)."""
        ceiling = None if self.stated is None else self.stated * (1.0 - self.guard)
        if self.learned is None:
            return ceiling
        now = time.monotonic() if now is None else now
        if self._stale(now):
            return ceiling  # the 429s stopped: the learned pace is dropped (see _forget)
        since = max(0.0, now - self._learned_at)
        base, target = self.learned, self._target
        if target is not None and target > base:
            if since < self.recover_s:
                # Back toward the pace the provider took just before the 429, fast at first and
                # levelling off as it nears it (CUBIC's concave region, RFC 8312 section 4.1).
                gap = (1.0 - since / self.recover_s) ** 3
                learned = target - (target - base) * gap
                return learned if ceiling is None else min(learned, ceiling)
            base, since = target, since - self.recover_s
        learned = base * (1.0 + self.increase * since)
        if self._held_since is not None:
            # Sends have queued at this pace without a 429 since then: probe faster and
            # faster (CUBIC's convex region beyond the last maximum, RFC 8312 section 4.1),
            # so a pace set low by a cut measured under stalls or faults recovers in seconds.
            held = now - max(self._held_since, self._learned_at)
            learned *= min(self.probe_max, 1.0 + self.probe * max(0.0, held) ** 3)
        return learned if ceiling is None else min(learned, ceiling)

    @property
    def opened(self) -> bool:
        """Whether the opening is over: a 429 or a stated limit gave the pace."""
        return self.stated is not None or self.learned is not None

    def opening_rate(self, now: float | None = None) -> float | None:
        """The pace of the opening (``None`` once it is over, or when ``opening`` is
        ``None``): ``opening_growth`` times the sends of the last ``opening_window_s``, at
        least ``opening`` a second."""
        if self.opening is None or self.opened:
            return None
        now = time.monotonic() if now is None else now
        since = now - self.opening_window_s
        recent = 0
        for t in reversed(self._sent):
            if t <= since:
                break
            recent += 1
        return max(self.opening, self.opening_growth * recent / self.opening_window_s)

    def pace(self, now: float | None = None) -> float | None:
        """The requests per second sends keep to now: :meth:`rate`, or during the opening
        :meth:`opening_rate` (``None``: not paced)."""
        rate = self.rate(now)
        return rate if rate is not None else self.opening_rate(now)

    def _limits(self, now: float) -> tuple[int, float] | None:
        rate = self.pace(now)
        if rate is None:
            return None
        cap = max(1, math.floor(rate))
        return cap, cap / rate

    def provider_allows_at(self, now: float) -> float:
        """When the provider's own count, as its last headers stated it, allows one more
        request: ``remaining`` when the request sent at ``sent_at`` arrived, plus what its
        limit restores per second since, less this client's sends after that one, must reach
        one. Past ``reset`` (when the provider's allowance is full again) it says nothing."""
        state = self._provider
        if state is None:
            return -math.inf
        sent_at, remaining, per_s, full_at = state
        if now >= full_at:
            return -math.inf
        since = 0
        for t in reversed(self._sent):
            if t <= sent_at:
                break
            since += 1
        return min(full_at, sent_at + (1.0 + since - remaining) / per_s)

    async def acquire(self, *, first: bool = False) -> Send:
        """Wait for this request's turn at the current pace; returns the send, to report its
        departure to."""
        if self.learned is not None:
            self._forget(time.monotonic())
        if self.opening is None and not self.opened and self._gate.idle:
            return self.note_send()
        # The pace may change while waiting (a 429): re-read it every 50 ms at most.
        paced = await _paced(
            self._gate, first, self._limits, ready=self.provider_allows_at, max_sleep=0.05
        )
        if paced is None:
            return self.note_send()
        send, waited = paced
        self.on_send(send.granted, waited=waited)
        return send

    def on_send(self, now: float, *, waited: bool) -> None:
        """A paced send went at ``now``; ``waited``: it had to wait for the pace (the pace,
        not the work at hand, is what holds the run back)."""
        self._log_send(now)
        if not self.opened:
            self._log_opening(now)
        if not waited:
            self._held_since = None
        elif self._held_since is None:
            self._held_since = now

    def _log_opening(self, now: float) -> None:
        """A send before any pace was learned: the sending rate is what the first 429 goes
        by."""
        self._sends.append(now)
        while self._sends[0] < now - self.window_s:
            self._sends.popleft()

    def _log_send(self, now: float) -> None:
        self._sent.append(now)
        while self._sent[0] < now - self.log_s:
            self._sent.popleft()

    def note_send(self) -> Send:
        """An unpaced send: until a pace is set, the sending rate is what a 429 goes by. It
        counts in the window the pace is kept over once set (a provider counts it too)."""
        now = time.monotonic()
        self._log_opening(now)
        self.window.count(now, self.log_s)  # forget what no window will count again
        self._log_send(now)
        return self.window.admit(now)

    def on_answer(self, info: RateLimitInfo | None = None, *, sent_at: float | None = None) -> None:
        """The provider answered (anything but a 429) the request sent at ``sent_at``
        (``time.monotonic()``): count it; read its rate-limit headers."""
        now = time.monotonic()
        if self._first_answer is None:
            self._first_answer = now
        self._answers.append(now)
        self._expire(now)
        self._read(info, sent_at)

    def _read(self, info: RateLimitInfo | None, sent_at: float | None = None) -> None:
        if info is None or not info.limit:
            return
        self.stated = info.limit / 60.0
        if sent_at is None or info.remaining is None:
            return
        if self._provider is not None and self._provider[0] >= sent_at:
            return  # a reply to an older request says less of the provider's count now
        reset = info.reset_s if info.reset_s is not None else self.window_s
        self._provider = (sent_at, info.remaining, self.stated, sent_at + reset)

    def _expire(self, now: float) -> None:
        while self._answers and self._answers[0] < now - self.window_s:
            self._answers.popleft()
        while self._refusals and self._refusals[0] < now - self.window_s:
            self._refusals.popleft()

    def _stale(self, now: float) -> bool:
        """Whether sends have waited for the learned pace ``forget_s`` without a 429 taken for
        the limit's: probed up to ``probe_max`` times it, the limit did not show."""
        if self.learned is None or self._held_since is None:
            return False
        return now - max(self._held_since, self._last_refusal) >= self.forget_s

    def _forget(self, now: float) -> None:
        """Drop the learned pace once it is stale (:meth:`_stale`)."""
        if self._stale(now):
            self.learned = None
            self._target = None
            self._held_since = None
            self._unmeasured = False
            self.forgotten += 1

    def evident(self, info: RateLimitInfo | None = None, now: float | None = None) -> bool:
        """Whether the 429s show a limit: ``info`` (a 429's headers or body) names one, or the
        429s within the last ``window_s`` are at least ``evidence_refusals`` and more of the
        provider's replies than a provider refusing ``evidence_share`` of them at random would
        send but once in a thousand (a binomial tail)."""
        if info is not None and (info.limit or info.names_limit):
            return True
        self._expire(time.monotonic() if now is None else now)
        refusals = len(self._refusals)
        replies = refusals + len(self._answers)
        share = self.evidence_share
        if refusals < self.evidence_refusals or refusals < share * replies:
            return False
        return _binomial_tail(refusals, replies, share) < _EVIDENCE_ALPHA

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
        """A request sent at ``sent_at`` (``time.monotonic()``) got a 429: the pace is cut
        when the 429s show a limit (:meth:`evident`) or the run sits at a learned pace;
        otherwise it is noise, and only the request waits."""
        now = time.monotonic()
        self.refused += 1
        self._refusals.append(now)
        self._forget(now)
        self._read(info, sent_at)
        # Paced, with sends waiting for the pace, the run sits at it: a 429 then is the
        # limit's as the probe finds it (a probe 10% over a limit of 20 a second meets two
        # in a second, too few to tell from noise, and would be forgotten, then met again
        # unpaced, at a third of the calls refused).
        at_pace = self.learned is not None and self._held_since is not None
        if not at_pace and not self.evident(info, now):
            self.ignored += 1
            return
        self._last_refusal = now
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
        # A pace that was set (not the opening burst's) and that the provider mostly took is
        # near its limit: climb back close to it within recover_s rather than at 1% a second.
        paced = self.learned is not None or self.stated is not None
        self._last_decrease = now
        self._unmeasured = answered is None
        self.learned = max(min(candidates), 1.0 / 60.0)
        took = answered is not None and current is not None and answered >= 0.9 * current
        self._target = (
            self.recover * min(current, answered)
            if paced and took and current and answered
            else None
        )
        self._learned_at = now
        self.decreases += 1


# How unlikely, for refusals at random, the 429s that count as a limit's must be.
_EVIDENCE_ALPHA = 1e-3


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), for ``k >= n * p`` (the terms then fall from the
    first), summed in floating point from the first term, taken in logs so a large ``n``
    does not underflow it."""
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0 if k > 0 else 1.0
    log_first = (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    term = math.exp(log_first)
    total = 0.0
    odds = p / (1.0 - p)
    for i in range(k, n + 1):
        total += term
        term *= (n - i) / (i + 1) * odds
        if term <= total * 1e-12:
            break
    return min(1.0, total)


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
