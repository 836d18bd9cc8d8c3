"""What the providers over an official async SDK share: a round-robin pool of SDK clients,
each over the SDK's own aiohttp client (its ``aiohttp`` extra) unless an httpx client is
injected, and every call's exceptions classified and redacted the same way."""

from __future__ import annotations

import base64
import functools
import importlib
import itertools
import zlib
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from genir_eval.errors import ConfigError
from genir_eval.llm.providers.base import (
    Provider,
    ProviderError,
    departure,
    report_departure,
)
from genir_eval.llm.providers.classify import classify_exception

__all__ = ["SDKProvider"]

_CONNECT_TIMEOUT_S = 10.0


def _preload_async_backend() -> None:
    """Import anyio's asyncio backend now: an injected httpx client's pool imports it lazily
    on its first request (~15 ms), which would otherwise stall the event loop at the first
    send (the SDKs' aiohttp client does not use it)."""
    try:
        importlib.import_module("anyio._backends._asyncio")
    except Exception:  # noqa: BLE001 - only an optimisation; the first request imports it
        pass


async def _trace_departure(request: Any) -> None:
    """An injected httpx client's request hook: when an engine's call is under way, ask the
    connection for its trace events (HTTP core's ``trace`` extension) and report the request's
    departure when its body has been written, after any wait for a connection and the
    connection's set-up (:func:`~genir_eval.llm.providers.base.report_departure`)."""
    if departure.get() is None:
        return
    inner = request.extensions.get("trace")

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_body.complete"):
            report_departure()
        if inner is not None:
            await inner(event, info)

    request.extensions["trace"] = trace


async def _report_chunk_sent(_session: Any, _context: Any, _params: Any) -> None:
    """An aiohttp trace hook: the request's body is being written to its connection (after
    any wait for a connection and its set-up), so the request leaves now. A body written in
    several chunks is reported at the first (a judgment's body is one)."""
    report_departure()


class ReplyTooLarge(Exception):
    """A reply that passed the cap on its bytes while it streamed."""


#: The content codings a reply may come in: decoded here, through the cap, so a small
#: compressed body cannot expand past it in memory (the requests ask for these alone).
_INFLATE = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
ACCEPT_ENCODING = "gzip, deflate"


def _over(limit: int) -> ReplyTooLarge:
    return ReplyTooLarge(
        f"reply too large: over {limit} bytes (max_reply_bytes), cut off as it streamed"
    )


@functools.cache
def _capped_stream_class() -> Any:
    """:class:`httpx.AsyncByteStream` (the SDKs' HTTP library, imported when a provider is
    made) stopping with :class:`ReplyTooLarge` once more than its ``limit`` bytes have come
    on the wire or, for a compressed reply it decodes itself (``wbits``), once more than
    ``limit`` decoded bytes would come out: what a reply holds in memory is bounded by the
    cap, however long the server keeps sending (a 200 reply streamed without end, a huge
    body, a compression bomb)."""
    httpx = importlib.import_module("httpx2")

    class CappedStream(httpx.AsyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, inner: Any, limit: int, wbits: int | None = None) -> None:
            self._inner = inner
            self._limit = limit
            self._wbits = wbits

        async def __aiter__(self) -> Any:
            wire = out = 0
            inflate = None if self._wbits is None else zlib.decompressobj(self._wbits)
            async for chunk in self._inner:
                wire += len(chunk)
                if wire > self._limit:
                    raise _over(self._limit)
                if inflate is not None:
                    # at most one byte past the cap comes out: enough to know it is over
                    chunk = inflate.decompress(chunk, self._limit - out + 1)
                    if inflate.unconsumed_tail:
                        raise _over(self._limit)
                out += len(chunk)
                if out > self._limit:
                    raise _over(self._limit)
                if chunk:
                    yield chunk
            if inflate is not None:
                tail = inflate.flush()
                if out + len(tail) > self._limit:
                    raise _over(self._limit)
                if tail:
                    yield tail

        async def aclose(self) -> None:
            await self._inner.aclose()

    return CappedStream


