"""The sliding window of sends that keeps a request rate at the provider (see
:class:`SendWindow`), and the gate sends pass through one at a time."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable

from genir_eval.llm.limits.waiters import wait_in_line

__all__ = ["Gate", "Send", "SendWindow", "pace_send"]


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
    written to the provider (:func:`~genir_eval.llm.providers.base.report_departure`; the SDK providers
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

    A send still not gone a whole window after its grant (a starved client: the SDK's work
    for it queued behind other calls for more than a second) would otherwise drop out of the
    window at its grant's stamp, and its place go to the next send, while it was still to
    leave: it then shared a second at the provider with a full window of later sends. Once
    departures are reported, such a send is held as leaving now, a place taken in every
    window, until it reports its departure (counted from then) or its call ends without one
    (counted from the end, the latest it can have left).

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
        # sends whose stamp left the window before they left the client (see _expire)
        self._overdue: set[Send] = set()
        self.overdue = 0  # how many sends were
        self.overdue_poll_s = 0.005

    @property
    def stamps(self) -> list[float]:
        """The times the sends still in a window are counted from, oldest first."""
        return [send.at for send in self._sends]

    def _expire(self, now: float, window_s: float) -> None:
        sends = self._sends
        while sends and sends[0].at <= now - window_s:
            send = sends.popleft()
            if self.departed and not send.departed:
                # Granted a window ago and still not gone (a starved client: the SDK's work
                # queued behind other calls): it leaves later, counted from then; until it
                # has, it holds a place in every window.
                self._overdue.add(send)

    def count(self, now: float, window_s: float) -> int:
        """Sends stamped within the last ``window_s``, and those granted earlier that have
        not left yet."""
        self._expire(now, window_s)
        return len(self._sends) + len(self._overdue)

    def next_at(self, now: float, cap: int, window_s: float) -> float:
        """The earliest time a send may go (``<= now``: at once)."""
        self._expire(now, window_s)
        at = self._last + window_s / (cap * self.catch_up)
        sends = self._sends
        # each send that is still to leave takes a place as if it left now
        room = cap - len(self._overdue)
        if room <= 0:
            return max(at, now + self.overdue_poll_s)  # until one of them leaves
        if len(sends) >= room:
            # Granted ahead by the shortest recent wait from a grant to its departure, the
            # send leaves no sooner than the window allows.
            lead = min(self._delays[0][1], self.max_lead_s) if self._delays else 0.0
            at = max(at, sends[len(sends) - room].at + window_s - lead)
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
        if send in self._overdue:
            self._overdue.discard(send)
            self.overdue += 1
            self._return(send, at)
            return
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

    def _return(self, send: Send, at: float) -> None:
        """An overdue send left at ``at``: back into the window, counted from then (never
        before the last stamp, so the stamps stay in order)."""
        sends = self._sends
        send.at = max(at, sends[-1].at) if sends else at
        sends.append(send)

    def settle(self, send: Send, at: float) -> None:
        """The call of ``send`` ended at ``at``: if it never reported leaving (an error
        before the request was written, or a provider that cannot tell) it is counted as it
        was, or, overdue, from ``at``, the latest it can have left."""
        if send.departed:
            return
        send.departed = True
        if send in self._overdue:
            self._overdue.discard(send)
            self.overdue += 1
            self._return(send, at)

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

    def settle(self, at: float) -> None:
        """The call ended at ``at`` (``time.monotonic()``), whether or not it reported
        leaving."""
        self._window.settle(self, at)


async def pace_send(
    gate: Gate,
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


class Gate:
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
        await wait_in_line(self._waiters, first, give_back=self.leave)

    def leave(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)  # the gate passes straight to the next in line
                return
        self._busy = False
