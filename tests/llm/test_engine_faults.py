"""Every fault the fake server injects ends in a correct result or a recorded failure."""

from __future__ import annotations

import asyncio

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Completion, Failure
from genir_eval.testing import FakeLLMServer, Fault, FaultPlan

# (fault script, expected outcome, provider calls the server should count); by hand from the
# classification rules in genir_eval/llm/providers/classify.py.
RECOVERED = [
    (["rate_limit"], 2),
    (["server_error"], 2),
    (["overloaded"], 2),
    (["drop"], 2),
    (["malformed"], 2),
    (["rate_limit", "server_error", "drop", "malformed"], 5),
]
PERMANENT = [
    (["quota"], "permanent"),
    (["bad_request"], "permanent"),
    (["context_length"], "permanent"),
    (["unauthorized"], "permanent"),
]


async def _one(server: FakeLLMServer, **kwargs: object) -> Completion | Failure:
    async with openai_engine(server, **kwargs) as engine:  # type: ignore[arg-type]
        return await engine.complete(make_request(1))


@pytest.mark.parametrize(("script", "calls"), RECOVERED)
def test_transient_faults_are_retried_to_success(
    server: FakeLLMServer, script: list[str], calls: int
) -> None:
    server.push_script(script)
    result = asyncio.run(_one(server))
    assert isinstance(result, Completion)
    assert result.text == "reply to judge item 1"
    assert server.stats.total == calls


@pytest.mark.parametrize(("script", "error_class"), PERMANENT)
def test_permanent_faults_fail_without_retry(
    server: FakeLLMServer, script: list[str], error_class: str
) -> None:
    server.push_script(script)
    result = asyncio.run(_one(server))
    assert isinstance(result, Failure)
    assert result.error_class == error_class
    assert result.attempts == 1
    assert server.stats.total == 1


def test_attempts_are_bounded(server: FakeLLMServer) -> None:
    server.push_script(["server_error"] * 10)
    result = asyncio.run(_one(server, max_attempts=3))
    assert isinstance(result, Failure)
    assert (result.error_class, result.attempts) == ("transient", 3)
    assert server.stats.total == 3


def test_hang_is_cut_by_the_attempt_timeout(server: FakeLLMServer) -> None:
    server.push_script(["hang"])
    result = asyncio.run(_one(server, timeout=0.3))
    assert isinstance(result, Completion)
    assert server.stats.total == 2


def test_deadline_bounds_a_judgment(server: FakeLLMServer) -> None:
    server.push_script([Fault("rate_limit", retry_after=5.0)])
    result = asyncio.run(_one(server, deadline=1.0))
    assert isinstance(result, Failure)
    assert result.error_class == "deadline"
    assert server.stats.total == 1


@pytest.mark.realtime
def test_the_deadline_counts_from_a_judgments_first_send_not_its_place_in_the_queue() -> None:
    # five judgments of 0.4 s each through one slot take 2 s in all, twice the deadline:
    # each is answered well within it once it is sent, so none may fail for time spent
    # queued behind the others (a slow model run at concurrency 1)
    with FakeLLMServer(reply=lambda r: f"reply to {r.last_user_text}", latency=0.4) as server:

        async def run() -> list[Completion | Failure]:
            async with openai_engine(server, concurrency=1, deadline=1.0) as engine:
                return list(
                    await asyncio.gather(*(engine.complete(make_request(i)) for i in range(5)))
                )

        results = asyncio.run(run())
    assert [type(r).__name__ for r in results] == ["Completion"] * 5
    assert server.stats.total == 5


def test_retry_after_is_honoured(server: FakeLLMServer) -> None:
    server.push_script([Fault("rate_limit", retry_after=0.4, retry_after_ms=True)])

    async def timed() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        result = await _one(server)
        assert isinstance(result, Completion)
        return loop.time() - start

    assert asyncio.run(timed()) >= 0.4


def test_random_faults_lose_no_judgment() -> None:
    plan = FaultPlan(rate=0.2, kinds=("rate_limit", "server_error", "drop", "malformed"), seed=7)
    with FakeLLMServer(reply=lambda r: f"reply to {r.last_user_text}", faults=plan) as server:

        async def run() -> list[Completion | Failure]:
            async with openai_engine(server, concurrency=32, max_attempts=8) as engine:
                results = await asyncio.gather(
                    *(engine.complete(make_request(i)) for i in range(300))
                )
                stats = engine.stats()
            assert stats["retries"] == server.stats.total - 300
            return list(results)

        results = asyncio.run(run())
    assert all(isinstance(r, Completion) for r in results)
    assert [r.text for r in results if isinstance(r, Completion)] == [
        f"reply to judge item {i}" for i in range(300)
    ]
    assert sum(server.stats.by_fault.values()) > 30
