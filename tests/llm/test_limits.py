"""Concurrency, request-rate and token limits, checked by the server's own counters."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import pytest
from asyncio_throttle import Throttler
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Completion, limits
from genir_eval.llm.limits import AdaptiveLimit, LookupWindow, RequestRate, TokenBudget
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


def _most_in_window(times: list[float], window_s: float) -> int:
    """Largest number of ``times`` within any closed window of ``window_s`` seconds."""
    ordered = sorted(times)
    return max(
        (sum(1 for t in ordered if start <= t <= start + window_s) for start in ordered),
        default=0,
    )


@pytest.mark.parametrize(
    ("rpm", "n", "min_elapsed"),
    [
        # 1200 rpm = 20 per 1 s window; 70 requests need at least 3 s (by hand: 60/20 = 3).
        (1200, 70, 3.0),
        # 6000 rpm = 100 per 1 s window, 25 per 250 ms; 330 requests need at least 3 s.
        (6000, 330, 3.0),
    ],
)
def test_request_rate_is_never_exceeded(
    rpm: int, n: int, min_elapsed: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limiter grants the sends: every 1 s window of grants holds at most ``rpm / 60``,
    with no tolerance. The server counts arrivals, which trail the grants by a delay that
    varies with the machine's load; arrivals are held to the same bound over any window
    shorter than 1 s by the spread of that delay (measured, not assumed: a loaded machine
    spreads it, an idle one barely), so the test holds with the other core busy."""
    grants: list[float] = []
    acquire = RequestRate.acquire

    async def granted(self: RequestRate, *, first: bool = False) -> None:
        await acquire(self, first=first)
        grants.append(time.monotonic())  # the clock of the server's arrivals

    monkeypatch.setattr(RequestRate, "acquire", granted)
    with FakeLLMServer() as server:

        async def run() -> float:
            loop = asyncio.get_running_loop()
            start = loop.time()
            async with openai_engine(server, concurrency=64, rpm=rpm) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(n))
                )
            assert all(isinstance(r, Completion) for r in results)
            return loop.time() - start

        elapsed = asyncio.run(run())
    assert server.stats.total == n == len(grants)
    assert _most_in_window(grants, 1.0) <= rpm // 60
    # the k-th arrival trails the k-th grant by a delay within [shortest, longest]
    arrivals = sorted(server.stats.arrivals)
    delays = [a - g for a, g in zip(arrivals, sorted(grants), strict=True)]
    spread = max(delays) - min(delays)
    assert min(delays) >= 0
    if spread < 0.5:  # with arrivals half a second late, a 1 s window says nothing
        assert server.stats.max_in_window(1.0 - spread) <= rpm // 60
    assert elapsed >= min_elapsed


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


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_aimd_decrease_stops_at_what_the_provider_served(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(limits.time, "monotonic", clock)
    limit = AdaptiveLimit(64, cooldown_s=0.0, window_s=2.0)
    # 2 s of successes at 200/s taking 0.2 s each: 40 served at once (Little's law, by hand).
    for _ in range(400):
        clock.now += 0.005
        limit.on_success(0.2)
    served = limit.served()
    assert served == pytest.approx(40.0, abs=0.5)
    limit.on_rate_limit()
    # Not 32: a halving would fall below what the provider served (rounded up).
    assert limit.limit == math.ceil(served)
    limit.on_rate_limit()
    assert limit.limit == math.ceil(served) - 1  # at least one down per congestion event
    clock.now += 5.0  # no success for longer than the window: nothing is being served
    limit.on_rate_limit()
    assert limit.limit == (math.ceil(served) - 1) // 2  # halves again
    assert limit.decreases == 3


def test_aimd_counts_429s_of_requests_sent_before_a_decrease_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock()
    monkeypatch.setattr(limits.time, "monotonic", clock)
    limit = AdaptiveLimit(16, cooldown_s=0.0)
    sent = clock.now
    clock.now += 0.1
    limit.on_rate_limit(sent_at=sent)
    assert limit.limit == 8
    clock.now += 0.1
    limit.on_rate_limit(sent_at=sent)  # in flight when the limit was lowered: same event
    assert limit.limit == 8
    limit.on_rate_limit(sent_at=clock.now)  # sent after the decrease: a new event
    assert limit.limit == 4


def test_request_rate_windows_and_retries_first() -> None:
    # 2400 rpm over 250 ms windows = 10 per window (by hand: 2400 * 0.25 / 60), the first
    # window paced 25 ms apart (0.25 / 10).
    async def run() -> tuple[list[float], list[str], int, float]:
        rate = RequestRate(2400)
        assert (rate.period, rate.per_period) == (0.25, 10)
        assert isinstance(rate.throttler, Throttler)
        loop = asyncio.get_running_loop()
        start = loop.time()
        times: list[float] = []
        order: list[str] = []

        entered: list[int] = []

        async def one(name: str, first: bool = False) -> None:
            if first:
                entered.append(len(order))  # requests through the gate when the retry came
            await rate.acquire(first=first)
            times.append(loop.time() - start)
            order.append(name)

        tasks = [asyncio.create_task(one(f"new{i}")) for i in range(25)]
        await asyncio.sleep(0.06)
        tasks.append(asyncio.create_task(one("retry", first=True)))
        await asyncio.gather(*tasks)
        return times, order, entered[0], start

    times, order, entered, _ = asyncio.run(run())
    assert times == sorted(times)
    # The throttler's bound: at most 10 in any closed 250 ms window. The times are taken as
    # the gate lets each request go (no await in between), so load cannot bunch them.
    assert max(sum(1 for t in times if s <= t <= s + 0.25) for s in times) <= 10
    assert times[-1] >= 0.5  # 26 requests need three windows
    # The first window is paced, not one burst: request k goes no earlier than k * 25 ms
    # (1 ms for the clock). A sleep never ends early, however loaded the machine.
    first = times[:10]
    assert all(t >= k * 0.025 - 0.001 for k, t in enumerate(first))
    # The retry goes before every new request still queued when it reached the gate; only
    # the one already holding the gate (waiting for its turn) may go before it.
    assert entered <= order.index("retry") <= entered + 1


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


def test_lookup_window_admits_in_order_and_hands_back_cancelled_slots() -> None:
    async def run() -> None:
        window = LookupWindow(2)
        order: list[int] = []

        async def enter(i: int) -> None:
            await window.acquire()
            order.append(i)

        await window.acquire()
        await window.acquire()
        waiting = [asyncio.ensure_future(enter(i)) for i in range(3)]
        await asyncio.sleep(0)
        assert order == [] and window.active == 2
        waiting[0].cancel()  # cancelled in line: its place is given up
        window.release()
        await asyncio.sleep(0)
        assert order == [1]
        window.release()
        waiting[2].cancel()  # granted, then cancelled before it ran: the slot comes back
        await asyncio.gather(*waiting, return_exceptions=True)
        assert order == [1]
        window.release()
        assert window.active == 0

    asyncio.run(run())


def test_first_request_is_sent_before_every_fingerprint_is_computed(tmp_path: Any) -> None:
    """The lookup window: the first call does not wait for all judgments' cache keys."""
    with FakeLLMServer(latency=0.01) as server:

        async def run() -> None:
            path = tmp_path / "c.sqlite"
            async with openai_engine(
                server, concurrency=4, cache_path=path, journal_path=path
            ) as engine:
                keyed = 0
                key = engine._key

                def counting_key(request: Any) -> Any:
                    nonlocal keyed
                    keyed += 1
                    return key(request)

                engine._key = counting_key  # type: ignore[method-assign]
                generate = engine.provider.generate
                keyed_at_first_send: list[int] = []

                async def first_send(*args: Any, **kwargs: Any) -> Any:
                    keyed_at_first_send.append(keyed)
                    return await generate(*args, **kwargs)

                engine.provider.generate = first_send  # type: ignore[method-assign]
                n = 500
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(n))
                )
                assert all(isinstance(r, Completion) for r in results)
                assert engine.stats()["first_send_s"] is not None
            assert keyed_at_first_send[0] < n // 2

        asyncio.run(run())
