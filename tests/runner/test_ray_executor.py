"""Runs on a local Ray cluster (``ray.init(num_cpus=2)``, one per module): the same rows as a
local run, one global request rate across workers, and a killed worker's shard resumed from
its journal. Skipped when Ray is not installed (``pip install "genir-eval[ray]"``)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from genir_eval.runner.run import WINDOW, Overrides, run_scenario
from genir_eval.runner.scenario import LlmSpec, load_scenario
from genir_eval.testing import FakeLLMServer

pytestmark = pytest.mark.ray

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
URGE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"
KEY = "sk-test-fake-key"  # the fake server's key, given to the workers' environment
# Fields that time a run rather than describe its results.
TIMING = {"duration_s", "elapsed_s", "started_at", "first_send_s", "latency_s"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"OPENAI_API_KEY": KEY}},
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def _rows(folder: Path, name: str) -> list[dict[str, Any]]:
    with open(folder / name, encoding="utf-8") as handle:
        return [_untimed(json.loads(line)) for line in handle if line.strip()]


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _same_outputs(local: Path, on_ray: Path) -> None:
    for name in ("links.jsonl", "turns.jsonl", "sessions.jsonl"):
        expected, got = _rows(local, name), _rows(on_ray, name)
        assert got == expected, name
        assert expected  # a comparison of two empty tables would prove nothing
    meta_local = _untimed(json.loads((local / "meta.json").read_text(encoding="utf-8")))
    meta_ray = _untimed(json.loads((on_ray / "meta.json").read_text(encoding="utf-8")))
    assert meta_ray == meta_local


@pytest.mark.parametrize(
    "scenario_path",
    [ROOT / "scenarios" / "demo-offline.toml", ROOT / "scenarios" / "urge-offline.toml"],
    ids=["demo", "urge"],
)
def test_ray_run_writes_the_local_runs_rows(
    cluster: Any, scenario_path: Path, tmp_path: Path, shared: Any
) -> None:
    if "urge" in scenario_path.name:
        shared(URGE, "the URGE sample")
    scenario = load_scenario(scenario_path)
    scenario = replace(scenario, engine=replace(scenario.engine, cache=None))
    local = run_scenario(scenario, out_dir=tmp_path / "local")
    on_ray = run_scenario(
        scenario,
        out_dir=tmp_path / "ray",
        overrides=Overrides(executor="ray", ray_workers=2),
    )
    _same_outputs(tmp_path / "local", tmp_path / "ray")
    # two shards really ran, each with its own journal
    shards = sorted(p.name for p in (tmp_path / "ray").glob("journal.shard-*.sqlite"))
    assert shards == ["journal.shard-0-of-2.sqlite", "journal.shard-1-of-2.sqlite"]
    assert [e["shard"] for e in on_ray.info["engines"]] == [0, 1]
    assert sum(e["calls"] for e in on_ray.info["engines"]) == sum(
        e["calls"] for e in local.info["engines"]
    )


def _llm_scenario(server: FakeLLMServer, **engine: Any) -> Any:
    scenario = load_scenario(ROOT / "scenarios" / "demo-offline.toml")
    llm = LlmSpec(provider="openai", model="fake-model", base_url=server.openai_base_url)
    judges = tuple(replace(spec, llm=llm) for spec in scenario.judges[:1])
    return replace(scenario, judges=judges, engine=replace(scenario.engine, cache=None, **engine))


def _finished(journal: Path) -> int:
    """Judgments a journal shard holds as finished (0 before it exists)."""
    if not journal.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT count(*) FROM journal WHERE status = 'ok'").fetchone()[0])
    except sqlite3.Error:
        return 0  # not created yet


def _link_reply(request: Any) -> str:
    return '{"O": 2, "M": 2, "T": 1}'  # the DNA judge's overall, match, trust


@pytest.mark.parametrize("window", [WINDOW, 3], ids=["one-window", "three-windows"])
def test_global_request_rate_holds_across_workers(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # 300 rpm = 5 requests a second for the whole cluster: two workers sharing it, not 5 each;
    # with windows of 3 sessions, two windows' shards in flight share it too.
    with FakeLLMServer(reply=_link_reply, latency=0.01) as server:
        scenario = _llm_scenario(server, rpm=300, concurrency=8)
        run = run_scenario(
            scenario,
            out_dir=tmp_path / "run",
            overrides=Overrides(executor="ray", ray_workers=2),
            window=window,
        )
    stats = server.stats
    assert stats.total >= 20  # enough requests to fill several windows
    rates = [e["request_rate"] for e in run.info["engines"]]
    assert all(r["source"] == "shared" and r["global"]["rpm"] == 300 for r in rates)
    shared = rates[0]["global"]
    # The budget the coordinator handed out: at most 5 slots in any 1 s window, exactly;
    # every request sent took one (slots reached too late are given up, not used).
    assert shared["most_in_1s"] <= 5
    assert shared["slots"] >= stats.total
    # What the server saw: 5 a second over the run, not 5 per worker. A request's way from
    # its slot to the server varies (a worker opening a connection, a busy machine), so a
    # 1 s window of arrivals may catch one late request with the next slot's.
    arrivals = sorted(stats.arrivals)
    assert (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) <= 5.0
    assert stats.max_in_window(1.0) <= 5 + 1


def test_a_killed_worker_repeats_no_finished_call(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    concurrency = 2
    with FakeLLMServer(reply=_link_reply, latency=0.2) as server:
        scenario = _llm_scenario(server, concurrency=concurrency)
        out = tmp_path / "run"
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["run"] = run_scenario(
                    scenario, out_dir=out, overrides=Overrides(executor="ray", ray_workers=2)
                )
            except BaseException as error:  # noqa: BLE001 - reported by the assertions
                result["error"] = error

        thread = threading.Thread(target=run)
        thread.start()
        # Kill shard 0's worker once its journal holds a few finished judgments.
        shard0 = out / "journal.shard-0-of-2.sqlite"
        done = 0
        deadline = time.monotonic() + 120
        while done < 4 and time.monotonic() < deadline and thread.is_alive():
            time.sleep(0.05)
            done = _finished(shard0)
        names = [n for n in ray.util.list_named_actors() if n.startswith("genir-eval-")]
        assert done >= 4 and names, "the Ray run never got going"
        coordinator = ray.get_actor(names[0])
        where = ray.get(coordinator.where.remote())
        killed = where[0][0]["pid"]
        os.kill(killed, signal.SIGKILL)  # mid-shard: shard 0 still has judgments to do
        thread.join(300)
        assert not thread.is_alive()
        assert "error" not in result, result.get("error")
        asked = dict(server.stats.by_prompt)
        local = run_scenario(scenario, out_dir=tmp_path / "local")
    run = result["run"]
    # Ray ran shard 0 again, in another process, and nothing is missing
    assert run.info["judges"][0]["missing"] == 0, run.info["failures"][:3]
    assert _rows(out, "links.jsonl") == _rows(tmp_path / "local", "links.jsonl")
    # Every judgment was asked for; only those in flight when the worker died were asked
    # twice (at most the worker's concurrency): what it had finished came from its journal.
    assert len(asked) == local.info["provider_calls"]
    assert sum(count - 1 for count in asked.values()) <= concurrency
    assert run.info["cache"]["resumed"] >= done


@pytest.mark.parametrize("concurrency", [2, 4])
def test_a_worker_killed_while_its_journal_waits_repeats_only_its_places(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    """A worker killed while its journal's commits wait (here: the test holds the journal
    shard's write lock, as another process or a slow disk may) repeats at most
    ``concurrency`` judgments: a judgment holds its place from its first call until its
    label is committed, so the worker stops sending instead of piling up replies it has
    paid for and not journaled (the red team saw 94 calls repeated, not the 16 in flight)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(reply=_link_reply, latency=0.05) as server:
        scenario = _llm_scenario(server, concurrency=concurrency)
        out = tmp_path / "run"
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["run"] = run_scenario(
                    scenario, out_dir=out, overrides=Overrides(executor="ray", ray_workers=2)
                )
            except BaseException as error:  # noqa: BLE001 - reported by the assertions
                result["error"] = error

        thread = threading.Thread(target=run)
        thread.start()
        shard0 = out / "journal.shard-0-of-2.sqlite"
        deadline = time.monotonic() + 120
        while _finished(shard0) < 2 and time.monotonic() < deadline and thread.is_alive():
            time.sleep(0.02)
        assert _finished(shard0) >= 2, "the Ray run never got going"
        lock = sqlite3.connect(shard0, isolation_level=None, timeout=30)
        try:
            lock.execute("BEGIN IMMEDIATE")  # the worker's commits now wait for this
            committed = _finished(shard0)
            # long enough for the worker to send the rest of its shard had nothing held it
            # (15 links at 0.05 s a call, ``concurrency`` at a time, well under 1.5 s)
            time.sleep(1.5)
            names = [n for n in ray.util.list_named_actors() if n.startswith("genir-eval-")]
            coordinator = ray.get_actor(names[0])
            killed = ray.get(coordinator.where.remote())[0][0]["pid"]
            os.kill(killed, signal.SIGKILL)
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        thread.join(300)
        assert not thread.is_alive()
        assert "error" not in result, result.get("error")
        asked = dict(server.stats.by_prompt)
    run = result["run"]
    assert run.info["judges"][0]["missing"] == 0, run.info["failures"][:3]
    assert len(asked) == run.info["judges"][0]["labels"]
    repeated = sum(count - 1 for count in asked.values())
    # at most the killed worker's places (well-formed replies: one call a judgment) ...
    assert repeated <= concurrency
    # ... and the shard did have more to do than that when the worker was killed
    assert run.info["cache"]["resumed"] >= committed


