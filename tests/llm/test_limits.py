"""Concurrency, request-rate and token limits, checked by the server's own counters."""

from __future__ import annotations

import asyncio

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Completion
from genir_eval.llm.limits import AdaptiveLimit, TokenBudget
from genir_eval.testing import FakeLLMServer, Fault


def test_concurrency_is_never_exceeded() -> None:
    with FakeLLMServer(latency=0.05) as server:

        async def run() -> None:
            async with openai_engine(server, concurrency=8) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(80))
                )
            assert all(isinstance(r, Completion) for r in results)

        asyncio.run(run())
    assert server.stats.max_in_flight == 8


def test_server_sustains_256_in_flight() -> None:
    with FakeLLMServer(latency=0.5) as server:

        async def run() -> None:
            async with openai_engine(server, concurrency=300) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(300))
                )
            assert all(isinstance(r, Completion) for r in results)

        asyncio.run(run())
    assert server.stats.max_in_flight >= 256


def test_request_rate_is_never_exceeded() -> None:
    # 1200 rpm = 20 per one-second window; 70 requests need at least 3 s.
    with FakeLLMServer() as server:

        async def run() -> float:
            loop = asyncio.get_running_loop()
            start = loop.time()
            async with openai_engine(server, concurrency=64, rpm=1200) as engine:
                await asyncio.gather(*(engine.complete(make_request(i)) for i in range(70)))
            return loop.time() - start

        elapsed = asyncio.run(run())
    assert server.stats.total == 70
    assert server.stats.max_in_window(0.98) <= 20
    assert elapsed >= 3.0


def test_aimd_halves_on_rate_limits_and_climbs_back() -> None:
    limit = AdaptiveLimit(16, increase_every=2, cooldown_s=0.0)
    limit.on_rate_limit()
    assert limit.limit == 8
    for _ in range(5):
        limit.on_rate_limit()
    assert limit.limit == 1  # never below 1
    for _ in range(2 * 15):
        limit.on_success()
    assert limit.limit == 16
    limit.on_success()
    assert limit.limit == 16  # never above the maximum


def test_aimd_counts_a_burst_of_429s_once() -> None:
    limit = AdaptiveLimit(16, cooldown_s=60.0)
    for _ in range(10):
        limit.on_rate_limit()
    assert limit.limit == 8


def test_engine_lowers_concurrency_on_rate_limits() -> None:
    with FakeLLMServer(latency=0.02, script=[Fault("rate_limit", retry_after=0.01)] * 4) as server:

        async def run() -> dict[str, object]:
            async with openai_engine(server, concurrency=16) as engine:
                await asyncio.gather(*(engine.complete(make_request(i)) for i in range(64)))
                return engine.stats()

        stats = asyncio.run(run())
    concurrency = stats["concurrency"]
    assert isinstance(concurrency, dict)
    assert concurrency["lowest"] == 8
    assert stats["failures"] == {}


def test_token_budget_waits_for_the_window() -> None:
    async def run() -> None:
        budget = TokenBudget(100)
        budget.window_s = 0.3
        first = await budget.acquire(80)
        budget.reconcile(first, 90)
        loop = asyncio.get_running_loop()
        start = loop.time()
        await budget.acquire(20)  # 90 + 20 > 100: waits for the first to leave the window
        assert loop.time() - start >= 0.25

    asyncio.run(run())


@pytest.mark.parametrize("tpm", [400])
def test_engine_token_budget(tpm: int) -> None:
    with FakeLLMServer() as server:

        async def run() -> None:
            async with openai_engine(server, concurrency=8, tpm=tpm) as engine:
                assert engine._budget is None  # built on first use, on the running loop
                result = await engine.complete(make_request(0, max_tokens=50))
                assert isinstance(result, Completion)
                assert engine._budget is not None and engine._budget._used < 50

        asyncio.run(run())
