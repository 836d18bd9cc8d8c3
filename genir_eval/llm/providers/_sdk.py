"""What the providers over an official async SDK share: a round-robin pool of SDK clients,
and every call's exceptions classified and redacted the same way."""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from genir_eval.llm.providers.base import Provider, departure, report_departure
from genir_eval.llm.providers.classify import classify_exception

__all__ = ["SDKProvider"]

_CONNECT_TIMEOUT_S = 10.0


def _preload_async_backend() -> None:
    """Import anyio's asyncio backend now: the SDKs' HTTP pool imports it lazily on its first
    request (~15 ms), which would otherwise stall the event loop at the first send."""
    try:
        importlib.import_module("anyio._backends._asyncio")
    except Exception:  # noqa: BLE001 - only an optimisation; the first request imports it
        pass


async def _trace_departure(request: Any) -> None:
    """An HTTP client's request hook: when an engine's call is under way, ask the connection
    for its trace events (HTTP core's ``trace`` extension) and report the request's departure
    when its body has been written, after any wait for a connection and the connection's
    set-up (:func:`~genir_eval.llm.providers.base.report_departure`)."""
    if departure.get() is None:
        return
    inner = request.extensions.get("trace")

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_body.complete"):
            report_departure()
        if inner is not None:
            await inner(event, info)

    request.extensions["trace"] = trace


def _tls_context() -> Any:
    """The TLS context the SDKs' default HTTP client would build (certifi's CA bundle, or
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` from the environment), built once."""
    return importlib.import_module("httpx2").create_ssl_context()


def _default_client(sdk: Any, tls: Any) -> Any:
    """The SDK's own default HTTP client with ``tls``, told to report when a request
    leaves."""
    return sdk.DefaultAsyncHttpxClient(verify=tls, event_hooks={"request": [_trace_departure]})


class SDKProvider(Provider):
    """Base of :class:`~genir_eval.llm.providers.openai_provider.OpenAIProvider` and
    :class:`~genir_eval.llm.providers.anthropic_provider.AnthropicProvider`."""

    _base_url: str
    _clients: list[Any]

    def _open_clients(
        self,
        client_class: Callable[..., Any],
        *,
        api_key: str,
        base_url: str,
        http_client: Any,
        timeout: float,
        pool_shards: int,
    ) -> None:
        """``pool_shards`` clients of ``client_class`` (one when ``http_client`` is injected),
        with the SDK's own retries off: the engine retries, with its limits."""
        self._base_url = base_url.rstrip("/")
        # credentials inside the URL (https://user:key@host) are secrets like the API key
        url = urlsplit(self._base_url)
        self._set_secrets(unquote(url.password or ""), unquote(url.username or ""))
        # A dead host that never completes the TCP handshake is known in seconds, not after
        # the whole attempt timeout (which a slow but healthy model may need).
        sdk = importlib.import_module(client_class.__module__.split(".")[0])
        limits = sdk.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT_S))
        shards = 1 if http_client is not None else max(1, pool_shards)
        if http_client is not None:
            hooks = http_client.event_hooks
            hooks["request"] = [*hooks.get("request", ()), _trace_departure]
            http_client.event_hooks = hooks
        # One TLS context for every shard: each builds its own otherwise, reading the CA
        # bundle again (~0.3 s of CPU each on a loaded machine).
        tls = None if http_client is not None else _tls_context()
        self._clients = [
            client_class(
                api_key=api_key,
                base_url=self._base_url,
                # the SDK's own default HTTP client, told to report when a request leaves
                http_client=http_client or _default_client(sdk, tls),
                max_retries=0,
                timeout=limits,
            )
            for _ in range(shards)
        ]
        self._next = itertools.cycle(self._clients)
        _preload_async_backend()

    @property
    def base_url(self) -> str | None:
        return self._base_url

    async def _send(self, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """``await call(client)`` on the next client of the pool; any exception it raises
        becomes a classified, redacted :class:`~genir_eval.llm.providers.base.ProviderError`."""
        try:
            return await call(next(self._next))
        except Exception as error:  # noqa: BLE001 - every SDK error is classified
            # The SDK's message may quote an error body that echoes the key: the chained
            # original is dropped (``from None``) so a traceback cannot print it either.
            raise self.redact_error(classify_exception(error)) from None

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()
