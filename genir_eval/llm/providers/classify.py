"""Sort any exception a provider call raises into the engine's error classes.

``rate_limit``: HTTP 429 (except an exhausted quota) -> retried after ``Retry-After``; the
limit its headers or body name, if any, goes with it (:func:`parse_limit_message`).
``transient``: 5xx (and Anthropic's 529), 408/409, timeouts, dropped connections and a
malformed 200 body (a proxy or a truncated response; the next attempt usually succeeds)
-> retried with backoff; timeouts, 503 and 529 are marked as overload.
``permanent``: exhausted quota (429 ``insufficient_quota``), 400 (bad request, context too
long), 401/403, 404, 422, and anything unexpected -> not retried.

It reads the SDK exceptions by their attributes (``status_code``, ``response.headers``,
``body``), so it needs neither SDK imported and serves both.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import socket
import ssl
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from genir_eval.llm.providers.base import ProviderError, RateLimitInfo

__all__ = [
    "classify_exception",
    "parse_limit_message",
    "parse_rate_limit",
    "parse_retry_after",
    "transport_cause",
]

# OpenAI writes durations as Go does: "12ms", "1.5s", "6m0s", "1h2m3s".
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

# The request rate a 429's message names, as OpenAI ("... on requests per min (RPM): Limit 500,
# Used 500, Requested 1.") and Anthropic ("... would exceed the rate limit for your
# organization (...) of 50 requests per minute.") write it; and any other limit it names
# (tokens per minute, requests per day; Azure's "exceeded token rate limit of your tier").
_REQUESTS_PER_MINUTE = (
    re.compile(r"requests per min(?:ute)? \(rpm\): limit ([\d,]+)"),
    re.compile(r"\bof ([\d,]+) requests per minute"),
)
_NAMED_LIMIT = re.compile(
    r"\((?:rpm|tpm|rpd|tpd|ipm)\)|\b(?:requests?|tokens?) per (?:min|minute|hour|day)\b"
    r"|\b(?:token|call|request) rate limit"
)
_STATUS_OVERLOADED = (503, 529)

_QUOTA_MARKERS = ("insufficient_quota", "billing_hard_limit", "quota")
_CONTEXT_MARKERS = ("context_length", "context length", "prompt is too long", "too many tokens")
_TRANSIENT_NAMES = (
    "APITimeoutError",
    "APIConnectionError",
    "APIResponseValidationError",
    "TimeoutException",
    "NetworkError",
    "RemoteProtocolError",
    "ProtocolError",
    "ReadError",
    "WriteError",
    "ConnectError",
    "JSONDecodeError",
    "ValidationError",
)


def parse_retry_after(headers: Mapping[str, str] | Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        value_ms = headers.get("retry-after-ms")
        if value_ms is not None:
            return max(0.0, float(value_ms) / 1000.0)
        value = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 and number == number and number != float("inf") else None


def _duration_s(value: str) -> float | None:
    """Seconds in an OpenAI reset duration (``6m0s``) or a bare number of seconds."""
    text = value.strip()
    plain = _number(text)
    if plain is not None:
        return plain
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def _until_s(value: str) -> float | None:
    """Seconds from now until an RFC 3339 time (Anthropic's reset headers)."""
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_rate_limit(headers: Mapping[str, str] | Any) -> RateLimitInfo | None:
    """The request-rate limit a reply's headers state: OpenAI's
    ``x-ratelimit-{limit,remaining,reset}-requests`` or Anthropic's
    ``anthropic-ratelimit-requests-{limit,remaining,reset}``; ``None`` when neither is there."""
    if headers is None:
        return None
    try:
        limit = headers.get("x-ratelimit-limit-requests")
        if limit is not None:
            remaining = headers.get("x-ratelimit-remaining-requests")
            reset = headers.get("x-ratelimit-reset-requests")
            return RateLimitInfo(
                limit=_number(limit),
                remaining=_number(remaining),
                reset_s=_duration_s(reset) if reset is not None else None,
            )
        limit = headers.get("anthropic-ratelimit-requests-limit")
        if limit is not None:
            remaining = headers.get("anthropic-ratelimit-requests-remaining")
            reset = headers.get("anthropic-ratelimit-requests-reset")
            return RateLimitInfo(
                limit=_number(limit),
                remaining=_number(remaining),
                reset_s=_until_s(reset) if reset is not None else None,
            )
    except (AttributeError, TypeError):
        return None
    return None


def parse_limit_message(text: str) -> RateLimitInfo | None:
    """The limit a 429's message names: its requests per minute when it gives them
    (``RateLimitInfo(limit=...)``), ``names_limit`` when it names another limit, else
    ``None`` (a 429 that says nothing of a limit)."""
    lowered = text.lower()
    for pattern in _REQUESTS_PER_MINUTE:
        found = pattern.search(lowered)
        if found is not None:
            limit = _number(found.group(1).replace(",", ""))
            if limit:
                return RateLimitInfo(limit=limit)
    if _NAMED_LIMIT.search(lowered):
        return RateLimitInfo(names_limit=True)
    return None


def _body_text(body: Any) -> str:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            parts = [str(inner.get(k, "")) for k in ("type", "code", "message")]
            return " ".join(parts).lower()
    return str(body or "").lower()


# What the aiohttp errors at the root of an SDK error mean, by the names of their classes
# (aiohttp is not imported here), most specific first: the SDKs' aiohttp transport renames
# them to httpx errors, and OpenAI's calls a dropped connection a connect timeout.
_AIOHTTP_CAUSES = (
    ("ConnectionTimeoutError", "ConnectTimeout"),
    ("ServerTimeoutError", "ReadTimeout"),
    ("ClientConnectorError", "ConnectError"),
    ("ClientPayloadError", "ReadError"),
    ("ClientConnectionError", "RemoteProtocolError"),
)
# the causes of a connection dropped before the reply was complete
_DROPPED = ("RemoteProtocolError", "ReadError", "WriteError")


def _cause_name(error: BaseException) -> str:
    """The name of the httpx error behind ``error``: its direct cause's, or, when an aiohttp
    error is in the chain, the name of what the innermost one means (:data:`_AIOHTTP_CAUSES`;
    what caused that one in turn is the operating system's)."""
    direct = error.__cause__ or error.__context__
    origin, link, seen = None, direct, set()
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if type(link).__module__.startswith("aiohttp"):
            origin = link
        link = link.__cause__ or link.__context__
    if origin is not None:
        bases = {cls.__name__ for cls in type(origin).__mro__}
        for aiohttp_name, httpx_name in _AIOHTTP_CAUSES:
            if aiohttp_name in bases:
                return httpx_name
    return type(direct).__name__


_SDK_STATUS_PREFIX = re.compile(r"^Error code: \d+ - ")
#: How much of an HTTP error's body a failure reason quotes.
BODY_EXCERPT_CHARS = 200
# the OS error numbers of a refused connection (Linux, macOS, Windows)
_REFUSED_ERRNOS = (111, 61, 10061)
_TLS_NAMES = ("SSLError", "ClientSSLError", "ClientConnectorCertificateError", "CertificateError")


def _chain(error: BaseException) -> list[BaseException]:
    links, link, seen = [], error.__cause__ or error.__context__, set()
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        links.append(link)
        link = link.__cause__ or link.__context__
    return links


def transport_cause(error: BaseException) -> tuple[str, str] | None:
    """What went wrong on the way to the server, as the operating system or the HTTP library
    reported it under the SDK's generic error (OpenAI's SDK calls a refused connection
    ``APITimeoutError: Request timed out.``): ``("connection refused" | "DNS failure" |
    "TLS error", detail)``, or ``None`` when the chain names none of them."""
    links = _chain(error)
    detail = next((str(link) for link in links if str(link)), str(error))
    for link in [error, *links]:
        names = {cls.__name__ for cls in type(link).__mro__}
        if isinstance(link, ConnectionRefusedError) or (
            isinstance(link, OSError) and link.errno in _REFUSED_ERRNOS
        ):
            return "connection refused", detail
        if isinstance(link, socket.gaierror) or "ClientConnectorDNSError" in names:
            return "DNS failure", detail
        if isinstance(link, ssl.SSLError) or names & set(_TLS_NAMES):
            return "TLS error", detail
    return None


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= BODY_EXCERPT_CHARS else text[: BODY_EXCERPT_CHARS - 1] + "…"


def classify_exception(error: BaseException) -> ProviderError:
    """Turn ``error`` into a classified :class:`ProviderError` (returned, not raised)."""
    if isinstance(error, ProviderError):
        return error
    name = type(error).__name__
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return ProviderError(f"timeout ({name})", error_class="transient", overload=True)
    status = getattr(error, "status_code", None)
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    retry_after = parse_retry_after(headers)
    message = str(error) or name
    if isinstance(status, int) and name != "APIResponseValidationError":
        # the status first, then what the provider said (its body, cut short)
        # (OpenAI's SDK starts its message with "Error code: 401 - ": said once is enough)
        message = f"HTTP {status}: {_excerpt(_SDK_STATUS_PREFIX.sub('', message))}"
        detail = " ".join(
            [_body_text(getattr(error, "body", None)), str(getattr(error, "code", "") or "")]
        ).lower()
        if status == 429:
            if any(marker in detail for marker in _QUOTA_MARKERS):
                return ProviderError(
                    f"quota exhausted: {message}", error_class="permanent", status=status
                )
            return ProviderError(
                message,
                error_class="rate_limit",
                retry_after=retry_after,
                status=status,
                rate_limit=parse_rate_limit(headers) or parse_limit_message(f"{detail} {message}"),
            )
        if status >= 500 or status in (408, 409):
            return ProviderError(
                message,
                error_class="transient",
                retry_after=retry_after,
                status=status,
                overload=status in _STATUS_OVERLOADED,
            )
        if any(marker in detail or marker in message.lower() for marker in _CONTEXT_MARKERS):
            return ProviderError(
                f"context too long: {message}", error_class="permanent", status=status
            )
        return ProviderError(message, error_class="permanent", status=status)
    if name in _TRANSIENT_NAMES or isinstance(error, ConnectionError):
        # The SDKs wrap a connect timeout (an endpoint that never answers the handshake) in
        # their generic timeout error: name the cause, so it counts as unreachable.
        cause = _cause_name(error)
        found = transport_cause(error)
        if found is not None:
            # the class the operating system reported first; the SDK's names stay in the
            # text, since they say which layer failed (and endpoint health reads them)
            what, detail = found
            return ProviderError(
                f"{what}: {_excerpt(detail)} ({name}, {cause})", error_class="transient"
            )
        if cause in ("ConnectTimeout", "ConnectError") and cause != name:
            return ProviderError(
                f"connect timeout: {message} ({name}, {cause})", error_class="transient"
            )
        if cause in _DROPPED:
            # a reply cut short is no sign of overload, even where the SDK calls it a timeout
            return ProviderError(
                f"{name} ({cause}): the connection was dropped: {message}",
                error_class="transient",
            )
        timed_out = "Timeout" in name
        prefix = "timeout: " if timed_out else ""
        return ProviderError(
            f"{prefix}{name}: {message}", error_class="transient", overload=timed_out
        )
    return ProviderError(f"{name}: {message}", error_class="permanent")
