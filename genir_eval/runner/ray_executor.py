"""Judging on a Ray cluster: the sessions sharded over workers, one global request rate.

``[engine] executor = "ray"`` (``genir-eval run --executor ray [--ray-address ADDR]``) runs
the judging step of a run here; everything before it (reading the sessions) and after it
(aggregation, meta-evaluation, the outputs) runs on the driver exactly as a local run does,
from the labels the workers send back.

What runs where:

- **driver** (the machine running ``genir-eval run``): starts one coordinator actor for
  the run, splits each window of sessions into contiguous shards, one per worker, starts one
  Ray task per shard, merges the labels in session order, then aggregates, meta-evaluates
  and writes the run folder. It opens no engine, cache or journal of its own. Two windows
  are in flight: the next window's shards are queued on the cluster (and start as workers
  free up) while the driver merges and writes the last one, so the cluster does not drain
  at each window's end; a third waits for the first to be merged.
- **worker** (a Ray task, one CPU): rebuilds the scenario's judges and runs the same async
  engine as a local run over its shard (:func:`genir_eval.runner.executor.judge_locally`),
  with its own journal shard ``journal.shard-<k>-of-<n>.sqlite`` in the output folder (the
  k-th shards of two windows in flight share it, as two processes share a SQLite file) and its
  own connection to the scenario's cache file (SQLite in WAL mode: the workers of one node
  share it safely; on a cluster without a shared file system each node keeps its own).
- **coordinator** (a Ray actor): the provider's one request-rate budget. Every send of every
  worker first asks it for a time slot: slots are spaced ``60 / rpm`` apart (with a 5% guard;
  a worker reaching its slot more than 25 ms late gives it up and asks again) when the rate
  is configured, or at the rate learned from all workers' replies and 429s
  (:class:`~genir_eval.llm.limits.LearnedRate`, fed by every worker) when it is not. So the
  limit is one global budget, never multiplied by the number of workers nor by the windows
  in flight. It also records which process holds which shard (``where()``).

Why Ray tasks and an actor, not Ray Data: a shard's identity must survive a retry, because
its journal is what makes a retried shard resume without repeating a call; a task per shard
with Ray's ``max_retries`` gives exactly that (a killed worker's task is rerun with the same
arguments, opens the same journal shard and finds its finished judgments there). Ray Data's
``map_batches`` sizes and re-splits blocks itself, runs a synchronous function per batch
(one event loop per batch would cap the in-flight requests at the batch size) and offers
nothing here that the judging needs: the work is I/O-bound calls, not a data pipeline.

Retried shards resume from their journal only if the output folder is the same folder for
the retry: on one machine it is; on a cluster, put the output folder on a file system every
node mounts (NFS), or a retried shard on another node judges its shard again (through the
cache, if that is shared). A run resumed with another number of workers (or locally) reads
the journal shards of the earlier layout as well (``executor.earlier_journals``), so it
pays only for what none of them holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from genir_eval.errors import ClusterError, ConfigError
from genir_eval.judges.base import Judge, Label
from genir_eval.judges.registry import make_judge
from genir_eval.llm.limits import LearnedRate
from genir_eval.llm.providers.base import RateLimitInfo
from genir_eval.records import Session
from genir_eval.runner.executor import Judged, judge_locally
from genir_eval.runner.scenario import Scenario

__all__ = ["Coordinator", "GcsWatch", "RayJudging", "SharedRate", "judge_on_ray", "shards"]

#: Attempts of a shard whose worker died (Ray's ``max_retries``: retries, not attempts).
SHARD_RETRIES = 3
#: Slots are spaced this much wider than ``60 / rpm``, and a worker sends within
#: ``SLOT_LATE_S`` of its slot or not at all: any 1 s window of sends then holds at most
#: ``rpm / 60`` of them with 25 ms to spare for the way from the send to the provider.
SLOT_GUARD = 0.05
SLOT_LATE_S = 0.025
#: The driver ends the run (a :class:`ClusterError`, the journals kept) once the cluster's GCS
#: has not accepted a connection for this long: Ray itself ends a driver's process 60 s after
#: losing its GCS (``gcs_rpc_server_reconnect_timeout_s``), saying nothing of what is kept.
GCS_LOST_S = 15.0
#: How long the driver waits for the coordinator's stats at the end of a run (an actor call
#: can hang once the GCS is gone, and Ray ends the process 60 s after that).
STATS_WAIT_S = 5.0


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            'executor = "ray" needs Ray: pip install "genir-eval[ray]" (or use the local '
            "executor, the default)"
        ) from None
    return ray


def _connect(ray: Any, address: str | None) -> None:
    """``ray.init`` of the cluster at ``address``, or :class:`ConfigError` saying why not
    and what to do (before any call): Ray Client missing for ``ray://``, no cluster running
    here for ``auto``, a cluster that does not answer."""
    given = f"--ray-address {address}" if address else "executor ray"
    try:
        with warnings.catch_warnings():
            # Ray Client warns about ports before raising; the error below says it all
            warnings.simplefilter("ignore")
            if address and address.startswith("ray://"):
                # the cluster's own settings; Ray Client's notice of them is not the user's
                logging.getLogger("ray.client_builder").setLevel(logging.WARNING)
                ray.init(address=address)
            else:
                ray.init(address=address, log_to_driver=False, include_dashboard=False)
    except Exception as error:  # noqa: BLE001 - Ray raises many kinds; each becomes one line
        text = " ".join(str(error).split())
        if "ray[client]" in text:
            raise ConfigError(
                f"{given}: a ray:// address needs Ray Client, which this Ray lacks: "
                'pip install "genir-eval[ray]" (it installs ray[client])'
            ) from None
        unreachable = isinstance(error, (ConnectionError, TimeoutError))
        if address == "auto" and unreachable:
            raise ConfigError(
                f"{given}: no Ray cluster is running on this machine; start one with "
                "`ray start --head`, or leave --ray-address out to start one for the run"
            ) from None
        if unreachable:
            raise ConfigError(
                f"{given}: cannot reach the Ray cluster ({text[:200]}); check the address "
                "and that the head node's port is reachable from here"
            ) from None
        raise ConfigError(
            f"{given}: Ray could not start: {type(error).__name__}: {text[:300]}"
        ) from None


class GcsWatch:
    """Whether the cluster's GCS (Ray's head process, ``host:port``) still accepts connections,
    asked every ``every_s`` from a thread; ``on_lost(seconds)`` is called once (from that
    thread) when it has refused them for ``lost_s``. A GCS that comes back in time (Ray's
    GCS fault tolerance restarts it) resets the count."""

    def __init__(
        self,
        address: str,
        on_lost: Callable[[float], None],
        *,
        every_s: float = 1.0,
        lost_s: float = GCS_LOST_S,
    ) -> None:
        host, _, port = address.rpartition(":")
        self.where = (host, int(port))
        self.on_lost = on_lost
        self.every_s = every_s
        self.lost_s = lost_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="genir-eval-gcs", daemon=True)

    def start(self) -> GcsWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _answers(self) -> bool:
        try:
            with socket.create_connection(self.where, timeout=min(2.0, self.every_s * 2)):
                return True
        except OSError:
            return False

    def _watch(self) -> None:
        since: float | None = None
        while not self._stop.wait(self.every_s):
            if self._answers():
                since = None
                continue
            now = time.monotonic()
            since = now if since is None else since
            if now - since >= self.lost_s:
                self.on_lost(now - since)
                return


class Coordinator:
    """The run's global request rate and its shard registry (run as a Ray actor).

    ``slot()`` returns the wall-clock time (``time.time()``) at which the caller may send:
    consecutive slots are ``60 / rpm * (1 + guard)`` apart when ``rpm`` is given, ``1 / rate``
    apart at the learned rate otherwise (unpaced until the replies show a limit).
    """

    def __init__(self, rpm: float | None, *, guard: float = SLOT_GUARD) -> None:
        self.rpm = rpm
        self.spacing = 60.0 / rpm * (1.0 + guard) if rpm else None
        self.learned = None if rpm else LearnedRate()
        self.next_at = 0.0
        self.slots = 0
        self.most_in_1s = 0  # the most slots handed out for any 1 s window
        self._recent: deque[float] = deque()
        self.workers: dict[int, list[dict[str, Any]]] = {}

    def slot(self) -> float:
        now = time.time()
        spacing = self.spacing
        if spacing is None:
            assert self.learned is not None
            rate = self.learned.pace()
            if rate is None:
                self.learned.note_send()
                return now
            spacing = 1.0 / rate
        at = max(now, self.next_at)
        self.next_at = at + spacing
        if self.learned is not None:
            # counted when it may go (this process's monotonic clock), for the opening's
            # growth and the probing of a pace sends wait for
            self.learned.on_send(time.monotonic() + (at - now), waited=at > now)
        self.slots += 1
        recent = self._recent
        recent.append(at)
        while recent[0] <= at - 1.0:
            recent.popleft()
        self.most_in_1s = max(self.most_in_1s, len(recent))
        return at

    def on_answer(self, info: RateLimitInfo | None) -> None:
        if self.learned is not None:
            self.learned.on_answer(info)

    def on_rate_limit(self, sent_wall: float, info: RateLimitInfo | None) -> None:
        if self.learned is not None:
            # the worker's wall clock to this process's monotonic clock
            sent_at = time.monotonic() - (time.time() - sent_wall)
            self.learned.on_rate_limit(sent_at=sent_at, info=info)

    def pid(self) -> int:
        """The coordinator's process (a test kills it to see the run go on)."""
        return os.getpid()

    def hello(self, shard: int, pid: int, node: str, window: int = 0) -> None:
        """A worker started (or restarted) ``shard`` of ``window``."""
        self.workers.setdefault(shard, []).append(
            {"pid": pid, "node": node, "window": window, "at": time.time()}
        )

    def where(self) -> dict[int, list[dict[str, Any]]]:
        return self.workers

    def stats(self) -> dict[str, Any]:
        if self.learned is None:
            return {
                "source": "configured",
                "rpm": self.rpm,
                "slots": self.slots,
                "most_in_1s": self.most_in_1s,
            }
        rate = self.learned.rate()
        stated = self.learned.stated
        return {
            "source": "learned",
            "rpm": None if rate is None else round(rate * 60.0, 1),
            "stated_rpm": None if stated is None else round(stated * 60.0, 1),
            "decreases": self.learned.decreases,
            "slots": self.slots,
            "most_in_1s": self.most_in_1s,
        }


