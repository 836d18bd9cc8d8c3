"""The guard of a local web server that may be opened to a team: each check a function of
its own, so any page genir-eval serves can put the same ones in front of its app.

- The Host header must name this machine (:func:`host_allowed`): the loopback names, the
  address the server is bound to, the machine's host names and addresses, or the literal
  address the connection arrived on. A name that only resolves here (DNS rebinding) is not
  one of them.
- A request that changes state must come from the server's own origin and be JSON
  (:func:`cross_site_refusal`): a foreign ``Origin``, a cross-site fetch and a plain HTML
  form from another site are refused.
- Every request carries the token when there is one (:func:`has_token`), compared as the
  bytes of its UTF-8 (a header's raw bytes, the query's percent-decoded UTF-8, or the
  cookie ``/?token=`` sets, which holds the token's SHA-256 rather than the token).
- A request body is read as it streams and refused with 413 past ``max_body`` bytes
  (:func:`read_capped_body`), chunked bodies included: Content-Length is not trusted.
- Every response carries a strict Content-Security-Policy and its companions
  (:data:`SECURITY_HEADERS`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "CSP",
    "SECURITY_HEADERS",
    "TOKEN_COOKIE",
    "MAX_BODY",
    "LOOPBACK_NAMES",
    "Guard",
    "machine_names",
    "host_allowed",
    "has_token",
    "token_cookie_value",
    "cross_site_refusal",
    "read_capped_body",
]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
TOKEN_COOKIE = "genir_label_token"
MAX_BODY = 8 * 1024 * 1024
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
_SAFE = {"GET", "HEAD", "OPTIONS"}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _canonical(name: str) -> str:
    """A host name lower-cased without its trailing dot, an address in its one spelling."""
    name = name.strip().strip("[]").rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def machine_names(bound: str | None = None) -> frozenset[str]:
    """The names a request to this machine may give as its Host: the loopback names,
    ``bound`` (the address given to ``--host``), the machine's host name and fully
    qualified name, every address they resolve to here (the local resolver's answer, not a
    remote DNS name's) and the addresses it sends from on its default routes."""
    names = {*LOOPBACK_NAMES}
    if bound:
        names.add(bound)
    hostname = socket.gethostname()
    for name in {hostname, socket.getfqdn(hostname)}:
        if not name:
            continue
        names.add(name)
        try:
            for info in socket.getaddrinfo(name, None):
                names.add(str(info[4][0]).split("%")[0])
        except (OSError, UnicodeError):
            pass
    names.update(_routed_addresses())
    return frozenset(_canonical(n) for n in names if n)


def _routed_addresses() -> set[str]:
    """The addresses this machine sends from on its default routes, IPv4 and IPv6 (a UDP
    socket connected to a documentation address: the kernel picks the source address and
    no packet is sent)."""
    found = set()
    for family, target in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                found.add(str(probe.getsockname()[0]).split("%")[0])
        except OSError:
            pass
    return found


def _split_host(host: str) -> str:
    """The name of a Host header (``name:port``, ``[v6]:port``, ``name``)."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _wildcard(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_unspecified
    except ValueError:
        return False


def host_allowed(host: str, allowed: Iterable[str], scope: Mapping[str, Any]) -> bool:
    """Whether the Host header ``host`` names this server: one of ``allowed`` (see
    :func:`machine_names`), or the address the connection arrived on (``scope['server']``,
    the connection's local address under uvicorn). An address can be given literally: a
    browser's origin is then that address, which no rebinding of a name can produce."""
    name = _canonical(_split_host(host))
    if not name:
        return False
    if name in {_canonical(a) for a in allowed}:
        return True
    server = scope.get("server")
    if server and server[0] and not _wildcard(str(server[0])):
        return name == _canonical(str(server[0]))
    return False


def token_cookie_value(token: str) -> str:
    """What the token cookie holds: the token's SHA-256, not the token (ASCII whatever the
    token's characters, and the token itself never sits in a browser's cookie store)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def has_token(token: str, scope: Mapping[str, Any]) -> bool:
    """Whether the request carries ``token``: ``Authorization: Bearer TOKEN`` (the header's
    bytes as sent, read as UTF-8), the cookie, or ``?token=`` on ``/`` (percent-encoded
    UTF-8). Each is compared in constant time as bytes."""
    secret = token.encode("utf-8")
    raw = {k.lower(): v for k, v in scope.get("headers", [])}
    given: list[bytes] = []
    bearer = raw.get(b"authorization", b"")
    if bearer.startswith(b"Bearer "):
        given.append(bearer[len(b"Bearer ") :].strip())
    cookie_secret = token_cookie_value(token).encode("ascii")
    for part in raw.get(b"cookie", b"").split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key == TOKEN_COOKIE.encode() and hmac.compare_digest(value.strip(b'"'), cookie_secret):
            return True
    if scope.get("path") == "/":
        query = scope.get("query_string", b"").decode("latin-1")
        for value in parse_qs(query, encoding="utf-8", errors="surrogateescape").get("token", []):
            given.append(value.encode("utf-8", errors="surrogateescape"))
    return any(hmac.compare_digest(t, secret) for t in given if t)


def cross_site_refusal(scope: Mapping[str, Any], headers: Mapping[str, str]) -> Response | None:
    """The refusal of a state-changing request that is not JSON from the server's own
    origin (``None`` for a safe method or a request that is)."""
    if scope["method"] in _SAFE:
        return None
    origin = headers.get("origin")
    scheme = scope.get("scheme", "http")
    if origin is not None and origin != f"{scheme}://{headers.get('host', '')}":
        return _error(403, f"cross-site request refused (Origin {origin!r})")
    if headers.get("sec-fetch-site") in {"cross-site", "same-site"}:
        return _error(403, "cross-site request refused (Sec-Fetch-Site)")
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        return _error(415, "send JSON (Content-Type: application/json)")
    length = headers.get("content-length")
    if length is not None and length.strip().isdigit() and int(length) > MAX_BODY:
        return _error(413, f"request body over {MAX_BODY} bytes")
    return None


class BodyTooLarge(Exception):
    """A request body past the cap, found while it streamed."""


async def read_capped_body(receive: Receive, limit: int) -> tuple[bytes, list[Message]]:
    """The request's body read as it streams, and the messages that carried it; raises
    :class:`BodyTooLarge` as soon as more than ``limit`` bytes have come (whatever the
    Content-Length said, chunked or not), having kept at most ``limit`` of them."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts), [message]
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body over {limit} bytes")
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts), []


def _replay(body: bytes, rest: list[Message], receive: Receive) -> Receive:
    """A ``receive`` giving ``body`` in one message, then whatever the real one gives."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *rest]

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


class Guard:
    """Host check, token, cross-site refusal, the body cap and the security headers,
    around ``app``. ``hosts`` the names the Host header may give besides the connection's
    own address (:func:`machine_names`), ``token`` required on every request when set."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: Iterable[str],
        token: str | None,
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = app
        self.hosts = frozenset(_canonical(h) for h in hosts)
        self.token = token
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *SECURITY_HEADERS]
                message = {**message, "headers": headers}
            await send(message)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refusal(scope, headers)
        if refusal is None and scope["method"] not in _SAFE:
            try:
                body, rest = await read_capped_body(receive, self.max_body)
            except BodyTooLarge as error:
                refusal = _error(413, str(error))
            else:
                receive = _replay(body, rest, receive)
        if refusal is not None:
            await refusal(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def refusal(self, scope: Scope, headers: Mapping[str, str]) -> Response | None:
        """The response refusing the request before it reaches the app, or ``None``."""
        host = headers.get("host", "")
        if not host_allowed(host, self.hosts, scope):
            return _error(400, f"Host {host!r} is not this server's name")
        if self.token is not None and not has_token(self.token, scope):
            return _error(401, "this server needs its token: open /?token=TOKEN once")
        return cross_site_refusal(scope, headers)
