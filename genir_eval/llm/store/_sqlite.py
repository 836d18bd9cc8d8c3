"""One SQLite connection owned by one thread, so the event loop never blocks on the disk.

Work items are functions ``fn(connection) -> result``; the thread runs every item waiting in
its queue inside one transaction (``BEGIN IMMEDIATE`` when any item writes, so two processes
sharing the file queue on the lock through ``busy_timeout`` instead of failing), commits once
and then settles the items' waiters. WAL mode lets readers in other processes go on while
one writes; ``synchronous=NORMAL`` in WAL survives a killed process (only power loss can
drop the last commits).

A caller may stop waiting at any time (a cancelled task, Ctrl-C): an item whose waiter is
already cancelled when the thread reaches it is skipped, and a result for a waiter that was
cancelled meanwhile is dropped, so the thread never settles a future twice and lives on.
Coroutine waiters are asyncio futures settled on their own loop through
``loop.call_soon_threadsafe`` (asyncio futures are not thread-safe); blocking waiters are
``concurrent.futures`` futures claimed with ``set_running_or_notify_cancel`` as executors do.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from genir_eval.errors import StorageError
from genir_eval.paths import database_refusal, why_missing

__all__ = ["SqliteWorker", "connect", "storage_error"]

T = TypeVar("T")

_BATCH = 512
#: Files up to this size get SQLite's ``quick_check`` when they open (about 0.3 s per
#: 100 MB), so a damaged cache or journal is reported before the run rather than midway.
_CHECK_BYTES = 256 * 1024 * 1024


def _what_happened(error: BaseException, path: Path) -> str:
    text = str(error).lower()
    if path.is_dir():
        return "it is a folder, not a SQLite file"
    if not path.exists() and os.path.lexists(path) or _loops(path.parent):
        return why_missing(path)
    if isinstance(error, sqlite3.DatabaseError):
        if "not a database" in text:
            return "it is not a SQLite database (another kind of file, or damaged)"
        if "malformed" in text or "corrupt" in text:
            return "it is damaged (truncated or corrupt)"
        if "full" in text:
            return "the disk is full"
        if "readonly" in text or "read-only" in text:
            return "it is read-only"
        if "locked" in text:
            return "another process kept it locked too long"
        if "unable to open" in text:
            return "it cannot be opened (a missing or read-only folder?)"
        if "disk i/o" in text:
            return "the disk reported an I/O error (full or failing?)"
    if isinstance(error, OSError):
        return str(error.strerror or error)
    return str(error)


def _disk_full(error: BaseException, path: Path) -> bool:
    """Whether ``error`` came from a full disk: SQLite says so, or (its "disk I/O error")
    the file's folder has no room left."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(error).lower()
    if "full" in text:
        return True
    if "disk i/o" not in text:
        return False
    try:
        room = os.statvfs(path.parent)
    except (OSError, AttributeError):  # no statvfs (Windows), or no folder
        return False
    return room.f_bavail * room.f_frsize < 64 * 1024


def _loops(folder: Path) -> bool:
    try:
        os.stat(folder)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def storage_error(error: BaseException, path: Path, what: str, remedy: str) -> StorageError:
    """``error`` (a ``sqlite3`` or OS error) as one line naming the file, what happened and
    what to do. A full disk is no fault of the file: what it holds is kept, so the remedy is
    room, not moving it aside."""
    if _disk_full(error, path):
        return StorageError(
            f"cannot use this {what} file: the disk is full; free some space and run again "
            f"(what the {what} holds is kept)",
            path=str(path),
        )
    return StorageError(
        f"cannot use this {what} file: {_what_happened(error, path)}; {remedy}", path=str(path)
    )


def connect(path: str | Path, *, busy_timeout_ms: int = 60_000) -> sqlite3.Connection:
    path = Path(path)
    refusal = database_refusal(path)
    if refusal is not None:  # SQLite would open it and write through it
        raise OSError(errno.EINVAL, f"{refusal} stands there, not a SQLite file", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
    )
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    # Switching a new file to WAL needs an exclusive lock that SQLite does not wait for
    # through busy_timeout: when two runs open one new cache file at once, the second gets
    # "database is locked" at once. Retry within the same time budget. (Worker thread only.)
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                conn.close()
                raise
            time.sleep(0.005)
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class _Waiter:
    """Who waits for one item: a coroutine on an event loop, or a blocked thread."""

    __slots__ = ("loop", "future")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop | None,
        future: asyncio.Future[Any] | concurrent.futures.Future[Any],
    ) -> None:
        self.loop = loop
        self.future = future

    def claim(self) -> bool:
        """Whether the item is still wanted; a blocking waiter can no longer cancel after."""
        if isinstance(self.future, concurrent.futures.Future):
            return self.future.set_running_or_notify_cancel()
        # Read across threads on purpose: a stale answer only means the result is dropped
        # in ``_settle_all``, on the future's own loop.
        return not self.future.cancelled()


