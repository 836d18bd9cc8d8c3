"""Concurrency, request-rate and token limits, checked by the server's own counters."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Completion
from genir_eval.llm.limits import (
    AdaptiveLimit,
    LookupWindow,
    RequestRate,
    Send,
    SendWindow,
    TokenBudget,
)
from genir_eval.testing import FakeLLMServer, FakeLLMServerProcess, Fault


@pytest.mark.realtime
def test_concurrency_is_never_exceeded() -> None:
    # Each reply takes 0.5 s, so even a client starved by a busy machine has its 8 sends out
    # before the first answer returns: the limit is reached, and never passed.
    with FakeLLMServer(latency=0.5) as server:

        async def run() -> None:
            async with openai_engine(server, concurrency=8) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(40))
                )
            assert all(isinstance(r, Completion) for r in results)

        asyncio.run(run())
    assert server.stats.max_in_flight == 8


@pytest.mark.realtime
def test_server_sustains_256_in_flight() -> None:
    with FakeLLMServer(latency=0.5) as server:

        async def run() -> None:
            # a rate given (far above what is sent): no learned pace, so no slow opening
            async with openai_engine(server, concurrency=300, rpm=10**7) as engine:
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


@pytest.mark.realtime
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
    """The limiter counts the sends from when they left (reported by the provider's HTTP
    connection): every 1 s window of departures holds at most ``rpm / 60``, with no
    tolerance. The server counts arrivals, which trail the departures by a delay that varies
    with the machine's load; arrivals are held to the same bound over any window shorter than
    1 s by the spread of that delay (measured, not assumed: a loaded machine spreads it, an
    idle one barely), so the test holds with the other core busy."""
    departures: list[float] = []
    depart = Send.depart

    def departed(self: Send, at: float) -> None:
        depart(self, at)
        departures.append(at)  # time.monotonic(): the clock of the server's arrivals

    monkeypatch.setattr(Send, "depart", departed)
    with FakeLLMServer() as server:

        async def run() -> tuple[float, dict[str, Any]]:
            loop = asyncio.get_running_loop()
            start = loop.time()
            async with openai_engine(server, concurrency=64, rpm=rpm) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(n))
                )
                stats = engine.stats()
            assert all(isinstance(r, Completion) for r in results)
            return loop.time() - start, stats

        elapsed, stats = asyncio.run(run())
    # every request's departure was reported by the provider (from its HTTP connection)
    assert server.stats.total == n == len(departures) == stats["request_rate"]["departed"]
    assert _most_in_window(departures, 1.0) <= rpm // 60
    # the k-th arrival trails the k-th departure by a delay within [shortest, longest]
    arrivals = sorted(server.stats.arrivals)
    delays = [a - g for a, g in zip(arrivals, sorted(departures), strict=True)]
    # (a departure is reported once the write of the request's body has returned, after
    # the event loop ran the other tasks: the server may count the request first)
    spread = max(delays) - min(delays)
    if spread < 0.5:  # with arrivals half a second late, a 1 s window says nothing
        assert server.stats.max_in_window(1.0 - spread) <= rpm // 60
    assert elapsed >= min_elapsed


def test_aimd_halves_on_overload_and_climbs_back() -> None:
    limit = AdaptiveLimit(16, increase_every=2, cooldown_s=0.0)
    limit.on_overload()
    assert limit.limit == 8
    for _ in range(5):
        limit.on_overload()
    assert limit.limit == 1  # never below 1
    for _ in range(2 * 15):
        limit.on_success()
    assert limit.limit == 16
    limit.on_success()
    assert limit.limit == 16  # never above the maximum


def test_aimd_counts_a_burst_of_overloads_once() -> None:
    limit = AdaptiveLimit(16, cooldown_s=60.0)
    for _ in range(10):
        limit.on_overload()
    assert limit.limit == 8


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_aimd_decrease_stops_at_what_the_provider_served(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    limit = AdaptiveLimit(64, cooldown_s=0.0, window_s=2.0)
    # 2 s of successes at 200/s taking 0.2 s each: 40 served at once (Little's law, by hand).
    for _ in range(400):
        clock.now += 0.005
        limit.on_success(0.2)
    served = limit.served()
    assert served == pytest.approx(40.0, abs=0.5)
    limit.on_overload()
    # Not 32: a halving would fall below what the provider served (rounded up).
    assert limit.limit == math.ceil(served)
    limit.on_overload()
    assert limit.limit == math.ceil(served) - 1  # at least one down per congestion event
    clock.now += 5.0  # no success for longer than the window: nothing is being served
    limit.on_overload()
    assert limit.limit == (math.ceil(served) - 1) // 2  # halves again
    assert limit.decreases == 3


def test_aimd_counts_overloads_of_requests_sent_before_a_decrease_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    limit = AdaptiveLimit(16, cooldown_s=0.0)
    sent = clock.now
    clock.now += 0.1
    limit.on_overload(sent_at=sent)
    assert limit.limit == 8
    clock.now += 0.1
    limit.on_overload(sent_at=sent)  # in flight when the limit was lowered: same event
    assert limit.limit == 8
    limit.on_overload(sent_at=clock.now)  # sent after the decrease: a new event
    assert limit.limit == 4


@pytest.mark.realtime
def test_request_rate_windows_and_retries_first() -> None:
    # 2400 rpm = 40/s: 40 sends per 1.01 s window (1% for the spread of the delay from a send
    # leaving to its arrival) once departures are reported. Here nothing reports them (no
    # provider): the sends are counted from their grants, with the wider margins, 39 sends
    # (2% guard, floored) per 1.02 s, spaced at least 1.02 / (39 * 4) = 6.5 ms apart (by
    # hand from the formulas).
    async def run() -> tuple[list[float], list[str], int]:
        rate = RequestRate(2400)
        assert rate.cap == 40
        assert rate.window_s == pytest.approx(1.01)
        start = time.monotonic()
        times: list[float] = []
        order: list[str] = []
        entered: list[int] = []

        async def one(name: str, first: bool = False) -> None:
            if first:
                entered.append(len(order))  # requests through the gate when the retry came
            send = await rate.acquire(first=first)
            # The gate's own stamp of the grant: a clock read after acquire returns may come
            # late by however long the OS kept this process off the CPU (a loaded machine),
            # which would bunch two readings closer than the grants were.
            times.append(send.granted - start)
            order.append(name)

        tasks = [asyncio.create_task(one(f"new{i}")) for i in range(45)]
        await asyncio.sleep(0.06)
        tasks.append(asyncio.create_task(one("retry", first=True)))
        await asyncio.gather(*tasks)
        return times, order, entered[0]

    times, order, entered = asyncio.run(run())
    assert times == sorted(times)
    # The window's bound: at most 39 in any 1.02 s window (half-open: a send goes when the
    # one 39 back leaves). The times are the gate's grants, so load cannot bunch them.
    assert max(sum(1 for t in times if s <= t < s + 1.02) for s in times) <= 39
    assert times[-1] >= 1.02  # the 40th send waits for the first to leave the window
    # Never a burst: consecutive sends at least the catch-up spacing apart (1 ms for clocks).
    spacing = 1.02 / (39 * 4)
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= spacing - 0.001
    # The retry goes before every new request still queued when it reached the gate; only
    # the one already holding the gate (waiting for its turn) may go before it.
    assert entered <= order.index("retry") <= entered + 1


# SendWindow with explicit times (seconds), expected values computed by hand.
def test_send_window_admits_cap_per_window_spaced_and_restamps_after_a_stall() -> None:
    window = SendWindow(catch_up=2.0, warmup_s=1.0, warmup_extra_s=0.3, pipeline_s=0.02)
    cap, length = 4, 1.0
    spacing = length / (cap * 2)  # 0.125
    assert window.next_at(10.0, cap, length) == -math.inf  # nothing sent: at once
    window.admit(10.0)
    # Warm-up: the first send is stamped 0.3 s late (the start-up's slow arrivals).
    assert window.stamps[-1] == pytest.approx(10.3)
    assert window.next_at(10.0, cap, length) == pytest.approx(10.0 + spacing)
    for t in (10.5, 10.75, 11.0):
        window.admit(t)
    # Stamps 10.3, 10.5 + 0.15, 10.75 + 0.075, 11.0 + 0: the window is full until the
    # first leaves at 11.3 (the spacing, 11.125, is sooner).
    assert list(window.stamps) == pytest.approx([10.3, 10.65, 10.825, 11.0])
    assert window.next_at(11.0, cap, length) == pytest.approx(11.3)
    # Idle time is credit: at 20.0 the window is empty and the send goes at once.
    assert window.next_at(20.0, cap, length) <= 20.0
    window.admit(20.0)
    # A timely wake (2 ms late: within late_s, 10 ms) moves nothing.
    window.woke(20.001, 20.126, 20.128)
    assert window.stamps[-1] == 20.0 and window.restamped == 0
    # A wake 200 ms late: the send admitted just before the sleep may have gone out only
    # now, so it is counted from now; an older one (before pipeline_s) is left alone.
    window.admit(20.2)
    window.woke(20.201, 20.326, 20.526)
    assert list(window.stamps)[-2:] == pytest.approx([20.0, 20.526])
    assert window.restamped == 1 and window.max_late == pytest.approx(0.2)


def test_send_window_counts_a_send_from_its_departure() -> None:
    window = SendWindow(catch_up=2.0, warmup_s=1.0, warmup_extra_s=0.3)
    cap, length = 2, 1.0
    first = window.admit(10.0)
    assert window.stamps == pytest.approx([10.3])  # the warm-up's guess
    first.depart(10.004)  # reported: the guess gives way to when it left
    assert window.stamps == pytest.approx([10.004])
    second = window.admit(10.5)
    second.depart(10.52)
    assert (window.departed, window.max_delay) == (2, pytest.approx(0.02))
    # Full: the third goes when the first's departure leaves the window, granted ahead by
    # the shortest recent delay to departure (4 ms) but at most max_lead_s (3 ms):
    # 10.004 + 1.0 - 0.003 = 11.001 (the spacing, 10.5 + 0.25, is sooner).
    assert window.next_at(10.6, cap, length) == pytest.approx(11.001)
    # A send leaving later than a send granted after it: the later one is counted no
    # earlier (the stamps stay in order), and its own earlier departure does not undo that.
    third = window.admit(20.0)
    fourth = window.admit(20.25)
    third.depart(20.3)
    assert window.stamps[-2:] == pytest.approx([20.3, 20.3])
    fourth.depart(20.26)
    assert window.stamps[-2:] == pytest.approx([20.3, 20.3])
    # Reported twice (or after it left every window): no change, no error.
    third.depart(25.0)
    assert window.stamps[-2:] == pytest.approx([20.3, 20.3])


@pytest.mark.realtime
def test_a_stalling_client_catches_up_and_keeps_the_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client whose event loop blocks 150 ms out of every 400 ms: the window gives the
    stalled time back (sends closer than 1/R apart after a stall) and the server never sees
    more than R requests in any 1 s window (each send counted from when its request was
    written). The server runs in its own process, as a provider would: in this one its
    arrival stamps would wait for the interpreter lock the client holds."""
    rpm, n = 1200, 90

    async def hog(stop: asyncio.Event) -> None:
        while not stop.is_set():
            time.sleep(0.15)  # blocks the loop: a stall the gate cannot see coming
            await asyncio.sleep(0.25)

    sends: list[float] = []
    admit = SendWindow.admit

    def admitted(self: SendWindow, now: float) -> Send:
        sends.append(now)
        return admit(self, now)

    monkeypatch.setattr(SendWindow, "admit", admitted)
    with FakeLLMServerProcess() as server:

        async def run() -> dict[str, Any]:
            stop = asyncio.Event()
            hogging = asyncio.create_task(hog(stop))
            async with openai_engine(server, concurrency=64, rpm=rpm) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(n))
                )
                stats = engine.stats()
            stop.set()
            await hogging
            assert all(isinstance(r, Completion) for r in results)
            return stats

        stats = asyncio.run(run())
        served = server.stats()
    assert served.total == n == len(sends)
    assert served.max_in_window(1.0) <= rpm // 60
    # Credit for the stalled time: some sends go closer than the even 1/R = 50 ms apart.
    assert min(b - a for a, b in zip(sends, sends[1:], strict=False)) < 0.75 / (rpm / 60)
    assert stats["request_rate"]["source"] == "configured"
    assert stats["request_rate"]["max_loop_lag_s"] >= 0.1  # the stalls were seen
    assert stats["request_rate"]["restamped"] >= 1
    assert stats["request_rate"]["departed"] == n  # each send counted from its departure


