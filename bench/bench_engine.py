"""Throughput of the judging engine against the local fake server.

Runs N judgments through the ``openai`` provider (the official SDK over real sockets) against
:class:`~genir_eval.testing.FakeLLMServerProcess` (a separate process, so its CPU is not
counted) with latency L, concurrency C and a rate limit R (rpm), without and with injected
faults (500, 503 and dropped connections by default), with the cache and the journal on (a
fresh file per run). In the ``learned*`` cases the engine is not given R and the server
enforces it (429 + Retry-After, with ``x-ratelimit-*`` headers in ``learned-headers``). In
``sporadic`` there is no limit at all, given or enforced, and 5% of the calls fail as on the
peer harness (``../shared/peerbench``): 500s, dropped connections and 429s with Retry-After
0.25 s in equal parts; the engine must take those 429s for noise. Prints achieved
throughput, the bound (min(R/60, C/L), or C/L where no limit is enforced or given), their
ratio (and the provider calls per second against the same bound: retries of faults spend
the rate too), provider calls, failures, judgments lost, the share of calls refused with a
429 after the first 10 s, and client CPU per judgment; ``--repeat K`` runs each case K
times and prints the range of its ratio. ``--cpu-hog`` runs a busy loop in another process
beside it (the other core busy), killed at the end. ``--ceiling`` also runs, in the cases
without a limit, the least a client can do on the same server and faults: a bare aiohttp
loop (no SDK, no cache, journal or backoff; it retries at once, a 429 after its
Retry-After), whose ratio is what this harness allows on this machine, and prints the
engine's ratio as a share of it.

    python bench/bench_engine.py                      # N=2000, L=0.2, C=64, R=12000
    python bench/bench_engine.py --concurrency 256
    python bench/bench_engine.py --rpm 1000000 --concurrency 256   # the CPU ceiling
    python bench/bench_engine.py --cases learned --n 6000          # 30 s at the limit
    python bench/bench_engine.py --cases configured --repeat 5 --cpu-hog
    python bench/bench_engine.py --cases sporadic --repeat 3 --ceiling
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from genir_eval.llm import (
    Cache,
    Completion,
    Engine,
    GenerateConfig,
    Journal,
    JudgmentKey,
    Message,
    Request,
)
from genir_eval.llm.config import EngineConfig
from genir_eval.llm.limits import Send
from genir_eval.llm.providers.factory import CALLS_PER_POOL
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.testing import FakeLLMServerProcess, FaultPlan


def _request(i: int) -> Request:
    return Request(
        key=JudgmentKey(f"s{i // 20}", i % 20, f"link{i}", "bench", "v1"),
        messages=(
            Message("system", "You judge whether a cited link is useful. Answer with JSON."),
            Message(
                "user", f"Query: example query {i // 20}\nLink: https://example.org/{i}\nUseful?"
            ),
        ),
        config=GenerateConfig(model="bench-model", max_tokens=16),
        task="bench.link",
    )


async def _run(
    args: argparse.Namespace, server: FakeLLMServerProcess, storage: Path | None, rpm: float | None
) -> dict[str, Any]:
    provider = OpenAIProvider(
        model="bench-model",
        base_url=server.openai_base_url,
        api_key=server.api_key,
        # as every engine of genir-eval gets them (make_provider)
        pool_shards=max(1, args.concurrency // CALLS_PER_POOL),
    )
    engine = Engine(
        provider,
        EngineConfig(concurrency=args.concurrency, rpm=rpm, max_attempts=8, timeout=10),
        cache=Cache(storage / "cache.sqlite") if storage else None,
        journal=Journal(storage / "cache.sqlite") if storage else None,
        backoff_base=0.1,
        backoff_max=2.0,
    )
    lost = 0

    async def judge(i: int) -> bool:
        request = _request(i)
        result = await engine.complete(request)
        await engine.record(request, result, value={"label": getattr(result, "text", None)})
        return isinstance(result, Completion)

    # when each request left the client, as its connection reported it: the client's own
    # count, beside the server's count of arrivals (which a stalled server bunches)
    departures: list[float] = []
    depart = Send.depart

    def departed(send: Send, at: float) -> None:
        departures.append(at)
        depart(send, at)

    Send.depart = departed  # type: ignore[method-assign]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        async with engine:
            ok = await asyncio.gather(*(judge(i) for i in range(args.n)))
            stats = engine.stats()
    finally:
        Send.depart = depart  # type: ignore[method-assign]
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if storage:
        with Journal(storage / "cache.sqlite") as journal:
            lost = args.n - journal.counts()["ok"]
    return {
        "wall": wall,
        "cpu": cpu,
        "ok": sum(ok),
        "stats": stats,
        "lost": lost,
        "departed": _most_in(sorted(departures), 1.0),
    }


def _most_in(times: list[float], window_s: float) -> int:
    """The most of the sorted ``times`` within any ``window_s``."""
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= window_s:
            first += 1
        most = max(most, last - first + 1)
    return most


_CASES = {
    # name: (the engine knows the rate, the server enforces it, rate-limit headers, faults)
    "configured": (True, False, False, False),
    "faults": (True, False, False, True),
    "learned": (False, True, False, False),
    "learned-headers": (False, True, True, False),
    "learned-faults": (False, True, False, True),
    "sporadic": (False, False, False, True),
}
# the faults of the sporadic case: the peer harness's (a third of them 429s)
_SPORADIC_KINDS = ("server_error", "drop", "rate_limit")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rpm", type=float, default=12000)
    parser.add_argument("--fault-rate", type=float, default=0.05)
    parser.add_argument("--retry-after", type=float, default=0.25, help="seconds in the 429s")
    parser.add_argument(
        "--fault-kinds",
        default="server_error,unavailable,drop",
        help="comma-separated fault kinds (default: 500, 503, dropped connections)",
    )
    parser.add_argument(
        "--cases",
        default=",".join(_CASES),
        help=f"comma-separated cases among {', '.join(_CASES)}",
    )
    parser.add_argument("--no-storage", action="store_true", help="run without cache and journal")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each case (a summary line per case)"
    )
    parser.add_argument(
        "--cpu-hog", action="store_true", help="a busy loop in another process beside the runs"
    )
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="in the cases without a limit, also time a bare aiohttp client (the harness's ceiling)",
    )
    args = parser.parse_args(argv)

    bound = min(args.rpm / 60.0, args.concurrency / args.latency)
    print(
        f"N={args.n} L={args.latency}s C={args.concurrency} R={args.rpm:g} rpm "
        f"-> bound min(R/60, C/L) = {bound:.1f} judgments/s "
        f"(C/L = {args.concurrency / args.latency:.1f} without a limit)"
        + ("; a CPU hog beside it" if args.cpu_hog else "")
    )
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.cpu_hog else None
    try:
        for case in args.cases.split(","):
            _cases(args, case)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    return 0


def _cases(args: argparse.Namespace, case: str) -> None:
    """Run ``case`` ``--repeat`` times; with more than one run, print the range."""
    knows, enforces = _CASES[case][:2]
    limited = knows or enforces
    bound = (
        min(args.rpm / 60.0, args.concurrency / args.latency)
        if limited
        else (args.concurrency / args.latency)
    )
    ratios: list[float] = []
    most: list[int] = []
    ceilings: list[float] = []
    for _ in range(args.repeat):
        ratio, arrived = _case(args, case, bound)
        ratios.append(ratio)
        most.append(arrived)
        if args.ceiling and not limited:
            ceiling = _ceiling(args, case, bound)
            ceilings.append(ceiling)
            print(f"  the engine's ratio is {ratio / ceiling:.3f} of the bare client's")
    if args.repeat > 1:
        print(
            f"{case}: {args.repeat} runs, ratio min {min(ratios):.3f} median "
            f"{statistics.median(ratios):.3f} max {max(ratios):.3f}; max requests in any "
            f"1 s over the runs {max(most)} (R/60 = {args.rpm / 60:g})"
        )
        if ceilings:
            print(
                f"{case}, bare client: ratio min {min(ceilings):.3f} median "
                f"{statistics.median(ceilings):.3f} max {max(ceilings):.3f}"
            )


def _plan(args: argparse.Namespace, case: str) -> FaultPlan:
    faulty = _CASES[case][3]
    kinds = _SPORADIC_KINDS if case == "sporadic" else tuple(args.fault_kinds.split(","))
    return FaultPlan(
        rate=args.fault_rate if faulty else 0.0,
        kinds=kinds,
        retry_after=args.retry_after,
        seed=1,
    )


def _ceiling(args: argparse.Namespace, case: str, bound: float) -> float:
    """The bare client's run of ``case`` (one without a limit) on a server of its own with
    the same latency and faults: print its line, return its ratio."""
    with FakeLLMServerProcess(
        latency=args.latency, faults=_plan(args, case), record_prompts=False
    ) as server:
        wall, calls = asyncio.run(_bare(args, server))
    ratio = args.n / wall / bound
    print(
        f"  bare aiohttp client, same server and faults: {args.n / wall:.1f} judgments/s, "
        f"ratio {ratio:.3f}; wall {wall:.2f}s; provider calls {calls}"
    )
    return ratio


async def _bare(args: argparse.Namespace, server: FakeLLMServerProcess) -> tuple[float, int]:
    """``args.n`` judgments, ``args.concurrency`` at once, each POSTed until it is answered:
    again at once after an error, after its Retry-After after a 429. Wall time and calls."""
    url = f"{server.openai_base_url}/chat/completions"
    headers = {"Authorization": f"Bearer {server.api_key}"}
    slots = asyncio.Semaphore(args.concurrency)
    calls = 0

    async def judge(session: aiohttp.ClientSession, i: int) -> None:
        nonlocal calls
        request = _request(i)
        body = {
            "model": request.config.model,
            "max_tokens": request.config.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        while True:
            wait = None
            async with slots:
                calls += 1
                try:
                    async with session.post(url, json=body, headers=headers) as response:
                        await response.read()
                        if response.status == 200:
                            return
                        wait = response.headers.get("retry-after")
                except aiohttp.ClientError:
                    pass
            if wait is not None:
                await asyncio.sleep(float(wait))

    connector = aiohttp.TCPConnector(limit=args.concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        start = time.perf_counter()
        await asyncio.gather(*(judge(session, i) for i in range(args.n)))
        return time.perf_counter() - start, calls


def _case(args: argparse.Namespace, case: str, bound: float) -> tuple[float, int]:
    """Run one case once, print its line; return its ratio and its most arrivals in 1 s."""
    knows, enforces, headers, _faulty = _CASES[case]
    plan = _plan(args, case)
    with FakeLLMServerProcess(
        latency=args.latency,
        faults=plan,
        record_prompts=False,
        rate_limit_rpm=args.rpm if enforces else None,
        rate_limit_headers=headers,
    ) as server:
        with tempfile.TemporaryDirectory() as tmp:
            out = _run_sync(
                args,
                server,
                None if args.no_storage else Path(tmp),
                args.rpm if knows else None,
            )
        served = server.stats()
    throughput = args.n / out["wall"]
    calls_ratio = served.total / out["wall"] / bound
    stats = out["stats"]
    rate = stats["request_rate"]
    learned = (
        f"; learned rate {rate['rpm']} rpm (stated {rate['stated_rpm']}, "
        f"{rate['decreases']} decreases; {rate['taken_for_noise']} of {rate['rate_limited']} "
        "429s taken for noise)"
        if rate["source"] == "learned"
        else ""
    )
    stall = (
        f"longest client stall {rate['max_loop_lag_s']:.3f}s, longest grant-to-departure "
        f"{rate['max_departure_delay_s']:.3f}s; "
        if rate["source"] == "configured"
        else ""
    )
    start = min(served.arrivals)
    late = [t for t in served.arrivals if t >= start + 10.0]
    refused_late = len(late) - sum(1 for t in served.admitted if t >= start + 10.0)
    late_429 = (
        f"; refused by the limit after the first 10 s: {refused_late} of {len(late)} calls "
        f"({refused_late / len(late):.1%})"
        if late and enforces
        else ""
    )
    print(
        f"{case} (engine {'given' if knows else 'not given'} the rate, faults "
        f"{plan.rate:.0%}): {throughput:.1f} judgments/s, ratio {throughput / bound:.3f} "
        f"(provider calls {served.total / out['wall']:.1f}/s = {calls_ratio:.3f} of the bound: "
        "retries spend the rate too); "
        f"wall {out['wall']:.2f}s; provider calls {served.total} (429s from the server's "
        f"limit {served.rate_limited}, faults injected {sum(served.by_fault.values())}, "
        f"retries {stats['retries']}); ok {out['ok']}/{args.n}, "
        f"failures {stats['failures'] or 0}, lost {out['lost']}; "
        f"client CPU {out['cpu']:.2f}s = {1000 * out['cpu'] / args.n:.2f} ms/judgment; "
        f"max in flight at server {served.max_in_flight}; max requests in any 1 s: "
        f"{served.max_in_window(1.0)} arrived, {served.max_in_window(1.0, admitted=True)} "
        f"admitted, {out['departed']} left the client (R/60 = {args.rpm / 60:g}); "
        f"{stall}lowest AIMD limit "
        f"{stats['concurrency']['lowest']}{learned}{late_429}"
    )
    return throughput / bound, served.max_in_window(1.0)


def _run_sync(
    args: argparse.Namespace, server: FakeLLMServerProcess, storage: Path | None, rpm: float | None
) -> dict[str, Any]:
    return asyncio.run(_run(args, server, storage, rpm))


if __name__ == "__main__":
    sys.exit(main())
