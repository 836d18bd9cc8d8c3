"""Work of a reader done in worker processes ahead of it, handed back in file order.

Reading a large URGE file is mostly parsing its response HTML, which needs no state of
the reader. :func:`ahead` reads the rows a window ahead of the reader and hands an idle
worker process the chunk of rows furthest ahead that no one has taken, while the reader
builds the sessions of the rows before it; each row comes back to the reader in file
order with the worker's result when there is one. At most :data:`WINDOW` chunks are read
ahead, so memory holds a few hundred rows whatever the file's size.

A result is only ever a shortcut: ``None`` tells the reader to do that row's work itself,
which it does exactly as without workers, so sessions, errors and their order are the
same either way. It is ``None`` when the pool could not start, a worker died or raised,
or the reader reached the chunk before a worker finished it. The reader never waits for a
worker, and workers run at a lower priority (``nice`` 10): on a machine whose other CPUs
are busy it reads at about its own single-process pace, and with a CPU to spare the
workers take most of the parsing off it (the chunks furthest ahead, as work stealing
takes from the far end of a queue, so a worker is rarely still busy with the chunk the
reader reaches).

On Linux, workers are forked from a process that runs one thread (``genir-eval parse``):
they start at once, with the reader's modules loaded. A process with more threads (a run,
with its SQLite workers) is never forked, as a lock another thread held would stay held in
the child, nor any process elsewhere; their workers come from a ``forkserver`` with the
reader's module imported once, and where there is none the reader reads alone.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["ahead", "spare_cpus"]

T = TypeVar("T")

#: Rows a worker is given at once, chunks read ahead of the reader, and the characters
#: of work those chunks may hold (a file of huge rows reads fewer ahead).
CHUNK = 8
WINDOW = 16
MAX_HELD = 32 << 20


def spare_cpus() -> int:
    """CPUs this process may use beyond the one it runs on."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        usable = os.cpu_count() or 1
    return max(0, usable - 1)


class _Chunk:
    __slots__ = ("items", "arguments", "results", "taken", "size")

    def __init__(self, items: list[Any], arguments: list[Any]) -> None:
        self.items = items
        self.arguments = arguments
        self.size = sum(len(a) for a in arguments if isinstance(a, str))
        self.results: list[Any] | None = None
        self.taken = all(a is None for a in arguments)  # nothing to send: no one takes it


def ahead(
    items: Iterable[T],
    argument: Callable[[T], Any],
    work: Callable[[list[Any]], list[Any]],
    *,
    workers: int,
    preload: str,
) -> Iterator[tuple[T, Any]]:
    """``(item, result)`` for each of ``items`` in order, ``result`` being ``work``'s answer
    for ``argument(item)`` computed in one of ``workers`` processes, or ``None`` where it
    was not (``argument`` gave ``None``, or see the module's docstring). ``work`` takes and
    returns a list (one chunk) and must be a module-level function of module ``preload``."""
    if workers < 1:
        for item in items:
            yield item, None
        return
    source = iter(items)
    window: deque[_Chunk] = deque()
    held = 0  # characters of the arguments in the window
    failure: BaseException | None = None  # raised by the items, once the reader is there
    pool = _Pool.start(workers, work, preload)
    try:
        while True:
            while failure is None and len(window) < WINDOW and (not window or held < MAX_HELD):
                chunk: list[T] = []
                try:
                    chunk.extend(itertools.islice(source, CHUNK))
                except Exception as error:  # noqa: BLE001 - raised where the reader meets it
                    failure = error
                if not chunk:
                    break
                window.append(_Chunk(chunk, [argument(item) for item in chunk]))
                held += window[-1].size
            if not window:
                if failure is not None:
                    raise failure
                return
            head = window.popleft()
            held -= head.size
            for i, item in enumerate(head.items):
                if pool is not None and not pool.serve(window):
                    pool = None  # a worker died: the reader does the rest itself
                results = head.results
                yield item, None if results is None else results[i]
    finally:
        if pool is not None:
            pool.close()


class _Pool:
    """Worker processes, each given one chunk at a time over its own pipe."""

    def __init__(self, processes: list[Any], connections: list[Any]) -> None:
        self._processes = processes
        self._connections = connections
        self._busy: list[_Chunk | None] = [None] * len(connections)

    @classmethod
    def start(cls, workers: int, work: Callable[..., Any], preload: str) -> _Pool | None:
        import multiprocessing
        import threading

        processes: list[Any] = []
        connections: list[Any] = []
        try:
            # fork only where it is safe: Linux (macOS's system libraries may not survive
            # it) and a process with one thread
            if sys.platform.startswith("linux") and threading.active_count() == 1:
                context: Any = multiprocessing.get_context("fork")
            else:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload([preload])
            for _ in range(workers):
                mine, theirs = context.Pipe()
                connections.append(mine)
                # the reader's ends go along to be closed there: a forked worker holding
                # one would never see its own pipe end
                process = context.Process(
                    target=_serve, args=(theirs, work, connections), daemon=True
                )
                process.start()
                theirs.close()
                processes.append(process)
        except (OSError, ValueError, ImportError):  # no worker processes here
            cls(processes, connections[: len(processes)]).close()
            return None
        return cls(processes, connections)

    def serve(self, window: deque[_Chunk]) -> bool:
        """Take the answers that are in and give each idle worker the untaken chunk
        furthest ahead; ``False`` when a worker is gone."""
        try:
            for k, connection in enumerate(self._connections):
                chunk = self._busy[k]
                if chunk is not None:
                    if not connection.poll():
                        continue
                    results = connection.recv()
                    if isinstance(results, list) and len(results) == len(chunk.items):
                        chunk.results = results
                    self._busy[k] = None
                untaken = next((c for c in reversed(window) if not c.taken), None)
                if untaken is not None:
                    untaken.taken = True
                    self._busy[k] = untaken
                    connection.send(untaken.arguments)
        except (OSError, EOFError, ValueError):
            self.close()
            return False
        return True

    def close(self) -> None:
        for connection in self._connections:
            connection.close()  # an idle worker sees the end of its pipe and leaves
        for process, chunk in zip(self._processes, self._busy, strict=True):
            if chunk is not None:
                process.kill()  # busy with a chunk no one will read
            process.join(timeout=5.0)
            if process.is_alive():
                process.kill()
                process.join()


def _serve(connection: Any, work: Callable[[list[Any]], list[Any]], readers: list[Any]) -> None:
    """A worker: answer each chunk it is sent until the reader closes the pipe."""
    for end in readers:
        end.close()
    # Ctrl-C reaches the whole process group: the reader stops and closes the pipes, and
    # a worker leaves quietly rather than printing a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A lower priority than the reader, who never waits for this work: on a busy machine
    # a worker must not take its CPU time. (Linux's SCHED_IDLE is stricter, but measured
    # 0.3 s slower on an idle machine, its tasks woken late.)
    try:
        os.nice(10)
    except OSError:  # not permitted here: equal priority is still correct
        pass
    while True:
        try:
            arguments = connection.recv()
        except (EOFError, OSError):
            return
        try:
            results: Any = work(arguments)
        except Exception:  # noqa: BLE001 - the reader does this chunk itself
            results = None
        try:
            connection.send(results)
        except (OSError, ValueError):
            return