def _settle_all(items: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    """On the futures' loop: settle every one still waiting (a cancelled one is skipped)."""
    for future, ok, value in items:
        if future.done():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


def _settle(results: list[tuple[_Waiter, bool, Any]]) -> None:
    """From the worker thread: blocking waiters directly, each event loop's waiters in one
    ``call_soon_threadsafe`` (one wake-up of the loop per batch rather than per item)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
    for waiter, ok, value in results:
        if waiter.loop is None:
            future = waiter.future
            assert isinstance(future, concurrent.futures.Future)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        else:
            assert isinstance(waiter.future, asyncio.Future)
            by_loop.setdefault(waiter.loop, []).append((waiter.future, ok, value))
    for loop, items in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle_all, items)
        except RuntimeError:
            pass  # the loop is closed: the run ended and nobody waits for these any more


class SqliteWorker:
    """``what`` names the file in errors (``"cache"``) and ``remedy`` says what to do about a
    damaged, unreadable or unwritable file: every ``sqlite3`` or OS error of the file
    reaches callers as a :class:`~genir_eval.errors.StorageError` saying so."""

    def __init__(
        self, path: str | Path, schema: str, *, what: str = "database", remedy: str = ""
    ) -> None:
        self.path = Path(path)
        self.what = what
        self.remedy = remedy or "move it aside and run again"
        self._queue: queue.Queue[Any] = queue.Queue()
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run, args=(schema,), name=f"sqlite:{self.path.name}", daemon=True
        )
        self._closed = False
        # items of the current turn of each event loop, not yet handed to the thread
        self._pending: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        self._thread.start()
        try:
            self._ready.result()
        except (sqlite3.Error, OSError) as error:
            raise storage_error(error, self.path, what, self.remedy) from None

    def _put(self, fn: Callable[[sqlite3.Connection], Any], write: bool, waiter: _Waiter) -> None:
        if self._closed:
            raise RuntimeError(f"{self.path} is closed")
        self._queue.put((fn, write, waiter))

    async def run(self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._closed:
            raise RuntimeError(f"{self.path} is closed")
        # The items of one turn of the event loop go to the thread together (one hand-over,
        # one wake-up of the thread, one transaction), not one by one as they come: the
        # engine writes a cache row and a journal row a judgment.
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            loop.call_soon(self._hand_over, loop)
        pending.append((fn, write, _Waiter(loop, future)))
        try:
            return await future
        except (sqlite3.Error, OSError) as error:
            raise storage_error(error, self.path, self.what, self.remedy) from None

    def run_sync(self, fn: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._put(fn, write, _Waiter(None, future))
        try:
            return future.result()
        except (sqlite3.Error, OSError) as error:
            raise storage_error(error, self.path, self.what, self.remedy) from None

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """Hand ``loop``'s items of this turn to the thread."""
        items = self._pending.pop(loop, None)
        if items:
            self._queue.put(items)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for loop in list(self._pending):
            self._hand_over(loop)  # the items awaited now are still run
        self._queue.put(None)
        self._thread.join()

    def _run(self, schema: str) -> None:
        conn: sqlite3.Connection | None = None
        try:
            if self.path.is_dir():
                raise IsADirectoryError(21, "Is a directory", str(self.path))
            conn = connect(self.path)
            conn.execute("BEGIN IMMEDIATE")
            for statement in schema.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("COMMIT")
            if self.path.stat().st_size <= _CHECK_BYTES:
                found = conn.execute("PRAGMA quick_check(1)").fetchone()
                if found is None or found[0] != "ok":
                    raise sqlite3.DatabaseError(f"database disk image is malformed: {found}")
        except BaseException as error:  # noqa: BLE001 - handed to the constructor
            if conn is not None:
                conn.close()
            self._ready.set_exception(error)
            return
        self._ready.set_result(None)
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                batch = list(item) if isinstance(item, list) else [item]
                stop = False
                while len(batch) < _BATCH:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        stop = True
                        break
                    if isinstance(more, list):
                        batch.extend(more)
                    else:
                        batch.append(more)
                self._execute(conn, [entry for entry in batch if entry[2].claim()])
                if stop:
                    return
        finally:
            conn.close()

    @staticmethod
    def _execute(conn: sqlite3.Connection, batch: list[Any]) -> None:
        if not batch:
            return
        writes = any(write for _fn, write, _waiter in batch)
        results: list[tuple[_Waiter, bool, Any]] = []
        try:
            if writes:
                conn.execute("BEGIN IMMEDIATE")
            for fn, _write, waiter in batch:
                try:
                    results.append((waiter, True, fn(conn)))
                except Exception as error:  # noqa: BLE001 - goes to that item's waiter
                    results.append((waiter, False, error))
            if writes:
                conn.execute("COMMIT")
        except Exception as error:  # noqa: BLE001 - the whole batch failed
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            results = [(waiter, False, error) for _fn, _write, waiter in batch]
        _settle(results)
