"""A journaled judgment keeps its in-flight slot from its first attempt until its label is
committed (``Engine.record``), its repair call sharing it: replies paid for and not yet
journaled cannot pile up behind a journal whose commits wait, so a process killed at any
moment repeats at most ``concurrency`` judgments (the Ray kill test,
``tests/runner/test_ray_executor.py``, measures that end to end). A judgment waiting to retry
after a failed attempt holds no reply, so its slot is free meanwhile."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from llm_helpers import make_request

from genir_eval.llm import Completion, Engine, Request
from genir_eval.llm.config import EngineConfig
from genir_eval.llm.engine import REPAIR_SUFFIX, judgment_of
from genir_eval.llm.limits import AdaptiveLimit
from genir_eval.llm.providers.base import Provider, ProviderError


class _Counting(Provider):
    """Answers at once, counting the calls it was sent."""

    name = "counting"
    rate_limited = False

    def __init__(self) -> None:
        self.model = "m"
        self.calls = 0

    async def generate(self, messages, config, *, request=None):  # type: ignore[no-untyped-def]
        self.calls += 1
        await asyncio.sleep(0)
        return Completion(text='{"label": 1}', model="m")


class _WaitingJournal:
    """A journal whose commits wait until ``open`` is set (another process holding the
    file's write lock, a slow disk); it has no earlier rows."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.committed = 0

    def get(self, key: Any) -> None:
        return None

    async def record(self, key: Any, **row: Any) -> None:
        await self.open.wait()
        self.committed += 1

    async def aclose(self) -> None:
        return None


def _repair(request: Request) -> Request:
    key = dataclasses.replace(
        request.key, prompt_version=request.key.prompt_version + REPAIR_SUFFIX
    )
    return dataclasses.replace(request, key=key)


async def _judge(engine: Engine, request: Request, *, repair: bool = False) -> None:
    result = await engine.complete(request)
    if repair:
        result = await engine.complete(_repair(request))
    await engine.record(request, result, value={"label": 1})


def test_a_waiting_journal_holds_back_new_calls() -> None:
    async def main() -> tuple[int, int, int]:
        provider, journal = _Counting(), _WaitingJournal()
        engine = Engine(provider, EngineConfig(concurrency=4), journal=journal, quiet=True)  # type: ignore[arg-type]
        tasks = [asyncio.ensure_future(_judge(engine, make_request(i))) for i in range(12)]
        for _ in range(50):
            await asyncio.sleep(0)
        sent_while_waiting = provider.calls
        journal.open.set()
        await asyncio.gather(*tasks)
        return sent_while_waiting, provider.calls, journal.committed

    sent_while_waiting, sent, committed = asyncio.run(main())
    assert sent_while_waiting == 4  # the 4 slots held by judgments waiting for their commit
    assert (sent, committed) == (12, 12)


def test_without_a_journal_a_slot_is_freed_by_its_reply() -> None:
    async def main() -> int:
        provider = _Counting()
        engine = Engine(provider, EngineConfig(concurrency=4), quiet=True)
        # complete() alone, nothing recorded: every call still goes
        await asyncio.gather(*(engine.complete(make_request(i)) for i in range(12)))
        return provider.calls

    assert asyncio.run(main()) == 12


def test_a_repair_call_shares_its_judgments_slot() -> None:
    async def main() -> tuple[int, int]:
        provider, journal = _Counting(), _WaitingJournal()
        journal.open.set()
        engine = Engine(provider, EngineConfig(concurrency=1), journal=journal, quiet=True)  # type: ignore[arg-type]
        # one slot: a repair that waited for a second one would never be sent
        await asyncio.wait_for(
            asyncio.gather(*(_judge(engine, make_request(i), repair=True) for i in range(3))), 10
        )
        return provider.calls, engine._limit.in_flight

    assert asyncio.run(main()) == (6, 0)


def test_a_cancelled_judgment_gives_its_slot_back() -> None:
    async def main() -> int:
        provider, journal = _Counting(), _WaitingJournal()
        engine = Engine(provider, EngineConfig(concurrency=1), journal=journal, quiet=True)  # type: ignore[arg-type]
        first = asyncio.ensure_future(_judge(engine, make_request(0)))
        for _ in range(20):
            await asyncio.sleep(0)
        first.cancel()  # waiting for its commit
        await asyncio.gather(first, return_exceptions=True)
        journal.open.set()
        await asyncio.wait_for(_judge(engine, make_request(1)), 10)
        return engine._limit.in_flight

    assert asyncio.run(main()) == 0


def test_judgment_of_a_repair_call_is_the_judgment_it_repairs() -> None:
    request = make_request(3)
    assert judgment_of(_repair(request).key) == request.key
    assert judgment_of(request.key) == request.key


def test_a_holder_keeps_one_slot_until_it_lets_it_go() -> None:
    async def main() -> list[int]:
        limit = AdaptiveLimit(2)
        seen = []
        await limit.acquire(holder="a")
        await limit.acquire(holder="a")  # shares its slot
        seen.append(limit.in_flight)
        # two requests of one holder waiting at once end up with one slot between them
        await limit.acquire()
        waiting = [asyncio.ensure_future(limit.acquire(holder="b")) for _ in range(2)]
        await asyncio.sleep(0)
        limit.release()
        limit.release("a")
        await asyncio.gather(*waiting)
        seen.append(limit.in_flight)
        limit.release("b")
        limit.release("b")  # no longer held: nothing
        limit.release("nobody")
        seen.append(limit.in_flight)
        return seen

    assert asyncio.run(main()) == [1, 1, 0]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_every_slot_comes_back_after_a_run(concurrency: int) -> None:
    async def main() -> tuple[int, int]:
        provider, journal = _Counting(), _WaitingJournal()
        journal.open.set()
        config = EngineConfig(concurrency=concurrency)
        engine = Engine(provider, config, journal=journal, quiet=True)  # type: ignore[arg-type]
        await asyncio.gather(
            *(_judge(engine, make_request(i), repair=i % 2 == 0) for i in range(20))
        )
        return engine._limit.in_flight, provider.calls

    assert asyncio.run(main()) == (0, 30)


class _FailsFirst(Provider):
    """Refuses the first call to judgment 0 (a 500), answers every other call at once, and
    notes the order in which judgments were answered."""

    name = "fails-first"
    rate_limited = False

    def __init__(self) -> None:
        self.model = "m"
        self.refused = False
        self.answered: list[str] = []

    async def generate(self, messages, config, *, request=None):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0)
        item = request.key.item
        if item == make_request(0).key.item and not self.refused:
            self.refused = True
            raise ProviderError("internal error", error_class="transient", status=500)
        self.answered.append(item)
        return Completion(text='{"label": 1}', model="m")


def test_a_judgment_waiting_to_retry_frees_its_slot() -> None:
    async def main() -> tuple[list[str], int]:
        provider, journal = _FailsFirst(), _WaitingJournal()
        journal.open.set()
        # one slot and a long backoff: had the first judgment kept its slot while it waits to
        # retry, the second could not be answered before it
        engine = Engine(
            provider,  # type: ignore[arg-type]
            EngineConfig(concurrency=1),
            journal=journal,  # type: ignore[arg-type]
            backoff_base=2.0,
            backoff_max=2.0,
            seed=1,
            quiet=True,
        )
        await asyncio.wait_for(
            asyncio.gather(*(_judge(engine, make_request(i)) for i in range(2))), 30
        )
        return provider.answered, engine._limit.in_flight

    answered, in_flight = asyncio.run(main())
    assert answered == [make_request(1).key.item, make_request(0).key.item]
    assert in_flight == 0