@pytest.mark.parametrize(
    ("fault", "lowest"),
    [
        # 503s: the provider is overloaded, the in-flight limit halves (once: one event)
        (Fault("unavailable"), 8),
        # 429s with Retry-After speak of a rate, not of what is in flight: the limit stays
        (Fault("rate_limit", retry_after=0.01), 16),
    ],
)
def test_engine_lowers_concurrency_on_overload_only(fault: Fault, lowest: int) -> None:
    with FakeLLMServer(latency=0.02, script=[fault] * 4) as server:

        async def run() -> dict[str, object]:
            async with openai_engine(server, concurrency=16) as engine:
                await asyncio.gather(*(engine.complete(make_request(i)) for i in range(64)))
                return engine.stats()

        stats = asyncio.run(run())
    concurrency = stats["concurrency"]
    assert isinstance(concurrency, dict)
    assert concurrency["lowest"] == lowest
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


@pytest.mark.realtime
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

                async def judge(i: int) -> Any:
                    # journaled, as a judge does: the judgment's slot is free once recorded
                    request = make_request(i)
                    result = await engine.complete(request)
                    await engine.record(request, result, value={"label": 1})
                    return result

                n = 500
                results = await asyncio.gather(*(judge(i) for i in range(n)))
                assert all(isinstance(r, Completion) for r in results)
                assert engine.stats()["first_send_s"] is not None
            assert keyed_at_first_send[0] < n // 2

        asyncio.run(run())


