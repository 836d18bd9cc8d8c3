"""The providers' HTTP path (the SDKs' aiohttp client, genir_eval/llm/providers/_sdk.py)
against the local fake server over real sockets: what each fault becomes for the engine
(expected values by hand from the rules in genir_eval/llm/providers/classify.py), when a
request reports leaving, and its pools closed without a warning."""

from __future__ import annotations

import asyncio
import gc
import socket
from typing import Any

import pytest

from genir_eval.llm import GenerateConfig, Message, ProviderError
from genir_eval.llm.health import is_connection_error
from genir_eval.llm.providers import RateLimitInfo
from genir_eval.llm.providers.base import Provider, departure
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.testing import FakeLLMServer, Fault

_MESSAGES = (Message("system", "You judge."), Message("user", "judge item 1"))
_CONFIG = GenerateConfig(model="fake-model", max_tokens=16)


def _provider(server: FakeLLMServer | str, **kwargs: Any) -> OpenAIProvider:
    """A provider of ``server`` (with its key), or of a base URL where nothing answers."""
    if isinstance(server, str):
        return OpenAIProvider(model="fake-model", base_url=server, api_key="sk-x", **kwargs)
    return OpenAIProvider(
        model="fake-model", base_url=server.openai_base_url, api_key=server.api_key, **kwargs
    )


async def _call(provider: Provider) -> tuple[Any, list[float]]:
    """One call with a departure listener set as the engine sets it; returns the completion
    or the ProviderError, and the departures reported."""
    departures: list[float] = []
    token = departure.set(departures.append)
    try:
        return await provider.generate(_MESSAGES, _CONFIG), departures
    except ProviderError as error:
        return error, departures
    finally:
        departure.reset(token)


def _outcome(server: FakeLLMServer | str, **kwargs: Any) -> tuple[Any, list[float]]:
    async def run() -> tuple[Any, list[float]]:
        provider = _provider(server, **kwargs)
        try:
            return await _call(provider)
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_the_default_client_is_the_sdks_aiohttp_client(server: FakeLLMServer) -> None:
    import openai

    provider = _provider(server, pool_shards=3)
    assert len(provider._clients) == 3
    for client in provider._clients:
        assert isinstance(client._client, openai.DefaultAioHttpClient)
    asyncio.run(provider.aclose())


def test_a_reply_reports_its_departure_and_its_rate_limit_headers() -> None:
    with FakeLLMServer(rate_limit_rpm=6000, rate_limit_headers=True) as server:
        result, departures = _outcome(server)
        arrived = server.stats.arrivals
    assert result.text and result.usage.input_tokens > 0
    # OpenAI's x-ratelimit-* headers as the server sends them: 6000 a minute, one used
    assert result.rate_limit is not None
    assert result.rate_limit.limit == 6000
    assert result.rate_limit.remaining is not None and result.rate_limit.remaining < 6000
    # reported once, when the request was written: before the server counted its arrival
    assert len(departures) == 1 and len(arrived) == 1
    assert departures[0] <= arrived[0]


# fault -> (error class, overload, status, counted as no reply from the endpoint)
FAULTS = [
    ("server_error", "transient", False, 500, False),
    ("unavailable", "transient", True, 503, False),
    ("overloaded", "transient", True, 529, False),
    ("drop", "transient", False, None, True),
    ("malformed", "transient", False, None, False),
    ("bad_request", "permanent", False, 400, False),
    ("unauthorized", "permanent", False, 401, False),
    ("quota", "permanent", False, 429, False),
]


@pytest.mark.parametrize(("fault", "error_class", "overload", "status", "no_reply"), FAULTS)
def test_each_fault_becomes_its_class(
    server: FakeLLMServer,
    fault: str,
    error_class: str,
    overload: bool,
    status: int | None,
    no_reply: bool,
) -> None:
    server.push_script([fault])
    error, departures = _outcome(server)
    assert isinstance(error, ProviderError)
    assert (error.error_class, error.overload, error.status) == (error_class, overload, status)
    assert is_connection_error(error) is no_reply
    assert len(departures) == 1
    if fault == "drop":
        assert "connection was dropped" in str(error)


def test_a_429_brings_its_retry_after_and_the_limit_its_headers_state() -> None:
    # 60 a minute with one second's burst: the first call takes the only token, the second
    # is refused with a retry-after-ms near 1 s and the x-ratelimit-* headers
    with FakeLLMServer(rate_limit_rpm=60, rate_limit_headers=True) as server:

        async def two() -> tuple[Any, Any]:
            provider = _provider(server)
            try:
                return (await _call(provider))[0], (await _call(provider))[0]
            finally:
                await provider.aclose()

        first, error = asyncio.run(two())
    assert first.rate_limit == RateLimitInfo(
        limit=60, remaining=0, reset_s=pytest.approx(1.0, abs=0.1)
    )
    assert isinstance(error, ProviderError)
    assert (error.error_class, error.status, error.overload) == ("rate_limit", 429, False)
    assert error.retry_after is not None and 0.5 < error.retry_after <= 1.0
    assert error.rate_limit is not None
    assert (error.rate_limit.limit, error.rate_limit.remaining) == (60, 0)


