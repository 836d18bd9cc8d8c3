"""One SQLite connection owned by one thread, so the event loop never blocks on the disk.

Work items are functions ``fn(connection) -> result``; the thread runs every item waiting in
its queue inside one transaction (``BEGIN IMMEDIATE`` when any item writes, so two processes
sharing the file queue on the lock through ``busy_timeout`` instead of failing), commits once
and then resolves the items' futures. WAL mode lets readers in other processes go on while
one writes; ``synchronous=NORMAL`` in WAL survives a killed process (only power loss can
drop the last commits).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["SqliteWorker", "connect"]

T = TypeVar("T")

_BATCH = 512


def connect(path: str | Path, *, busy_timeout_ms: int = 60_000) -> sqlite3.Connection:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
    )
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class SqliteWorker:
    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = Path(path)
        self._queue: queue.Queue[Any] = queue.Queue()
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run, args=(schema,), name=f"sqlite:{self.path.name}", daemon=True
        )
        self._closed = False
        self._thread.start()
        self._ready.result()

    def submit(
        self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False
    ) -> concurrent.futures.Future[T]:
        if self._closed:
            raise RuntimeError(f"{self.path} is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._queue.put((fn, write, future))
        return future

    async def run(self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        return await asyncio.wrap_future(self.submit(fn, write=write))

    def run_sync(self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        return self.submit(fn, write=write).result()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join()

    def _run(self, schema: str) -> None:
        try:
            conn = connect(self.path)
            conn.execute("BEGIN IMMEDIATE")
            for statement in schema.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException as error:  # noqa: BLE001 - handed to the constructor
            self._ready.set_exception(error)
            return
        self._ready.set_result(None)
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                batch = [item]
                stop = False
                while len(batch) < _BATCH:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        stop = True
                        break
                    batch.append(more)
                self._execute(conn, batch)
                if stop:
                    return
        finally:
            conn.close()

    @staticmethod
    def _execute(conn: sqlite3.Connection, batch: list[Any]) -> None:
        writes = any(write for _fn, write, _future in batch)
        results: list[tuple[concurrent.futures.Future[Any], bool, Any]] = []
        try:
            if writes:
                conn.execute("BEGIN IMMEDIATE")
            for fn, _write, future in batch:
                try:
                    results.append((future, True, fn(conn)))
                except Exception as error:  # noqa: BLE001 - goes to that item's future
                    results.append((future, False, error))
            if writes:
                conn.execute("COMMIT")
        except Exception as error:  # noqa: BLE001 - the whole batch failed
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            for _fn, _write, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for future, ok, value in results:
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
