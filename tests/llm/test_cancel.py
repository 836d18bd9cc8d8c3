"""Cancelling a run in-process (Ctrl-C, ``task.cancel()``) leaks no exception and leaves the
journal and the cache consistent with each other and with the server's replies."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Journal
from genir_eval.llm.store._sqlite import SqliteWorker
from genir_eval.testing import FakeLLMServer

N = 200


@pytest.fixture
def leaks(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """Everything that would otherwise only be printed: exceptions escaping a thread,
    exceptions handed to the event loop's handler ("exception was never retrieved") and
    errors logged by ``concurrent.futures`` callbacks or asyncio."""
    seen: list[str] = []

    def hook(args: threading.ExceptHookArgs) -> None:
        seen.append(f"thread {args.thread}: {args.exc_type.__name__}: {args.exc_value}")

    monkeypatch.setattr(threading, "excepthook", hook)
    caplog.set_level(logging.ERROR)
    yield seen
    seen.extend(f"log {r.name}: {r.getMessage()}" for r in caplog.records)


def _loop_handler(seen: list[str]) -> Any:
    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        seen.append(f"loop: {context.get('message')}: {context.get('exception')!r}")

    return handler


def test_worker_survives_cancelled_waiters(tmp_path: Path, leaks: list[str]) -> None:
    worker = SqliteWorker(tmp_path / "w.sqlite", "CREATE TABLE t (x INTEGER)")
    gate = threading.Event()

    def blocked(conn: sqlite3.Connection) -> None:
        gate.wait(10)

    def insert(i: int) -> Any:
        return lambda conn: conn.execute("INSERT INTO t VALUES (?)", (i,)).rowcount

    async def go() -> int:
        asyncio.get_running_loop().set_exception_handler(_loop_handler(leaks))
        first = asyncio.create_task(worker.run(blocked))
        await asyncio.sleep(0.05)  # the thread is now inside `blocked`
        queued = [asyncio.create_task(worker.run(insert(i), write=True)) for i in range(20)]
        await asyncio.sleep(0.05)
        for task in [first, *queued]:
            task.cancel()
        await asyncio.gather(first, *queued, return_exceptions=True)
        gate.set()
        # The thread lives on and serves the next item.
        await asyncio.wait_for(worker.run(insert(99), write=True), 10)
        return await asyncio.wait_for(
            worker.run(lambda conn: conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]), 10
        )

    try:
        rows = asyncio.run(go())
    finally:
        gate.set()
        worker.close()
    # Items cancelled before the thread reached them are not run: only the last insert is.
    assert rows == 1
    assert leaks == []


def test_cancelled_run_leaks_nothing_and_stays_consistent(tmp_path: Path, leaks: list[str]) -> None:
    db = tmp_path / "run.sqlite"

    async def judge(engine: Any, i: int) -> None:
        request = make_request(i)
        if engine.resume(request) is not None:
            return
        result = await engine.complete(request)
        await engine.record(request, result, value={"label": getattr(result, "text", None)})

    async def cancelled_run(server: FakeLLMServer) -> None:
        asyncio.get_running_loop().set_exception_handler(_loop_handler(leaks))
        engine = openai_engine(server, cache_path=db, journal_path=db, concurrency=32)
        async with engine:
            # Cancelling the gather cancels every judgment, as asyncio.run does on Ctrl-C:
            # mid-flight, with requests on the wire and SQLite work queued.
            run = asyncio.gather(*(judge(engine, i) for i in range(N)))
            while server.stats.answered_ok < N // 3:
                await asyncio.sleep(0.005)
            # Another writer holds the file's lock (a concurrent run sharing the cache), so
            # cache and journal writes queue up behind it and are cancelled while waiting.
            other = sqlite3.connect(db, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            await asyncio.sleep(0.1)
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            other.execute("COMMIT")
            other.close()

    async def full_run(server: FakeLLMServer) -> int:
        asyncio.get_running_loop().set_exception_handler(_loop_handler(leaks))
        engine = openai_engine(server, cache_path=db, journal_path=db, concurrency=32)
        async with engine:
            await asyncio.gather(*(judge(engine, i) for i in range(N)))
        return engine.calls

    with FakeLLMServer(reply=lambda r: f"reply to {r.last_user_text}", latency=0.05) as server:
        asyncio.run(asyncio.wait_for(cancelled_run(server), 30))
        first_calls = server.stats.total
        assert 0 < first_calls <= N

        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            cached = dict(conn.execute("SELECT key, text FROM cache").fetchall())
        finally:
            conn.close()
        with Journal(db) as journal:
            done = [e for e in journal.entries() if e.ok]
        assert 0 < len(done) < N, "the cancel was expected to land mid-run"
        for entry in done:
            # A journaled judgment's reply is the server's and is in the cache under its key.
            assert entry.raw == f"reply to judge {entry.key.item.replace('item', 'item ')}"
            assert cached[entry.fingerprint or ""] == entry.raw

        second_calls = asyncio.run(full_run(server))
        # Nothing journaled is asked again; what was cached but not journaled is not paid twice.
        assert second_calls == N - len(cached)
        assert server.stats.total == first_calls + second_calls

    with Journal(db) as journal:
        entries = journal.entries()
    assert len(entries) == N and all(e.ok for e in entries)
    assert all(isinstance(e.raw, str) and e.raw.startswith("reply to") for e in entries)
    assert leaks == []
