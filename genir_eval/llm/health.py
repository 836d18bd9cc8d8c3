"""When to stop sending to an endpoint: the engine's early stop.

Two conditions make every later attempt of an engine a ``stopped`` failure, without a call:

- ``stop_after`` consecutive *endpoint* errors: permanent errors that no other request can
  escape (401 and 403: the key is wrong or lacks access; 402 or an exhausted quota: no money
  left; 404: the model does not exist). A bad request (400) or an unusable reply belongs to
  one request and does not count; any reply that is not such an error resets the streak.
- ``give_up_after`` seconds of nothing but failures to get any reply (connections refused,
  reset or timed out, DNS errors, attempts that timed out without an answer), counted from
  the send of the first such attempt after the last reply of any kind: the endpoint is dead
  or hung, and retrying each judgment for its whole deadline would only delay the same
  result. With the default 60 s attempt timeout a hung server is given up when its first
  attempts time out, a refused or unresolvable one after ``give_up_after``.

Both conditions are per engine, that is per provider, model and endpoint.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from genir_eval.llm.providers.base import ProviderError

__all__ = ["EndpointHealth", "is_endpoint_error", "is_connection_error"]

_ENDPOINT_STATUSES = (401, 402, 403, 404)
_CONNECTION_MARKERS = (
    "APIConnectionError",
    "ConnectError",
    "ConnectTimeout",
    "ConnectionError",
    "ConnectionRefused",
    "Connection refused",
    "Connection error",
    "Name or service not known",
    "nodename nor servname",
    "Temporary failure in name resolution",
    "attempt timed out after",  # no answer at all within the attempt timeout
    "APITimeoutError",
    # the classes classify.py names first
    "connection refused",
    "DNS failure",
    "connect timeout",
)


def is_endpoint_error(error: ProviderError) -> bool:
    """A permanent error every request to this endpoint will get (see the module doc)."""
    if error.error_class != "permanent":
        return False
    if error.status in _ENDPOINT_STATUSES:
        return True
    return error.status == 429  # classified permanent only when the quota is exhausted


def is_connection_error(error: ProviderError) -> bool:
    """A failure to get any HTTP reply from the endpoint (unreachable, or no answer)."""
    if error.status is not None or error.error_class != "transient":
        return False
    text = str(error)
    return any(marker in text for marker in _CONNECTION_MARKERS)


class EndpointHealth:
    """Counts an engine's endpoint errors and attempts without a reply; says when to stop.

    ``stop_after=0`` and ``give_up_after=0`` disable the respective condition."""

    def __init__(
        self,
        *,
        stop_after: int,
        give_up_after: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stop_after = stop_after
        self.give_up_after = give_up_after
        self._clock = clock
        self.streak = 0
        self._unreachable_since: float | None = None
        self.reason: str | None = None
        self._stopped: asyncio.Event | None = None

    @property
    def stopped(self) -> bool:
        return self.reason is not None

    def event(self) -> asyncio.Event:
        """Set when the engine stops (bound to the running loop on first use)."""
        if self._stopped is None:
            self._stopped = asyncio.Event()
            if self.reason is not None:
                self._stopped.set()
        return self._stopped

    def rebind(self) -> None:
        """Forget the event (the engine moved to another event loop)."""
        self._stopped = None

    def on_reply(self) -> None:
        """The endpoint answered (a completion, or an error that is not an endpoint error)."""
        self.streak = 0
        self._unreachable_since = None

    def on_error(self, error: ProviderError, message: str, *, sent_at: float | None = None) -> None:
        """Account one failed attempt; ``message`` is its redacted text, ``sent_at`` when it
        was sent (on this object's clock): an endpoint is unreachable since the first attempt
        that never reached it was sent, not since it timed out."""
        if self.stopped:
            return
        if is_endpoint_error(error):
            self._unreachable_since = None
            self.streak += 1
            if self.stop_after and self.streak >= self.stop_after:
                self._stop(
                    f"stopped after {self.streak} consecutive permanent errors; last: {message}"
                )
            return
        if is_connection_error(error):
            now = self._clock()
            if self._unreachable_since is None:
                self._unreachable_since = now if sent_at is None else min(now, sent_at)
            if self.give_up_after and now - self._unreachable_since >= self.give_up_after:
                self._stop(
                    f"gave up: the endpoint was unreachable or silent for "
                    f"{now - self._unreachable_since:.0f}s; last: {message}"
                )
            return
        self.on_reply()

    def _stop(self, reason: str) -> None:
        self.reason = reason
        if self._stopped is not None:
            self._stopped.set()

    def stop(self, reason: str) -> None:
        """Stop the engine for a reason of its own (its budget spent), unless stopped
        already."""
        if not self.stopped:
            self._stop(reason)

    async def sleep(self, delay: float) -> None:
        """Sleep ``delay`` seconds, or until the engine stops."""
        try:
            await asyncio.wait_for(self.event().wait(), delay)
        except asyncio.TimeoutError:
            pass