def test_learned_rate_is_one_budget_across_workers(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # No rpm given: the server allows 600 a minute (10/s) and says so in its headers; the
    # coordinator learns it once for both workers, so few requests meet a 429.
    with FakeLLMServer(
        reply=_link_reply, latency=0.01, rate_limit_rpm=600, rate_limit_headers=True
    ) as server:
        scenario = _llm_scenario(server, concurrency=8)
        run = run_scenario(
            scenario, out_dir=tmp_path / "run", overrides=Overrides(executor="ray", ray_workers=2)
        )
    shared = run.info["engines"][0]["request_rate"]["global"]
    assert shared["source"] == "learned" and shared["stated_rpm"] == 600.0
    assert run.info["judges"][0]["missing"] == 0
    # Before the first reply told the limit both workers sent unpaced (8 in flight each,
    # against 10 tokens); after it, the shared pace kept below the limit.
    assert server.stats.rate_limited <= 16


def test_driver_opens_no_engine_and_keeps_two_windows_in_flight(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    constructed: list[str] = []

    import genir_eval.llm.engine as engine_module

    class CountedEngine(engine_module.Engine):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            constructed.append("engine")
            super().__init__(*args, **kwargs)

    # the driver's engines, all opened through llm.config.open_engine (the workers are other
    # processes, with the real class)
    monkeypatch.setattr(engine_module, "Engine", CountedEngine)
    # One worker per window on two CPUs, 0.4 s a call, one call at a time: windows of 3 demo
    # sessions (15, 9 and 5 links) each take seconds, long enough to see them overlap.
    with FakeLLMServer(reply=_link_reply, latency=0.4) as server:
        scenario = _llm_scenario(server, concurrency=1)
        run = run_scenario(
            scenario,
            out_dir=tmp_path / "ray",
            overrides=Overrides(executor="ray", ray_workers=1),
            window=3,
        )
        assert constructed == []
        local = run_scenario(
            scenario, out_dir=tmp_path / "local", overrides=Overrides(concurrency=8), window=3
        )
    assert constructed == ["engine"]  # the count does see a local run's engine
    _same_outputs(tmp_path / "local", tmp_path / "ray")
    assert run.info["provider_calls"] == local.info["provider_calls"] == 29
    # no journal (or any file) of a driver engine: only the workers' journal shard
    assert sorted(p.name for p in (tmp_path / "ray").glob("journal*.sqlite")) == [
        "journal.shard-0-of-1.sqlite"
    ]
    spans: dict[int, tuple[float, float]] = {}
    for stats in run.info["engines"]:
        start, end = spans.get(stats["window"], (math.inf, -math.inf))
        spans[stats["window"]] = (
            min(start, stats["shard_started"]),
            max(end, stats["shard_finished"]),
        )
    assert sorted(spans) == [0, 1, 2]
    # the second window's shard ran while the first's was still judging ...
    assert spans[1][0] < spans[0][1]
    # ... and the third waited for the first to be merged: never more than two in flight
    assert spans[2][0] >= spans[0][1]


def test_a_killed_coordinator_is_restarted_and_the_run_goes_on(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's coordinator (the one request-rate budget) killed with SIGKILL mid-run: Ray
    restarts it, the workers' calls to it are retried, and the run ends with every label and
    no call asked twice (the workers were not touched)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(reply=_link_reply, latency=0.2) as server:
        scenario = _llm_scenario(server, concurrency=2, rpm=600)
        out = tmp_path / "run"
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["run"] = run_scenario(
                    scenario, out_dir=out, overrides=Overrides(executor="ray", ray_workers=2)
                )
            except BaseException as error:  # noqa: BLE001 - reported by the assertions
                result["error"] = error

        thread = threading.Thread(target=run)
        thread.start()
        shard0 = out / "journal.shard-0-of-2.sqlite"
        deadline = time.monotonic() + 120
        while _finished(shard0) < 4 and time.monotonic() < deadline and thread.is_alive():
            time.sleep(0.05)
        names = [n for n in ray.util.list_named_actors() if n.startswith("genir-eval-")]
        assert names, "the Ray run never got going"
        coordinator = ray.get_actor(names[0])
        pid = ray.get(coordinator.pid.remote())
        os.kill(pid, signal.SIGKILL)
        thread.join(300)
        assert not thread.is_alive()
        assert "error" not in result, result.get("error")
        asked = dict(server.stats.by_prompt)
    run = result["run"]
    assert run.info["judges"][0]["missing"] == 0, run.info["failures"][:3]
    assert all(count == 1 for count in asked.values())
    assert len(asked) == run.info["judges"][0]["labels"]
    # the stats come from the restarted coordinator: it handed out only the later slots
    shared = run.info["engines"][0]["request_rate"]["global"]
    assert 0 < shared["slots"] < len(asked)


@pytest.mark.parametrize(("first", "then"), [(2, 1), (1, 2), (None, 2)], ids=str)
def test_a_resume_with_another_worker_count_pays_nothing_again(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: int | None, then: int
) -> None:
    """The red team re-ran a Ray run with another --ray-workers and 138 of 199 calls were
    asked again: the new shard files were empty. The earlier layout's journals (Ray shards,
    or a local run's journal.sqlite when ``first`` is None) now answer the resume."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(reply=_link_reply) as server:
        scenario = _llm_scenario(server)
        out = tmp_path / "run"
        executor_first = "local" if first is None else "ray"
        run_scenario(
            scenario, out_dir=out, overrides=Overrides(executor=executor_first, ray_workers=first)
        )
        paid = server.stats.total
        assert paid > 0
        resumed = run_scenario(
            scenario, out_dir=out, overrides=Overrides(executor="ray", ray_workers=then)
        )
        assert server.stats.total == paid  # not one call again
    assert resumed.info["provider_calls"] == 0
    assert resumed.info["cache"]["resumed"] > 0 and resumed.info["status"]["ok"]
