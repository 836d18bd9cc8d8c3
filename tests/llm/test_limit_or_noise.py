"""A learned rate only from evidence of a limit: a 429 alone is retried after its Retry-After
and leaves the pace and the in-flight limit alone; 429s that keep coming, or one that names
its limit, set a pace; the pace is dropped when they stop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Completion
from genir_eval.llm.limits import LearnedRate
from genir_eval.llm.providers.base import RateLimitInfo
from genir_eval.llm.providers.classify import parse_limit_message
from genir_eval.testing import FakeLLMServer, FaultPlan
from genir_eval.testing.fake_llm_server import Fault


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# (429s, other replies within one second, a limit?): the 429s show a limit when at least 3
# came and a provider refusing 5% of calls at random would send as many or more at most
# once in a thousand windows; the binomial tails by scipy.stats.binom.sf(k - 1, n, 0.05).
EVIDENCE_CASES = [
    (1, 0, False),  # a lone 429
    (2, 0, False),  # two: under the minimum of 3
    (4, 0, True),  # four and nothing else: 0.05**4 = 6.25e-6
    (3, 7, False),  # 3 of 10: 0.0115
    (4, 33, False),  # 4 of 37: 0.112
    (8, 29, True),  # 8 of 37: 4.1e-4
    (29, 291, False),  # 29 of 320: 1.65e-3
    (31, 289, True),  # 31 of 320: 3.9e-4
    (6, 314, False),  # 6 of 320: the peer harness's sporadic 429s (36 of 2,107 calls)
    (120, 200, True),  # 320 a second sent against a limit of 200
]


@pytest.mark.parametrize(("refused", "answered", "limit"), EVIDENCE_CASES)
def test_a_limit_is_told_from_noise_by_the_share_of_429s(
    monkeypatch: pytest.MonkeyPatch, refused: int, answered: int, limit: bool
) -> None:
    clock = _Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    rate = LearnedRate(window_s=1.0)
    step = 0.5 / (answered + refused)
    for _ in range(answered + refused):  # the sends, unpaced: a rate to cut from
        clock.now += step
        rate.note_send()
    for _ in range(answered):
        clock.now += step
        rate.on_answer()
    for _ in range(refused):
        clock.now += step
        rate.on_rate_limit(sent_at=clock.now - 0.2)
    assert rate.evident() is limit
    assert rate.refused == refused
    if limit:
        assert rate.decreases == 1 and rate.rate() is not None
    else:
        assert rate.decreases == 0 and rate.rate() is None
        assert rate.ignored == refused  # every one retried alone, the pace untouched
    # A second later the window holds none of them: no limit shows any more.
    clock.now += 1.0
    assert not rate.evident()


def test_a_pace_is_dropped_when_the_429s_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    rate = LearnedRate(window_s=1.0, forget_s=5.0)
    for _ in range(30):
        clock.now += 0.01
        rate.note_send()
    for _ in range(20):
        clock.now += 0.02
        rate.on_answer()
    for _ in range(10):  # 10 of 30 replies refused: a limit
        clock.now += 0.01
        rate.on_rate_limit(sent_at=clock.now - 0.1)
    assert rate.opened and rate.rate() is not None
    # With sends waiting for the pace (probing up to 1.25x it) and no 429 for 5 s, the
    # limit is gone: the pace is dropped, and the sends go unpaced again.
    rate.on_send(clock.now, waited=True)
    clock.now += 4.9
    assert rate.rate() is not None
    clock.now += 0.1
    assert rate.rate() is None
    asyncio.run(rate.acquire())
    assert rate.forgotten == 1 and not rate.opened
    # A stated limit is not forgotten: the provider said it.
    stated = LearnedRate(guard=0.0, forget_s=5.0)
    stated.on_answer(RateLimitInfo(limit=600.0))
    clock.now += 60.0
    assert stated.rate() == pytest.approx(10.0)


# A 429's message as providers word it, and the limit it names (expected by hand).
LIMIT_MESSAGES = [
    (
        "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): "
        "Limit 500, Used 500, Requested 1. Please try again in 120ms.",
        RateLimitInfo(limit=500.0),
    ),
    (
        "This request would exceed the rate limit for your organization (1a2b) of 1,000 "
        "requests per minute. For details, refer to the documentation.",
        RateLimitInfo(limit=1000.0),
    ),
    (
        "Rate limit reached for gpt-4 in organization org-abc on tokens per min (TPM): "
        "Limit 10000, Used 9807, Requested 617.",
        RateLimitInfo(names_limit=True),
    ),
    (
        "Rate limit reached for gpt-4 in organization org-abc on requests per day (RPD): "
        "Limit 200, Used 200, Requested 1.",
        RateLimitInfo(names_limit=True),
    ),
    (
        "Requests to the ChatCompletions_Create Operation have exceeded token rate limit of "
        "your current OpenAI S0 pricing tier. Please retry after 6 seconds.",
        RateLimitInfo(names_limit=True),
    ),
    ("Rate limit reached (fake)", None),  # the fake server's sporadic 429
    ("Too many requests, please slow down", None),
    ("The server is overloaded; try again in a moment", None),
]


@pytest.mark.parametrize(("message", "expected"), LIMIT_MESSAGES)
def test_the_limit_a_429s_message_names(message: str, expected: RateLimitInfo | None) -> None:
    assert parse_limit_message(message) == expected


def _judge(server: Any, n: int, **engine: Any) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with openai_engine(server, **engine) as running:
            results = await asyncio.gather(*(running.complete(make_request(i)) for i in range(n)))
            assert all(isinstance(r, Completion) for r in results)
            return running.stats()

    return asyncio.run(run())


def test_sporadic_429s_leave_the_pace_and_the_concurrency_alone() -> None:
    # The peer harness's faults: 5% of the calls, a third of them 429s with Retry-After,
    # and no limit at all. Every 429 is retried alone.
    plan = FaultPlan(
        rate=0.05, kinds=("rate_limit", "server_error", "drop"), retry_after=0.05, seed=5
    )
    with FakeLLMServer(latency=0.01, faults=plan) as server:
        stats = _judge(server, 600, concurrency=16, max_attempts=10)
    refused = server.stats.by_fault["rate_limit"]
    assert refused >= 3  # the seeded draw has some
    assert stats["request_rate"] == {
        "source": "learned",
        "rpm": None,
        "stated_rpm": None,
        "decreases": 0,
        "rate_limited": refused,
        "taken_for_noise": refused,
    }
    assert stats["concurrency"]["lowest"] == 16
    assert stats["concurrency"]["decreases"] == 0


def test_a_lone_429_is_retried_after_its_retry_after_and_changes_nothing() -> None:
    with FakeLLMServer(latency=0.01, script=[Fault("rate_limit", retry_after=0.2)]) as server:
        stats = _judge(server, 40, concurrency=8)
    assert server.stats.rate_limited == 0 and server.stats.by_status[429] == 1
    assert stats["retries"] == 1
    assert stats["request_rate"]["decreases"] == 0
    assert stats["request_rate"]["taken_for_noise"] == 1
    assert stats["concurrency"]["lowest"] == 8


def test_one_429_naming_the_limit_sets_the_pace() -> None:
    message = (
        "Rate limit reached for fake-model in organization org-test on requests per min "
        "(RPM): Limit 6000, Used 6000, Requested 1."
    )
    script = [Fault("rate_limit", retry_after=0.05, message=message)]
    with FakeLLMServer(latency=0.01, script=script) as server:
        stats = _judge(server, 40, concurrency=8)
    rate = stats["request_rate"]
    assert rate["stated_rpm"] == 6000.0
    assert rate["taken_for_noise"] == 0 and rate["rate_limited"] == 1
    assert rate["rpm"] is not None and rate["rpm"] <= 6000.0


@pytest.mark.realtime
def test_a_limit_that_lifts_is_forgotten() -> None:
    # 600 rpm = 10/s enforced by the server with a bucket of 2: 16 in flight at 20 ms send
    # far more (even a starved client: 50/s with the machine at load 20), and the 429s,
    # most of the replies, set a pace. Then the limit is lifted: once sends have waited for
    # the pace forget_s without a 429, the pace is dropped and the rest go unpaced. A
    # starved client may not keep sends waiting that long within one batch (a send that
    # finds the pace free restarts the count), so batches go on until the pace is dropped,
    # 20 at most: the point is that it is dropped at all, not how soon.
    gates: list[LearnedRate] = []

    def gate() -> LearnedRate:
        gates.append(LearnedRate(forget_s=1.0))
        return gates[-1]

    with FakeLLMServer(
        latency=0.02, rate_limit_rpm=600, rate_limit_burst_s=0.2, rate_limit_headers=False
    ) as server:

        async def run() -> None:
            async with openai_engine(
                server, concurrency=16, max_attempts=30, backoff_base=0.1, rate_gate=gate
            ) as engine:
                first = [engine.complete(make_request(i)) for i in range(30)]
                assert all(isinstance(r, Completion) for r in await asyncio.gather(*first))
                assert gates[-1].decreases >= 1, server.stats.rate_limited  # a pace was set
                server.bucket = None  # the limit is lifted: no 429 from now on
                for batch in range(20):
                    start = 30 + 60 * batch
                    rest = [engine.complete(make_request(i)) for i in range(start, start + 60)]
                    assert all(isinstance(r, Completion) for r in await asyncio.gather(*rest))
                    if gates[-1].learned is None:
                        break

        asyncio.run(run())
    learned = gates[-1]
    # However far the pace had come, it did not outlive the 429s.
    assert learned.forgotten >= 1
    assert learned.learned is None and learned.rate() is None
