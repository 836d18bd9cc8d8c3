"""Throughput of a whole run: an LLM scenario (openai provider) against the local fake server.

Builds >= 1,000 synthetic sessions from the demo fixtures' patterns (each fixture session
copied under new ids, with its turns rotated and its links' order varied so prompts and
cache keys differ), serves replies from the fake server in a child process with a fixed
latency, and runs the scenario through :func:`genir_eval.runner.run_scenario` with no
cache (every judgment is a provider call). Prints sessions per minute, the client's CPU time
per call (what limits a run once latency is low) and the share of the engine's bound reached: with ``concurrency`` requests in flight and ``latency`` seconds per
reply, no client can do better than ``concurrency / latency`` calls per second.

    python bench/bench_run.py                      # 1,000 sessions, concurrency 32, 200 ms
    python bench/bench_run.py --sessions 2000 --concurrency 64 --latency 0.2
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

from genir_eval.ingest import load_sessions
from genir_eval.records import Session
from genir_eval.runner import parse_scenario, run_scenario
from genir_eval.testing.fake_llm_server import FakeLLMServerProcess, FakeRequest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "demo_sessions.csv"


def reply(request: FakeRequest) -> str:
    """A valid reply for both link judges; the label varies with the prompt."""
    label = len(request.last_user_text) % 4
    return f'{{"M": {label}, "T": 2, "O": {label}}}'


def synthetic_sessions(n: int) -> list[Session]:
    """``n`` sessions following the fixtures' patterns, all with distinct prompts."""
    base = load_sessions(FIXTURES).sessions
    out: list[Session] = []
    copy = 0
    while len(out) < n:
        for session in base:
            if len(out) == n:
                break
            turns = list(session.turns)
            shift = copy % len(turns)
            turns = turns[shift:] + turns[:shift]
            turns = [
                dataclasses.replace(
                    t,
                    index=i,
                    query=f"{t.query} (variant {copy})",
                    links=tuple(reversed(t.links)) if copy % 2 else t.links,
                )
                for i, t in enumerate(turns, start=1)
            ]
            gold = session.gold if shift == 0 else None  # rotated turns no longer match
            out.append(
                dataclasses.replace(
                    session,
                    session_id=f"{session.session_id}-syn{copy}",
                    turns=tuple(turns),
                    gold=gold,
                )
            )
        copy += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument("--goal", type=float, default=0.9, help="share of the bound to reach")
    args = parser.parse_args(argv)

    sessions = synthetic_sessions(args.sessions)
    with (
        FakeLLMServerProcess(reply=reply, latency=args.latency, record_prompts=False) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        os.environ["OPENAI_API_KEY"] = server.api_key
        scenario = parse_scenario(
            {
                "name": "bench-openai-fake",
                "input": {"path": str(FIXTURES), "format": "urge"},
                "llm": {
                    "provider": "openai",
                    "model": "gpt-4o-mini",
                    "base_url": server.openai_base_url,
                },
                "engine": {"concurrency": args.concurrency, "cache": False, "max_attempts": 3},
                "judges": [{"name": "link_usefulness.dna"}, {"name": "link_usefulness.true"}],
                "meta": {"n_boot": 200},
                "output": {"report": True},
            },
            base_dir=tmp,
        )
        started, cpu_started = time.monotonic(), time.process_time()
        run = run_scenario(scenario, out_dir=Path(tmp) / "run", sessions=sessions)
        wall, cpu = time.monotonic() - started, time.process_time() - cpu_started
        served = server.stats()

    calls = run.info["provider_calls"]
    judging = max(engine["elapsed_s"] for engine in run.info["engines"])
    bound = args.concurrency / args.latency
    share = (calls / judging) / bound
    print(f"sessions              {len(sessions)}")
    print(
        f"provider calls        {calls} (server answered {served.answered_ok}, peak in flight {served.max_in_flight})"
    )
    print(f"missing labels        {len(run.info['failures'])}")
    print(
        f"whole run             {wall:.1f} s  ->  {len(sessions) / wall * 60:,.0f} sessions/minute"
    )
    print(
        f"judging               {judging:.1f} s  ->  {len(sessions) / judging * 60:,.0f} sessions/minute"
    )
    print(
        f"client CPU            {cpu:.1f} s = {cpu / max(calls, 1) * 1000:.2f} ms per call "
        "(this process, all threads, assembling and report included)"
    )
    print(
        f"engine bound          {bound:,.0f} calls/s (concurrency {args.concurrency} / latency {args.latency:g} s)"
    )
    print(
        f"achieved              {calls / judging:,.0f} calls/s = {share:.2f} of the bound (goal {args.goal:g})"
    )
    return 0 if share >= args.goal and not run.info["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
