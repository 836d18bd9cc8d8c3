"""A reply's size is capped in bytes as it streams (issue 46, class 4): a provider's 200
reply streamed without end stops at the cap with a recorded failure saying so, and the
client never holds more of it than the cap; a reply within the cap is read whole."""

from __future__ import annotations

import asyncio
import json

import pytest
from llm_helpers import make_request

from genir_eval.errors import ConfigError
from genir_eval.llm import Completion, EngineConfig, Failure
from genir_eval.llm.build import open_engine, open_provider
from genir_eval.llm.config import DEFAULT_MAX_REPLY_BYTES
from genir_eval.llm.providers.anthropic_provider import AnthropicProvider
from genir_eval.llm.providers.base import GenerateConfig, Message, ProviderError
from genir_eval.llm.providers.factory import make_provider
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.testing import FakeLLMServer

CAP = 1 << 20  # 1 MiB


def _openai(server: FakeLLMServer, cap: int = CAP) -> OpenAIProvider:
    return OpenAIProvider(
        model="fake-model",
        base_url=server.openai_base_url,
        api_key=server.api_key,
        max_reply_bytes=cap,
    )


async def _generate(provider: OpenAIProvider | AnthropicProvider) -> object:
    try:
        return await provider.generate(
            [Message("user", "judge item 1")], GenerateConfig(model="fake-model")
        )
    finally:
        await provider.aclose()


def test_an_endless_openai_reply_stops_at_the_cap(server: FakeLLMServer) -> None:
    server.push_script(["endless"])
    with pytest.raises(ProviderError) as caught:
        asyncio.run(_generate(_openai(server)))
    error = caught.value
    assert error.error_class == "permanent"
    assert "reply too large" in str(error) and str(CAP) in str(error)
    # what the server got out before the client hung up: the cap, plus what the sockets'
    # buffers held (a few MB on Linux), never the endless rest
    assert CAP <= server.stats.endless_bytes < CAP + 64 * 2**20


def test_an_endless_anthropic_reply_stops_at_the_cap(server: FakeLLMServer) -> None:
    server.push_script(["endless"])
    provider = AnthropicProvider(
        model="fake-model",
        base_url=server.anthropic_base_url,
        api_key=server.api_key,
        max_reply_bytes=CAP,
    )
    with pytest.raises(ProviderError, match="reply too large"):
        asyncio.run(_generate(provider))


def test_a_reply_within_the_cap_is_read_whole() -> None:
    text = "x" * 200_000  # a reply of about 200 kB under a 1 MiB cap
    with FakeLLMServer(reply=lambda request: text) as server:
        completion = asyncio.run(_generate(_openai(server)))
    assert isinstance(completion, Completion) and completion.text == text


def test_a_reply_over_the_cap_with_its_length_given_is_cut_off_too() -> None:
    text = "y" * (2 * CAP)
    with FakeLLMServer(reply=lambda request: text) as server:
        with pytest.raises(ProviderError, match="reply too large"):
            asyncio.run(_generate(_openai(server)))


def test_the_engine_records_an_endless_reply_as_failed_with_its_reason(
    server: FakeLLMServer,
) -> None:
    server.push_script(["endless"])
    config = EngineConfig(max_reply_bytes=CAP, cache=None, journal=False, max_attempts=3)

    async def one() -> Completion | Failure:
        provider = _openai(server, config.max_reply_bytes)
        async with open_engine(config, provider, cache=None, journal=None) as engine:
            return await engine.complete(make_request(1))

    result = asyncio.run(one())
    assert isinstance(result, Failure)
    assert result.error_class == "permanent" and result.attempts == 1
    assert "reply too large" in result.message and "max_reply_bytes" in result.message
    assert server.stats.total == 1, "the same endless reply is not asked for again"


def test_the_setting_is_declared_once_with_its_bound() -> None:
    assert EngineConfig().max_reply_bytes == DEFAULT_MAX_REPLY_BYTES == 16 * 2**20
    for bad in (0, 1000, 2**31):
        with pytest.raises(ConfigError, match="max_reply_bytes"):
            EngineConfig(max_reply_bytes=bad)
    assert json.dumps(EngineConfig(max_reply_bytes=65_536).max_reply_bytes) == "65536"


def test_every_builder_passes_the_cap_to_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = open_provider(EngineConfig(max_reply_bytes=70_000), "openai", model="m")
    hooks = [h for c in provider._clients for h in c._client.event_hooks["response"]]
    assert [h.limit for h in hooks] == [70_000] * len(provider._clients)
    asyncio.run(provider.aclose())
    made = make_provider("openai", model="m")
    hooks = [h for c in made._clients for h in c._client.event_hooks["response"]]
    assert {h.limit for h in hooks} == {DEFAULT_MAX_REPLY_BYTES}
    asyncio.run(made.aclose())


def _compressed_reply(body: bytes, coding: str) -> bytes:
    import gzip
    import zlib

    data = gzip.compress(body) if coding == "gzip" else zlib.compress(body)
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: {coding}\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + data


def _serve_once(reply: bytes) -> tuple[str, object]:
    """A server answering one request with ``reply`` (raw bytes), in a thread."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
            )
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(reply)
        listener.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", thread


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compression_bomb_is_cut_off_as_it_is_decoded(coding: str) -> None:
    """64 MiB of one byte compresses to about 64 kB: under the cap on the wire, 64 times
    over it decoded; the decoding stops at the cap."""
    bomb = b'{"choices": [{"message": {"content": "' + b"a" * (64 << 20)
    base_url, thread = _serve_once(_compressed_reply(bomb, coding))
    provider = OpenAIProvider(model="m", base_url=base_url, api_key="k", max_reply_bytes=CAP)
    with pytest.raises(ProviderError, match="reply too large"):
        asyncio.run(_generate(provider))


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compressed_reply_within_the_cap_is_read(coding: str) -> None:
    body = json.dumps(
        {"choices": [{"message": {"content": "compressed reply"}}], "model": "m"}
    ).encode()
    base_url, thread = _serve_once(_compressed_reply(body, coding))
    provider = OpenAIProvider(model="m", base_url=base_url, api_key="k", max_reply_bytes=CAP)
    completion = asyncio.run(_generate(provider))
    assert isinstance(completion, Completion) and completion.text == "compressed reply"


def test_a_coding_not_asked_for_is_malformed() -> None:
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: br\r\n"
        "Content-Length: 4\r\nConnection: close\r\n\r\nxxxx"
    )
    base_url, thread = _serve_once(head.encode())
    provider = OpenAIProvider(model="m", base_url=base_url, api_key="k", max_reply_bytes=CAP)
    with pytest.raises(ProviderError, match="Content-Encoding 'br'") as caught:
        asyncio.run(_generate(provider))
    assert caught.value.error_class == "transient"
