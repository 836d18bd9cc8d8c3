"""Benchmark: does ``--max-cost`` hold, and how close is ``run --dry-run``'s estimate?
(issue 48)

100 randomised runs of the demo sessions (``fixtures/demo_sessions.csv``) against the fake
OpenAI server (``genir_eval.testing.FakeLLMServer``, real sockets) with a price table of
$1 and $4 per million tokens in and out, two judges (``link_usefulness.dna``,
``satisfaction.geval``). Each run draws its concurrency (1-8), the server's latency (0-20
ms), a share of transient server errors (0-30%, retried: every attempt counts) and a cap,
``--max-cost``, between 10% and 120% of what the whole run costs. Per run: what was spent
(the engines' cost from the server's token counts) against the cap; the overshoot is what
was spent past the cap, beside the cost of the calls in flight when the engine stopped (at
most ``concurrency`` calls, each at most its reservation).

Then the dry run's estimate per judge against what an uncapped run spends (the server
answers each judge in the format its prompt asks for: ``{"M": 2, "T": 3, "O": 2}``, and
``{"scores": [7, ...]}`` with as many scores as the prompt asks; a real model that writes
more than it is asked for costs more than the estimate, up to its bound at ``max_tokens``).

    python bench/bench_budget.py [--runs 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import re
import tempfile
import time
from pathlib import Path

from genir_eval.errors import GenirError
from genir_eval.runner.dry_run import dry_run
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.testing import FakeLLMServer, FaultPlan

ROOT = Path(__file__).resolve().parents[1]
DEMO_CSV = ROOT / "fixtures" / "demo_sessions.csv"
PRICES = {
    "prices": [
        {
            "provider": "openai",
            "models": ["bench-model"],
            "input": 1.0,
            "output": 4.0,
            "as_of": "2026-12-05",
            "source": "bench/bench_budget.py's own",
        }
    ]
}
JUDGES = ("link_usefulness.dna", "satisfaction.geval")


def _reply(request: object) -> str:
    system = getattr(request, "system", None) or ""
    messages = getattr(request, "messages", ())
    text = system + " ".join(str(m.get("content")) for m in messages)
    if "how satisfied the user was" in text:
        wanted = re.search(r"exactly (\d+) integers", text)
        n = int(wanted.group(1)) if wanted else 3
        return json.dumps({"scores": [7] * n})
    return '{"M": 2, "T": 3, "O": 2}'


def _scenario(folder: Path, base_url: str, concurrency: int) -> Path:
    (folder / "prices.json").write_text(json.dumps(PRICES), encoding="utf-8")
    judges = "".join(f'[[judges]]\nname = "{name}"\n' for name in JUDGES)
    path = folder / "s.toml"
    path.write_text(
        f"""
name = "budget"
[input]
path = {json.dumps(str(DEMO_CSV))}
format = "urge"
[llm]
provider = "openai"
model = "bench-model"
base_url = {json.dumps(base_url)}
[engine]
concurrency = {concurrency}
cache = false
journal = false
max_attempts = 8
prices = {json.dumps(str(folder / "prices.json"))}
{judges}
[meta]
n_boot = 10
[output]
csv = false
report = false
""",
        encoding="utf-8",
    )
    return path


def _run(scenario: Path, out: Path, **engine: object) -> tuple[float, dict[str, float], int]:
    """What the run spent in all and per judge's task (from the engines' usage), and its
    exit: 0 finished, 3 failed (the budget)."""
    try:
        run = run_scenario(scenario, out_dir=out, overrides=Overrides(engine=engine))
        info = run.info
        code = 0 if info["status"]["ok"] else 3
    except GenirError:
        raise
    engines = info["engines"]
    by_task: dict[str, float] = {}
    for e in engines:
        for u in e["usage"]:
            by_task[u["task"]] = by_task.get(u["task"], 0.0) + (u["cost_usd"] or 0.0)
    return sum(e["cost_usd"] or 0.0 for e in engines), by_task, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-test-fake-key")
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    rng = random.Random(args.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as tmp:
        root = Path(tmp)
        with FakeLLMServer(reply=_reply) as server:
            scenario = _scenario(root, server.openai_base_url, 4)
            full, full_by_task, _ = _run(scenario, root / "full")
            estimate = dry_run(scenario)
        print(f"the whole run: ${full:.6f} ({', '.join(JUDGES)})")
        print("| judge | dry-run estimate | spent | error | bound at max_tokens |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for row in estimate.rows:
            # each judge's calls carry its name as their task
            spent = full_by_task[row.judge]
            assert row.cost is not None and row.cost_limit is not None
            print(
                f"| {row.judge} | ${row.cost:.6f} | ${spent:.6f} | "
                f"{(row.cost - spent) / spent:+.1%} | ${row.cost_limit:.6f} |"
            )
        worst, stopped, over = 0.0, 0, 0
        for i in range(args.runs):
            concurrency = rng.randint(1, 8)
            latency = rng.uniform(0.0, 0.02)
            faults = FaultPlan(rate=rng.uniform(0.0, 0.3), kinds=("server_error",), seed=i)
            cap = full * rng.uniform(0.1, 1.2)
            folder = root / f"r{i}"
            folder.mkdir()
            with FakeLLMServer(reply=_reply, latency=latency, faults=faults) as server:
                scenario = _scenario(folder, server.openai_base_url, concurrency)
                spent, _, code = _run(scenario, folder / "run", max_cost=cap)
            stopped += code == 3
            past = spent - cap
            over += past > 0
            worst = max(worst, past)
        print(
            f"{args.runs} capped runs: {stopped} stopped by the budget, {over} spent past the cap; "
            f"largest overshoot ${worst:.9f} ({time.monotonic() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
