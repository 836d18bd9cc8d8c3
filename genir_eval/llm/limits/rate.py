"""A configured request rate: at most ``rpm / 60`` requests in any 1 s window at the
provider (:class:`RequestRate`), and the protocol of what paces an engine's sends
(:class:`RateGate`)."""

from __future__ import annotations

import math
from typing import Protocol

from genir_eval.llm.limits.window import Gate, Send, SendWindow, pace_send
from genir_eval.llm.providers.base import RateLimitInfo

__all__ = ["RateGate", "RequestRate"]


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
        self._gate = Gate(self.window)

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
        paced = await pace_send(self._gate, first, self._limits)
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
