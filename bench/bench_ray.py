"""Judgments per second of a run on a local Ray cluster with 1 and 2 workers, and locally.

One LLM judge (``link_usefulness.dna`` through the ``openai`` provider) over the demo
fixtures' sessions repeated ``--copies`` times (new session ids), against
:class:`~genir_eval.testing.FakeLLMServerProcess` (its own process, latency L), with no cache
and a fresh output folder per run. Ray runs on this machine (``ray.init(num_cpus=2)``).
Prints, per run: provider calls, the judging step's throughput (calls over the slowest
shard's engine time, from its first request to its last reply) and the whole run's (calls
over the run's wall time: Ray's start-up of the workers, aggregation, meta-evaluation and
outputs included).

    python bench/bench_ray.py                    # 20 copies (160 sessions), L = 0.1 s, C = 64
    python bench/bench_ray.py --copies 40 --latency 0.2
    python bench/bench_ray.py --copies 40 --window 80   # 4 windows, two in flight at a time

    python bench/bench_ray.py --kill-trials 5 --copies 5 --concurrency 16 --hold-journal 1

``--kill-trials N`` measures paid work repeated instead: N Ray runs with 2 workers, each
killing shard 0's worker (SIGKILL) once its journal shard holds a random 2-12 judgments
(seeded), optionally after holding that journal's write lock for ``--hold-journal`` seconds
(as another process writing the file, or a slow disk, makes the worker's commits wait);
it prints, per trial, the calls the server was asked twice against the bound the design
states (the killed worker's places: ``--concurrency`` judgments of one call each).

A Ray run also prints its shards' throughput from the first shard's start to the last one's
end (Ray's start of the worker processes included); with several windows that is its
judging time (the windows overlap, so no one engine's time covers them).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from genir_eval.ingest import load_sessions
from genir_eval.runner.run import WINDOW, Overrides, run_scenario
from genir_eval.runner.scenario import LlmSpec, load_scenario
from genir_eval.testing import FakeLLMServerProcess

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-fake-key"


def dna_reply(request: Any) -> str:
    return '{"O": 2, "M": 2, "T": 1}'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64, help="in flight per worker")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument(
        "--window", type=int, default=WINDOW, help=f"sessions per window (default {WINDOW})"
    )
    parser.add_argument("--kill-trials", type=int, default=0, help="runs with a worker killed")
    parser.add_argument(
        "--hold-journal", type=float, default=0.0, help="seconds the journal waits first"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import ray

    os.environ["OPENAI_API_KEY"] = KEY
    demo = load_sessions(ROOT / "fixtures" / "demo_sessions.csv").sessions
    sessions = [
        replace(session, session_id=f"{session.session_id}-copy{k}")
        for k in range(args.copies)
        for session in demo
    ]
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"OPENAI_API_KEY": KEY}},
    )
    try:
        with FakeLLMServerProcess(
            reply=dna_reply, latency=args.latency, record_prompts=False
        ) as server:
            scenario = load_scenario(ROOT / "scenarios" / "demo-offline.toml")
            llm = LlmSpec(provider="openai", model="fake-model", base_url=server.openai_base_url)
            scenario = replace(
                scenario,
                judges=tuple(replace(spec, llm=llm) for spec in scenario.judges[:1]),
                engine=replace(scenario.engine, cache=None, concurrency=args.concurrency),
            )
            if args.kill_trials:
                kill_trials(ray, server, scenario, sessions, args)
                return 0
            print(
                f"{len(sessions)} sessions in windows of {args.window}, L={args.latency}s, "
                f"C={args.concurrency} per worker, fake server in its own process, "
                "ray.init(num_cpus=2)"
            )
            runs: list[tuple[str, Overrides]] = [("local", Overrides())]
            runs += [
                (f"ray, {n} worker{'s' if n > 1 else ''}", Overrides(executor="ray", ray_workers=n))
                for n in (int(w) for w in args.workers.split(","))
            ]
            for label, overrides in runs:
                server.reset_stats()
                with tempfile.TemporaryDirectory() as tmp:
                    wall0 = time.perf_counter()
                    run = run_scenario(
                        scenario,
                        out_dir=Path(tmp),
                        overrides=overrides,
                        sessions=sessions,
                        window=args.window,
                    )
                    wall = time.perf_counter() - wall0
                calls = server.stats().answered_ok
                engines = run.info["engines"]
                judging = max(e["elapsed_s"] - (e["first_send_s"] or 0.0) for e in engines)
                span = f"slowest engine {judging:.2f}s from first request to last reply"
                if "shard_started" in engines[0]:
                    windows = len({e["window"] for e in engines})
                    shards = max(e["shard_finished"] for e in engines) - min(
                        e["shard_started"] for e in engines
                    )
                    span += (
                        f"; {windows} window{'s' if windows > 1 else ''}, shards "
                        f"{calls / shards:.1f} judgments/s from the first's start to the last's "
                        f"end, {shards:.2f}s"
                    )
                    if windows > 1:
                        judging = shards  # no one engine's time covers the windows
                print(
                    f"{label}: {calls} calls; judging {calls / judging:.1f} judgments/s "
                    f"({span}); "
                    f"whole run {calls / wall:.1f} judgments/s ({wall:.2f}s); "
                    f"missing labels {run.info['judges'][0]['missing']}"
                )
    finally:
        ray.shutdown()
    return 0


def _journaled(path: Path) -> int:
    with contextlib.suppress(sqlite3.Error):
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT count(*) FROM journal WHERE status='ok'").fetchone()[0])
    return 0


def kill_trials(ray: Any, server: Any, scenario: Any, sessions: list[Any], args: Any) -> None:
    """``--kill-trials``: repeated calls when a worker is killed mid-shard (see the module)."""
    pick = random.Random(args.seed)
    print(
        f"{len(sessions)} sessions, 2 workers, C={args.concurrency} per worker, "
        f"L={args.latency}s, journal held {args.hold_journal}s before each kill"
    )
    for trial in range(args.kill_trials):
        server.reset_stats()
        after = pick.randint(2, 12)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            done: dict[str, Any] = {}

            def run(out: Path = out, done: dict[str, Any] = done) -> None:
                try:
                    done["run"] = run_scenario(
                        scenario,
                        out_dir=out,
                        overrides=Overrides(executor="ray", ray_workers=2),
                        sessions=sessions,
                        window=args.window,
                    )
                except Exception as error:  # noqa: BLE001 - printed below
                    done["error"] = error

            thread = threading.Thread(target=run)
            thread.start()
            shard0 = out / "journal.shard-0-of-2.sqlite"
            while _journaled(shard0) < after and thread.is_alive():
                time.sleep(0.01)
            lock = sqlite3.connect(shard0, isolation_level=None, timeout=60)
            try:
                if args.hold_journal:
                    lock.execute("BEGIN IMMEDIATE")
                    time.sleep(args.hold_journal)
                names = [n for n in ray.util.list_named_actors() if n.startswith("genir-eval-")]
                where = ray.get(ray.get_actor(names[0]).where.remote())
                os.kill(where[0][0]["pid"], signal.SIGKILL)
            finally:
                if lock.in_transaction:
                    lock.execute("ROLLBACK")
                lock.close()
            thread.join()
        if "run" not in done:
            print(f"trial {trial + 1}: the run failed: {done.get('error')}")
            continue
        # every reply is well formed: one call a judgment, and the copies' prompts are alike,
        # so the calls asked twice are the calls beyond the judgments
        calls = server.stats().total
        judged = done["run"].info["judges"][0]
        print(
            f"trial {trial + 1}: killed after {after} journaled: {calls - judged['labels']} "
            f"calls asked twice (bound {args.concurrency}), {calls} calls for "
            f"{judged['labels']} judgments, missing {judged['missing']}"
        )


if __name__ == "__main__":
    sys.exit(main())