class SharedRate:
    """A worker's side of the coordinator: the engine's request rate (``rate_gate``)."""

    def __init__(self, coordinator: Any, *, learned: bool) -> None:
        self.coordinator = coordinator
        self.learned = learned
        self.late = 0  # slots given up because they were reached too late

    async def acquire(self, *, first: bool = False) -> None:
        # A slot reached too late (a slow reply from the actor, a stalled event loop) is
        # given up rather than used: sent late, the request would share a 1 s window with
        # the slots after it. So every send goes within SLOT_LATE_S of its slot.
        while True:
            at = await self.coordinator.slot.remote()
            delay = at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if time.time() <= at + SLOT_LATE_S:
                return
            self.late += 1

    def on_answer(self, info: RateLimitInfo | None = None) -> None:
        if self.learned:
            self.coordinator.on_answer.remote(info)  # fire and forget: the reply is None

    def on_rate_limit(
        self, *, sent_at: float | None = None, info: RateLimitInfo | None = None
    ) -> None:
        if self.learned:
            sent_wall = time.time() - (time.monotonic() - sent_at) if sent_at else time.time()
            self.coordinator.on_rate_limit.remote(sent_wall, info)


def shards(sessions: Sequence[Session], n: int) -> list[list[Session]]:
    """``sessions`` in ``n`` contiguous shards of sizes differing by at most one (file
    order kept, so the merged labels come back in the local run's order)."""
    n = max(1, min(n, len(sessions)))
    size, extra = divmod(len(sessions), n)
    out: list[list[Session]] = []
    start = 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        out.append(list(sessions[start:end]))
        start = end
    return out