@pytest.mark.parametrize(
    ("rpm", "cap", "window_s", "unreported"),
    [
        # by hand: below 60 rpm one send per 60 / rpm seconds (plus 1% and 2% margins), so
        # 30 rpm is one send per 2.02 s, never two a second; from 60 rpm up, rpm / 60 per 1 s
        (30, 1, 2.02, (1, 2.04)),
        (6, 1, 10.1, (1, 10.2)),
        (20, 1, 3.03, (1, 3.06)),
        (60, 1, 1.01, (1, 1.02)),
        (90, 1, 1.01, (1, 1.02)),
        (600, 10, 1.01, (9, 1.02)),
    ],
)
def test_request_rate_window_below_and_above_60_rpm(
    rpm: float, cap: int, window_s: float, unreported: tuple[int, float]
) -> None:
    rate = RequestRate(rpm)
    assert rate.cap == cap
    assert rate.window_s == pytest.approx(window_s, abs=1e-9)
    # what the gate paces by: before any departure is reported, the wider margins
    count, length = rate._limits(0.0)
    assert (count, length) == (unreported[0], pytest.approx(unreported[1], abs=1e-9))
    # at most rpm sends in any minute, whichever margins apply
    assert cap * 60 / window_s <= rpm and count * 60 / length <= rpm
