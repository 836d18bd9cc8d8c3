"""Tokens per minute: :class:`TokenBudget` over a sliding 60 s window; a call reserves its
estimated input plus ``max_tokens`` and is reconciled with the real usage afterwards."""

from __future__ import annotations

import asyncio
import time
from collections import deque

__all__ = ["Reservation", "TokenBudget"]


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