def _judge_shard(
    scenario: Scenario,
    sessions: list[Session],
    shard: int,
    n_shards: int,
    out: str,
    coordinator: Any,
    window: int = 0,
) -> Judged:
    """One worker's shard: the local judging step with a journal shard and the shared rate."""
    ray = _ray()
    started = time.time()
    coordinator.hello.remote(shard, os.getpid(), ray.util.get_node_ip_address(), window)
    learned = scenario.engine.rpm is None

    async def judge() -> Judged:
        return await judge_locally(
            scenario,
            sessions,
            Path(out),
            journal_tag=f"shard-{shard}-of-{n_shards}",
            rate_gate=lambda: SharedRate(coordinator, learned=learned),
        )

    judged = asyncio.run(judge())
    finished = time.time()
    for stats in judged.engine_stats:
        stats.update(shard=shard, window=window, shard_started=started, shard_finished=finished)
    return judged


def _add_stats(judge: Judge, stats: Any) -> None:
    """Add a worker's reply statistics (``JudgeStats``) into the driver's judge."""
    mine: Any = getattr(judge, "stats", None)
    if mine is None or stats is None:
        return
    for name, value in vars(stats).items():
        if isinstance(value, int) and isinstance(getattr(mine, name, None), int):
            setattr(mine, name, getattr(mine, name) + value)