class _ReplyCap:
    """An HTTP client's response hook capping the body at ``limit`` bytes: the hook runs
    once the headers are in and before the body is read, so the body is read through the
    cap (chunked or with a Content-Length, which is not trusted either). A gzip or deflate
    body is decoded through the cap here (its Content-Encoding then removed, so the client
    does not decode it again); any other coding is refused as malformed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._capped = _capped_stream_class()

    async def __call__(self, response: Any) -> None:
        coding = response.headers.get("content-encoding", "").strip().lower()
        if coding in ("", "identity"):
            response.stream = self._capped(response.stream, self.limit)
        elif coding in _INFLATE:
            del response.headers["content-encoding"]
            response.stream = self._capped(response.stream, self.limit, _INFLATE[coding])
        else:
            raise ProviderError(
                f"malformed response: Content-Encoding {coding[:40]!r}, not one of the "
                f"codings asked for ({ACCEPT_ENCODING})",
                error_class="transient",
            )


def _reply_refusal(error: BaseException) -> ProviderError | None:
    """What the reply cap refused behind an SDK's error (the SDK wraps what its transport
    raised in a connection error), as the provider error to record, if anything."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ReplyTooLarge):
            # the same request would stream as long again: not retried
            return ProviderError(str(current), error_class="permanent")
        if isinstance(current, ProviderError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _tls_context() -> Any:
    """The TLS context the SDKs' default HTTP client would build (certifi's CA bundle, or
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` from the environment), built once."""
    return importlib.import_module("httpx2").create_ssl_context()


@functools.cache
def _aiohttp_client_class(sdk: Any) -> Any:
    """``sdk.DefaultAioHttpClient`` (the SDK's own client over aiohttp, its ``aiohttp``
    extra) whose aiohttp sessions report when a request leaves. The client keeps the SDK's
    defaults (connection limits, keep-alive) and httpx's reading of the environment (proxies
    from ``HTTPS_PROXY`` / ``NO_PROXY``, each proxy a transport of its own); only the session
    each transport opens on its first request is ours, with the departure trace."""
    try:
        aiohttp = importlib.import_module("aiohttp")
    except ImportError:
        raise ConfigError(
            f"the {sdk.__name__} provider sends over aiohttp, which is not installed: "
            f"pip install '{sdk.__name__}[aiohttp]' (genir-eval's own install brings it)"
        ) from None
    trace = aiohttp.TraceConfig()
    trace.on_request_chunk_sent.append(_report_chunk_sent)

    def session(transport: Any) -> Any:
        limit = transport.limits.max_connections
        connector = aiohttp.TCPConnector(
            ssl=transport.ssl_context,
            limit=0 if limit is None else limit,
            keepalive_timeout=transport.limits.keepalive_expiry,
        )
        return aiohttp.ClientSession(connector=connector, trace_configs=[trace])

    def traced(transport: Any) -> Any:
        transport.client = functools.partial(session, transport)
        return transport

    class TracedAioHttpClient(sdk.DefaultAioHttpClient):  # type: ignore[misc, name-defined]
        def _init_transport(self, *args: Any, **kwargs: Any) -> Any:
            return traced(super()._init_transport(*args, **kwargs))

        def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> Any:
            return traced(super()._init_proxy_transport(*args, **kwargs))

    return TracedAioHttpClient


def _default_client(sdk: Any, tls: Any, max_reply_bytes: int) -> Any:
    """The SDK's own aiohttp client with ``tls``, told to report when a request leaves.

    aiohttp rather than the SDK's default httpx transport (httpcore, h11, anyio): against
    the fake server at 64 in flight (``bench/bench_engine.py --cases sporadic``) the client
    spent 2.3 ms of CPU a judgment over aiohttp where it spent 3.2 over httpx, three quarters
    of which were that transport's."""
    return _aiohttp_client_class(sdk)(
        verify=tls, event_hooks={"response": [_ReplyCap(max_reply_bytes)]}
    )


def _credentials_apart(base_url: str) -> tuple[str, dict[str, str] | None]:
    """``base_url`` without the user and password it may carry, and the ``Authorization:
    Basic`` header that sends them (``None`` without any). The header replaces the SDK's
    ``Bearer`` one: a server behind ``https://user:pass@host`` asks for Basic auth."""
    url = urlsplit(base_url)
    if url.username is None and url.password is None:
        return base_url, None
    host = url.netloc.rpartition("@")[2]
    pair = f"{unquote(url.username or '')}:{unquote(url.password or '')}"
    token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return urlunsplit((url.scheme, host, url.path, url.query, url.fragment)), {
        "Authorization": f"Basic {token}"
    }


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
        max_reply_bytes: int,
    ) -> None:
        """``pool_shards`` clients of ``client_class`` (one when ``http_client``, an httpx
        client, is injected; it is told to report when a request leaves and to cap replies
        too), with the SDK's own retries off: the engine retries, with its limits. A reply
        over ``max_reply_bytes`` is cut off as it streams."""
        # credentials inside the URL (https://user:key@host) are secrets like the API key;
        # they are sent as HTTP Basic auth, the URL kept without them (over aiohttp they were
        # dropped: the SDK's Authorization header and the URL's user could not both be sent)
        self._base_url, headers = _credentials_apart(base_url.rstrip("/"))
        url = urlsplit(base_url)
        self._set_secrets(
            unquote(url.password or ""),
            unquote(url.username or ""),
            (headers or {}).get("Authorization", "").removeprefix("Basic ") or None,
        )
        # A dead host that never completes the TCP handshake is known in seconds, not after
        # the whole attempt timeout (which a slow but healthy model may need).
        sdk = importlib.import_module(client_class.__module__.split(".")[0])
        limits = sdk.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT_S))
        shards = 1 if http_client is not None else max(1, pool_shards)
        if http_client is not None:
            hooks = http_client.event_hooks
            hooks["request"] = [*hooks.get("request", ()), _trace_departure]
            hooks["response"] = [*hooks.get("response", ()), _ReplyCap(max_reply_bytes)]
            http_client.event_hooks = hooks
            _preload_async_backend()
        # One TLS context for every shard: each builds its own otherwise, reading the CA
        # bundle again (~0.3 s of CPU each on a loaded machine).
        tls = None if http_client is not None else _tls_context()
        self._clients = [
            client_class(
                api_key=api_key,
                base_url=self._base_url,
                # the SDK's own aiohttp client, told to report when a request leaves
                http_client=http_client or _default_client(sdk, tls, max_reply_bytes),
                max_retries=0,
                timeout=limits,
                # only codings the reply cap decodes itself (_ReplyCap)
                default_headers={"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})},
            )
            for _ in range(shards)
        ]
        self._next = itertools.cycle(self._clients)

    @property
    def base_url(self) -> str | None:
        return self._base_url

    async def _send(self, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """``await call(client)`` on the next client of the pool; any exception it raises
        becomes a classified, redacted :class:`~genir_eval.llm.providers.base.ProviderError`."""
        try:
            return await call(next(self._next))
        except Exception as error:  # noqa: BLE001 - every SDK error is classified
            refused = _reply_refusal(error)
            if refused is not None:
                raise self.redact_error(refused) from None
            # The SDK's message may quote an error body that echoes the key: the chained
            # original is dropped (``from None``) so a traceback cannot print it either.
            raise self.redact_error(classify_exception(error)) from None

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()
