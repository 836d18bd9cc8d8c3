"""When the engine stops sending: consecutive endpoint errors, an unreachable endpoint."""

from __future__ import annotations

import pytest

from genir_eval.llm.health import EndpointHealth, is_connection_error, is_endpoint_error
from genir_eval.llm.providers.base import ProviderError
from genir_eval.llm.providers.classify import classify_exception


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _status(status: int, error_class: str = "permanent") -> ProviderError:
    return ProviderError(f"HTTP {status}", error_class=error_class, status=status)  # type: ignore[arg-type]


REFUSED = ProviderError("APIConnectionError: Connection error.", error_class="transient")


@pytest.mark.parametrize(
    ("error", "endpoint", "connection"),
    [
        (_status(401), True, False),
        (_status(403), True, False),
        (_status(404), True, False),
        (_status(429), True, False),  # permanent 429 = exhausted quota
        (_status(429, "rate_limit"), False, False),
        (_status(400), False, False),  # one bad request is that request's problem
        (_status(500, "transient"), False, False),
        (REFUSED, False, True),
        (ProviderError("attempt timed out after 60s", error_class="transient"), False, True),
        (ProviderError("RemoteProtocolError: dropped", error_class="transient"), False, False),
    ],
)
def test_error_kinds(error: ProviderError, endpoint: bool, connection: bool) -> None:
    assert is_endpoint_error(error) is endpoint
    assert is_connection_error(error) is connection


def test_stops_after_consecutive_endpoint_errors_only() -> None:
    health = EndpointHealth(stop_after=3, give_up_after=0)
    health.on_error(_status(401), "401")
    health.on_error(_status(401), "401")
    health.on_error(_status(400), "400")  # an answer that is not an endpoint error: reset
    assert health.streak == 0 and not health.stopped
    for _ in range(3):
        health.on_error(_status(401), "wrong key")
    assert health.stopped and health.reason is not None
    assert "3 consecutive permanent errors; last: wrong key" in health.reason


def test_gives_up_an_unreachable_endpoint_counting_from_the_first_send() -> None:
    clock = _Clock()
    health = EndpointHealth(stop_after=5, give_up_after=45.0, clock=clock)
    clock.now = 110.0  # the first attempt, sent at 100, fails after a 10 s connect timeout
    health.on_error(REFUSED, "refused", sent_at=100.0)
    clock.now = 140.0
    health.on_error(REFUSED, "refused", sent_at=130.0)
    assert not health.stopped
    health.on_reply()  # the endpoint answered: the count starts again
    clock.now = 150.0
    health.on_error(REFUSED, "refused", sent_at=141.0)
    clock.now = 185.0
    health.on_error(REFUSED, "refused", sent_at=175.0)
    assert not health.stopped  # 44 s since 141
    clock.now = 186.0
    health.on_error(REFUSED, "refused", sent_at=176.0)
    assert health.stopped and "unreachable or silent for 45s" in (health.reason or "")


def test_disabled_conditions_never_stop() -> None:
    clock = _Clock()
    health = EndpointHealth(stop_after=0, give_up_after=0, clock=clock)
    for i in range(100):
        clock.now += 10
        health.on_error(_status(401), "401")
        health.on_error(REFUSED, "refused", sent_at=float(i))
    assert not health.stopped


def test_sdk_connect_timeouts_count_as_unreachable() -> None:
    class ConnectTimeout(Exception):
        pass

    class APITimeoutError(Exception):
        pass

    try:
        try:
            raise ConnectTimeout("timed out")
        except ConnectTimeout as cause:
            raise APITimeoutError("Request timed out.") from cause
    except APITimeoutError as error:
        classified = classify_exception(error)
    assert classified.error_class == "transient" and is_connection_error(classified)