class RayJudging:
    """The judging step of a run on a Ray cluster (see the module's docstring).

    ``async with RayJudging(scenario, out) as judging``: connects to the cluster at
    ``address`` (``"auto"``: the one ``ray start`` runs on this machine; ``None``: a running
    ``ray.init`` of this process, else a new local cluster, left running until the process
    exits) and starts the run's one coordinator; then ``await judging.judge(sessions)`` per
    window of sessions, in ``workers`` shards (default: the cluster's CPUs). Windows judged
    at the same time share the coordinator, so the request rate stays one budget. The
    driver opens no engine: the workers do every call.

    The workers' reply statistics are added into ``judges`` (the driver's judges, by id);
    on leaving, ``engine_stats`` holds each shard's engine stats, window by window (with the
    coordinator's stats for the whole run under ``request_rate.global``), and
    ``journal_paths`` the journal shards.
    """

    def __init__(
        self,
        scenario: Scenario,
        out: Path,
        *,
        address: str | None = None,
        workers: int | None = None,
        judges: Mapping[str, Judge] | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.scenario = scenario
        self.out = out
        self.address = address
        self.workers = workers
        self.judges = judges or {}
        self.say = say or (lambda message: None)
        self.engine_stats: list[dict[str, Any]] = []
        self.journal_paths: list[Path] = []
        self._judged: list[Judged | None] = []
        self._coordinator: Any = None
        self._task: Any = None
        self._n = 1
        self._watch: GcsWatch | None = None
        #: set (to the line saying so) when the cluster's GCS is lost
        self._gone: asyncio.Future[str] | None = None

    async def __aenter__(self) -> RayJudging:
        ray = _ray()
        if not ray.is_initialized():
            # Left running for the next run of this process; Ray shuts it down at exit.
            _connect(ray, self.address)
        self._n = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._watch_gcs(ray)
        name = f"genir-eval-coordinator-{os.getpid()}-{id(self)}"
        # A coordinator killed mid-run is restarted by Ray and the workers' calls to it are
        # retried, so the run goes on (its slot spacing starts again from the restart)
        self._coordinator = (
            ray.remote(num_cpus=0)(Coordinator)
            .options(name=name, max_restarts=-1, max_task_retries=-1)
            .remote(self.scenario.engine.rpm)
        )
        self._task = ray.remote(num_cpus=1, max_retries=SHARD_RETRIES, retry_exceptions=False)(
            _judge_shard
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def judge(self, sessions: Sequence[Session]) -> dict[str, list[Label]]:
        """Every judge over ``sessions`` on the cluster: judge id -> labels in session order."""
        assert self._coordinator is not None, "use RayJudging in an async with block"
        window = len(self._judged)
        self._judged.append(None)
        parts = shards(sessions, self._n)
        self.say(f"judging on Ray: {len(parts)} shards of {len(sessions)} sessions")
        refs = [
            self._task.remote(
                self.scenario, part, k, len(parts), str(self.out), self._coordinator, window
            )
            for k, part in enumerate(parts)
        ]
        try:
            results: list[Judged] = await self._results(refs)
        except BaseException as error:
            # the run stops (another window failed, or this one): no more calls for it
            for ref in refs:
                with contextlib.suppress(Exception):
                    _ray().cancel(ref)
            if isinstance(error, _ray().exceptions.RayError):
                raise ClusterError(self._lost(error)) from None
            raise
        labels: dict[str, list[Label]] = {spec.id: [] for spec in self.scenario.judges}
        for judged in results:
            for judge_id, judge_labels in judged.labels.items():
                labels[judge_id].extend(judge_labels)
            for judge_id, stats in judged.judge_stats.items():
                if judge_id in self.judges:
                    _add_stats(self.judges[judge_id], stats)
        self._judged[window] = Judged(
            labels={},
            engine_stats=[stats for judged in results for stats in judged.engine_stats],
            journal_paths=[path for judged in results for path in judged.journal_paths],
        )
        return labels

    def _watch_gcs(self, ray: Any) -> None:
        """Watch the cluster's GCS (not through Ray Client, whose server on the head node
        holds the connection): its loss ends the run with a line, before Ray ends the
        process with none."""
        if ray.util.client.ray.is_connected():
            return
        try:
            address = ray.get_runtime_context().gcs_address
        except Exception:  # noqa: BLE001 - an older Ray: no watch, Ray's own exit stays
            return
        loop = asyncio.get_running_loop()
        gone: asyncio.Future[str] = loop.create_future()
        self._gone = gone

        def lost(seconds: float) -> None:
            line = self._line(f"its GCS at {address} has refused connections for {seconds:.0f} s")

            def settle() -> None:
                if not gone.done():
                    gone.set_result(line)

            loop.call_soon_threadsafe(settle)

        self._watch = GcsWatch(address, lost).start()

    async def _results(self, refs: list[Any]) -> list[Judged]:
        """The shards' results, or :class:`ClusterError` as soon as the GCS is lost."""
        gathered: asyncio.Future[Any] = asyncio.gather(*refs)
        if self._gone is None:
            return list(await gathered)
        try:
            either: list[asyncio.Future[Any]] = [gathered, self._gone]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not gathered.done():
                gathered.cancel()
                # the shards' cancellation is this run's own doing: nothing to report
                gathered.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        if self._gone.done():
            raise ClusterError(self._gone.result())
        return list(gathered.result())

    def _lost(self, error: BaseException) -> str:
        """The line for a cluster that failed mid-run (a shard past its retries, a node or
        the coordinator lost for good): what happened, what is kept, how to resume."""
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        what = f"{type(error).__name__}: {lines[-1] if lines else 'no detail'}"
        return self._line(what)

    def _line(self, what: str) -> str:
        return (
            f"the Ray cluster failed during the run ({what[:300]}); the judgments finished so "
            f"far are kept in the journal shards in {self.out}: run again to resume (with any "
            "--ray-workers, or locally), no finished call is repeated"
        )

    async def aclose(self) -> None:
        """Take the coordinator's stats for the whole run, then stop it."""
        if self._coordinator is None:
            return
        ray = _ray()
        coordinator, self._coordinator = self._coordinator, None
        if self._watch is not None:
            self._watch.stop()
        rate: dict[str, Any] | None = None
        try:
            if self._gone is not None and self._gone.done():
                raise ClusterError("no stats from a cluster without its GCS")
            rate = await asyncio.wait_for(coordinator.stats.remote(), STATS_WAIT_S)
        except Exception:  # noqa: BLE001 - a run that fails keeps its own error
            rate = None
        finally:
            ray.kill(coordinator)
        for judged in self._judged:
            if judged is None:
                continue
            for stats in judged.engine_stats:
                if rate is not None:
                    stats = {
                        **stats,
                        "request_rate": {**stats.get("request_rate", {}), "global": rate},
                    }
                self.engine_stats.append(stats)
            for path in judged.journal_paths:
                if path not in self.journal_paths:
                    self.journal_paths.append(path)


async def judge_on_ray(
    scenario: Scenario,
    sessions: Sequence[Session],
    out: Path,
    *,
    address: str | None = None,
    workers: int | None = None,
    say: Any = None,
) -> Judged:
    """Judge ``sessions`` on a Ray cluster in one window (:class:`RayJudging`): the labels
    of every judge in session order, each shard's engine stats, the journal files used and
    the judges' reply statistics summed over the shards."""
    judges = {spec.id: make_judge(spec.name, **spec.options) for spec in scenario.judges}
    async with RayJudging(
        scenario, out, address=address, workers=workers, judges=judges, say=say
    ) as judging:
        labels = await judging.judge(sessions)
    return Judged(
        labels=labels,
        engine_stats=judging.engine_stats,
        journal_paths=judging.journal_paths,
        judge_stats={
            judge_id: stats
            for judge_id, judge in judges.items()
            if (stats := getattr(judge, "stats", None)) is not None
        },
    )
