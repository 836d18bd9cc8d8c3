"""Providers over real sockets, the offline registry, the factory and run_sync."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.errors import ConfigError
from genir_eval.llm import (
    Completion,
    Engine,
    Failure,
    GenerateConfig,
    JudgmentKey,
    Message,
    OfflineProvider,
    Request,
    Usage,
    make_provider,
    register_offline,
    resolve_provider,
    run_sync,
)
from genir_eval.llm.prices import load_prices
from genir_eval.llm.providers.anthropic_provider import AnthropicProvider
from genir_eval.testing import FakeLLMServer, FakeRequest


def test_anthropic_protocol() -> None:
    seen: list[FakeRequest] = []

    def reply(request: FakeRequest) -> str:
        seen.append(request)
        return '{"label": 1}'

    with FakeLLMServer(reply=reply) as server:

        async def go() -> Completion | Failure:
            provider = AnthropicProvider(
                model="claude-test", base_url=server.anthropic_base_url, api_key=server.api_key
            )
            async with Engine(provider) as engine:
                return await engine.complete(make_request(3))

        result = asyncio.run(go())
    assert isinstance(result, Completion)
    assert result.text == '{"label": 1}'
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert server.stats.shape_errors == []
    (request,) = seen
    assert request.protocol == "anthropic"
    assert request.system == "You judge."
    assert request.messages == ({"role": "user", "content": "judge item 3"},)
    assert request.body["temperature"] == 0.0 and "top_p" not in request.body
    assert request.headers["anthropic-version"]


def test_openai_request_shape_and_logprobs(tmp_path: Path) -> None:
    seen: list[FakeRequest] = []

    def reply(request: FakeRequest) -> str:
        seen.append(request)
        return "yes, relevant"

    with FakeLLMServer(reply=reply) as server:

        async def go() -> tuple[Completion | Failure, Completion | Failure]:
            db = tmp_path / "c.sqlite"
            req = make_request(
                0, logprobs=True, top_logprobs=3, response_format="json", extra={"seed": 7}
            )
            async with openai_engine(server, cache_path=db) as engine:
                first = await engine.complete(req)
            async with openai_engine(server, cache_path=db) as engine:
                second = await engine.complete(req)
            return first, second

        first, second = asyncio.run(go())
    (request,) = seen
    assert request.body["response_format"] == {"type": "json_object"}
    assert (request.body["temperature"], request.body["top_p"]) == (0.0, 1.0)
    assert request.body["logprobs"] is True and request.body["top_logprobs"] == 3
    # GenerateConfig.extra goes into the body as is, next to the standard fields
    assert request.body["seed"] == 7 and request.body["max_tokens"] == 1024
    assert request.messages == (
        {"role": "system", "content": "You judge."},
        {"role": "user", "content": "judge item 0"},
    )
    for result in (first, second):
        assert isinstance(result, Completion) and result.logprobs is not None
        # The fake server's logprobs: 4-character tokens, token i at -0.1 * i (fake_llm_server).
        assert [t.token for t in result.logprobs] == ["yes,", " rel", "evan", "t"]
        assert result.logprobs[1].logprob == pytest.approx(-0.1, abs=1e-9)
        assert len(result.logprobs[1].top) == 3
    assert isinstance(second, Completion) and second.cached


def test_wrong_key_is_a_permanent_failure() -> None:
    with FakeLLMServer(api_key="right") as server:

        async def go() -> Completion | Failure:
            provider = make_provider(
                "openai", model="m", base_url=server.openai_base_url, api_key="wrong"
            )
            async with Engine(provider) as engine:
                return await engine.complete(make_request(0))

        result = asyncio.run(go())
    assert isinstance(result, Failure) and result.error_class == "permanent"
    assert server.stats.total == 1


def _offline_request(task: str) -> Request:
    return Request(
        key=JudgmentKey("s", 0, "i", "j", "v1"),
        messages=(Message("user", "x" * 40),),
        config=GenerateConfig(model="offline"),
        task=task,
    )


def test_offline_dispatch_exact_then_prefix_then_permanent_failure() -> None:
    register_offline("offline_test", lambda request: "prefix")
    register_offline("offline_test.exact", lambda request: "exact")

    async def go() -> list[Completion | Failure]:
        async with Engine(OfflineProvider()) as engine:
            return [
                await engine.complete(_offline_request(task))
                for task in ("offline_test.exact", "offline_test.other", "nobody.here")
            ]

    exact, prefix, unknown = asyncio.run(go())
    assert isinstance(exact, Completion) and exact.text == "exact"
    assert isinstance(prefix, Completion) and prefix.text == "prefix"
    # 40 characters at ~4 per token (offline.approx_tokens); "prefix" is 6 characters -> 2.
    assert (prefix.usage.input_tokens, prefix.usage.output_tokens) == (10, 2)
    assert isinstance(unknown, Failure) and unknown.error_class == "permanent"
    assert "nobody.here" in unknown.message and unknown.attempts == 1


def test_offline_cost_is_zero_and_unknown_prices_are_unknown() -> None:
    register_offline("offline_cost", lambda request: "ok")

    async def go() -> dict[str, object]:
        async with Engine(OfflineProvider()) as engine:
            await engine.complete(_offline_request("offline_cost"))
            return engine.stats()

    assert asyncio.run(go())["cost_usd"] == 0.0
    prices = load_prices()
    assert prices.cost("openai", "no-such-model", Usage(1000, 1000)) is None
    price = prices.price("openai", "gpt-4o-mini")
    assert price is not None and price.source and price.as_of


def test_unknown_model_reports_cost_unknown(server: FakeLLMServer) -> None:
    async def go() -> dict[str, object]:
        async with openai_engine(server) as engine:
            await engine.complete(make_request(0))
            return engine.stats()

    stats = asyncio.run(go())
    assert stats["cost_usd"] is None
    assert stats["calls"] == 1 and stats["input_tokens"] > 0


def test_price_override(tmp_path: Path) -> None:
    table = tmp_path / "prices.json"
    table.write_text(
        json.dumps(
            {
                "prices": [
                    {
                        "provider": "openai",
                        "models": ["m"],
                        "input": 1.0,
                        "output": 2.0,
                        "as_of": "2026-01-01",
                        "source": "test",
                    }
                ]
            }
        )
    )
    # 1e6 input tokens at $1 + 5e5 output tokens at $2 per million = $2 (by hand).
    assert load_prices(table).cost("openai", "m", Usage(1_000_000, 500_000)) == pytest.approx(2.0)


def test_auto_resolution() -> None:
    assert resolve_provider("auto", env={})[0] == "offline"
    notice = resolve_provider("auto", env={})[1]
    assert notice is not None and "offline" in notice
    assert resolve_provider("auto", env={"OPENAI_API_KEY": "k"})[0] == "openai"
    assert resolve_provider("auto", env={"ANTHROPIC_API_KEY": "k"})[0] == "anthropic"
    assert resolve_provider("auto", base_url="http://localhost:8000/v1", env={})[0] == "openai"
    assert resolve_provider("openai", env={}) == ("openai", None)
    with pytest.raises(ConfigError):
        resolve_provider("nope")


def test_openai_without_key_or_base_url_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError):
        make_provider("openai")


def test_run_sync_with_and_without_a_running_loop() -> None:
    register_offline("offline_sync", lambda request: "sync ok")

    async def judge() -> str:
        async with Engine(OfflineProvider()) as engine:
            result = await engine.complete(_offline_request("offline_sync"))
        assert isinstance(result, Completion)
        return result.text

    assert run_sync(judge()) == "sync ok"

    async def inside_a_loop() -> str:
        return run_sync(judge())

    assert asyncio.run(inside_a_loop()) == "sync ok"


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    import email.utils
    import time

    from genir_eval.llm.providers.classify import parse_retry_after

    assert parse_retry_after({"retry-after": "120"}) == 120.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "-3"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None
    # an HTTP date an hour ahead is about 3600 s away (whole seconds; a slow machine only
    # makes it less); one an hour ago is no wait
    ahead = email.utils.formatdate(time.time() + 3600, usegmt=True)
    waited = parse_retry_after({"retry-after": ahead})
    assert waited is not None and 3000 < waited <= 3601
    past = email.utils.formatdate(time.time() - 3600, usegmt=True)
    assert parse_retry_after({"retry-after": past}) == 0.0
