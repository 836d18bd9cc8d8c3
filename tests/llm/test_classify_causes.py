"""A failure reason names the error class as the provider's side reported it (connection
refused, DNS failure, TLS error, timeout, HTTP status with a body excerpt), read from real
sockets where one can be provoked, and :func:`cause_of` reads it back with a hint."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from genir_eval.llm.health import is_connection_error
from genir_eval.llm.providers.base import GenerateConfig, Message, ProviderError
from genir_eval.llm.providers.classify import BODY_EXCERPT_CHARS, classify_exception
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.rundir.causes import cause_of
from genir_eval.testing.fake_llm_server import FakeLLMServer, Fault


def _closed_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _error_from(base_url: str, api_key: str = "sk-test-0123456789abcdef") -> ProviderError:
    async def call() -> ProviderError:
        provider = OpenAIProvider(model="m", base_url=base_url, api_key=api_key, timeout=10)
        try:
            await provider.generate([Message("user", "hi")], GenerateConfig(model="m"))
        except ProviderError as error:
            return error
        finally:
            await provider.aclose()
        raise AssertionError("the call succeeded")

    return asyncio.run(call())


def test_a_refused_connection_says_so_not_request_timed_out() -> None:
    port = _closed_port()
    error = _error_from(f"http://127.0.0.1:{port}/v1")
    text = str(error)
    assert text.startswith("connection refused: "), text
    assert f"127.0.0.1:{port}" in text and "Request timed out" not in text
    assert error.error_class == "transient" and is_connection_error(error)
    cause = cause_of(f"stopped: not sent: gave up: ...; last: {text}")
    assert cause.label == "connection refused"
    assert cause.hint_for(f"openai/m at http://127.0.0.1:{port}/v1") == (
        f"is the server running at http://127.0.0.1:{port}/v1? Nothing accepted the connection"
    )


def test_https_to_a_plain_http_server_is_a_tls_error() -> None:
    # a server that answers the TLS handshake in plain HTTP, as http-only servers do
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def answer() -> None:
            connection, _ = listener.accept()
            with connection:
                connection.recv(1024)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

        server = threading.Thread(target=answer, daemon=True)
        server.start()
        error = _error_from(f"https://127.0.0.1:{port}/v1")
        server.join()
    assert str(error).startswith("TLS error: "), str(error)
    assert cause_of(str(error)).label == "TLS error"


def test_a_name_that_does_not_resolve_is_a_dns_failure() -> None:
    # the SDK's chain for an unresolvable host, as openai 1.x over aiohttp raises it
    class ConnectTimeout(Exception):
        pass

    class APITimeoutError(Exception):
        pass

    try:
        try:
            try:
                raise socket.gaierror(-2, "Name or service not known")
            except socket.gaierror as root:
                raise ConnectTimeout("Cannot connect to host nowhere.invalid:443") from root
        except ConnectTimeout as cause:
            raise APITimeoutError("Request timed out.") from cause
    except APITimeoutError as raised:
        error = classify_exception(raised)
    assert str(error) == (
        "DNS failure: Cannot connect to host nowhere.invalid:443 (APITimeoutError, ConnectTimeout)"
    )
    assert is_connection_error(error)
    assert "host name" in cause_of(str(error)).hint_for("openai/m at https://nowhere.invalid/v1")


def test_a_wrong_key_is_http_401_with_the_body_and_a_hint_to_check_the_key() -> None:
    with FakeLLMServer() as server:
        error = _error_from(server.openai_base_url, "sk-wrong-0123456789abcdef")
    text = str(error)
    assert text.startswith("HTTP 401: ") and error.error_class == "permanent", text
    # the fake server's body, said once after the status
    assert text == "HTTP 401: missing or wrong Authorization bearer"
    cause = cause_of(text)
    assert cause.label == "HTTP 401/403" and "check the key" in cause.hint


def test_a_long_error_body_is_cut_to_an_excerpt() -> None:
    with FakeLLMServer(script=[Fault("bad_request", message="x" * 5000)]) as server:
        error = _error_from(server.openai_base_url, server.api_key)
    text = str(error)
    assert text.startswith("HTTP 400: ") and text.endswith("…")
    assert len(text) == len("HTTP 400: ") + BODY_EXCERPT_CHARS


@pytest.mark.parametrize(
    ("reason", "label"),
    [
        # written by earlier versions: still read as a failure to connect
        ("transient: APITimeoutError (ConnectError): Request timed out.", "could not connect"),
        ("transient: attempt timed out after 60s", "timeout"),
        ("permanent: HTTP 404: model not found", "HTTP 404"),
        ("transient: HTTP 503: overloaded", "HTTP 5xx"),
        ("permanent: quota exhausted: HTTP 429: insufficient_quota", "quota exhausted"),
        ("rate_limit: HTTP 429: slow down", "HTTP 429 rate limit"),
        ("unparseable reply: no JSON object", "other"),
    ],
)
def test_cause_of_reads_each_class_back(reason: str, label: str) -> None:
    assert cause_of(reason).label == label