def test_a_429_naming_its_limit_in_milliseconds() -> None:
    message = "Rate limit reached on requests per min (RPM): Limit 500, Used 500, Requested 1."
    with FakeLLMServer(rate_limit_headers=False) as server:
        server.push_script(
            [Fault("rate_limit", retry_after=1.5, retry_after_ms=True, message=message)]
        )
        error, _ = _outcome(server)
    assert isinstance(error, ProviderError)
    assert error.retry_after == pytest.approx(1.5)
    assert error.rate_limit == RateLimitInfo(limit=500)


def test_a_reply_that_never_comes_is_a_timeout_and_overload(server: FakeLLMServer) -> None:
    server.push_script(["hang"])
    error, departures = _outcome(server, timeout=0.3)
    assert isinstance(error, ProviderError)
    assert (error.error_class, error.overload) == ("transient", True)
    assert "Timeout" in str(error) and len(departures) == 1


def test_an_endpoint_that_refuses_connections_is_unreachable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error, departures = _outcome(f"http://127.0.0.1:{port}/v1")
    assert isinstance(error, ProviderError)
    assert (error.error_class, error.overload) == ("transient", False)
    assert is_connection_error(error)
    assert "ConnectError" in str(error)
    assert departures == []  # it never left


def test_pools_close_without_a_warning(server: FakeLLMServer) -> None:
    """Warnings are errors here: an aiohttp session or connection left open warns (a
    ResourceWarning, or aiohttp's 'Unclosed client session') when collected."""

    async def run() -> None:
        provider = _provider(server, pool_shards=4)
        await asyncio.gather(*(_call(provider) for _ in range(8)))
        await provider.aclose()

    asyncio.run(run())
    gc.collect()
    # every shard made its connections and closed them: the server saw 8 requests
    assert server.stats.total == 8


def test_an_injected_httpx_client_reports_departures_too(server: FakeLLMServer) -> None:
    import httpx2

    async def run() -> tuple[Any, list[float]]:
        provider = _provider(server, http_client=httpx2.AsyncClient(), pool_shards=4)
        assert len(provider._clients) == 1  # an injected client is the only one
        try:
            return await _call(provider)
        finally:
            await provider.aclose()

    result, departures = asyncio.run(run())
    assert result.text == "reply to judge item 1"
    assert len(departures) == 1 and server.stats.total == 1


def test_the_environments_proxy_carries_the_requests(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTP_PROXY`` names the fake server as the proxy of a host that does not resolve: the
    request reaches the server in a proxy's absolute form (which it has no route for), so it
    went through the proxy, as with the SDK's default httpx client."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.base_url)
    target = "http://genir-eval-proxied.invalid/v1"
    error, departures = _outcome(target)
    assert isinstance(error, ProviderError)
    assert error.status == 404
    assert f"no route {target}/chat/completions" in str(error)
    assert len(departures) == 1 and server.stats.total == 0  # the route was never served


# The Anthropic SDK's aiohttp transport names aiohttp's errors otherwise than OpenAI's (a
# dropped connection is a ConnectError there): the same faults come out the same.
ANTHROPIC_FAULTS = [
    ("drop", "transient", False, None),
    ("overloaded", "transient", True, 529),
    ("hang", "transient", True, None),
]


@pytest.mark.parametrize(("fault", "error_class", "overload", "status"), ANTHROPIC_FAULTS)
def test_anthropic_faults_over_aiohttp(
    server: FakeLLMServer, fault: str, error_class: str, overload: bool, status: int | None
) -> None:
    from genir_eval.llm.providers.anthropic_provider import AnthropicProvider

    server.push_script([fault])

    async def run() -> tuple[Any, list[float]]:
        provider = AnthropicProvider(
            model="claude-test",
            base_url=server.anthropic_base_url,
            api_key=server.api_key,
            timeout=0.3,
        )
        try:
            return await _call(provider)
        finally:
            await provider.aclose()

    error, departures = asyncio.run(run())
    assert isinstance(error, ProviderError)
    assert (error.error_class, error.overload, error.status) == (error_class, overload, status)
    assert len(departures) == 1
    if fault == "drop":
        assert "connection was dropped" in str(error) and is_connection_error(error)
