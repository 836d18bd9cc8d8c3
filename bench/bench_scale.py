"""Scale of a whole offline run: time and peak memory at growing numbers of sessions.

Writes synthetic sessions following the demo fixtures' patterns (each fixture session
copied under a new id, its queries varied and its gold labels drawn at random, so scores
and correlations are not degenerate) as canonical JSONL, then runs, in a fresh process
per size, a scenario with one link judge (the offline twin of ``link_usefulness.dna``),
the link metrics, a z-score combination, the meta-evaluation (1,000 bootstrap resamples)
and the report (rendered from the finished run folder, timed apart), as ``genir-eval run``
does. Prints per size the wall time, the peak resident memory of that process
(``resource.getrusage``; also before the report) and what the process holds when every
window is judged (RSS after ``malloc_trim``, and its growth per session between sizes),
that every output file is
there with one row per session/turn/link, and the slope between sizes in seconds per
1,000 sessions: a run whose time is linear in its sessions shows a flat slope.

``--parse N`` also times ``genir-eval parse`` over N sessions (canonical JSONL in, JSONL
out) in a fresh process, next to a 10,000-session parse: constant memory shows as the
same peak RSS.

    python bench/bench_scale.py                              # 1k, 10k sessions
    nice python bench/bench_scale.py --sizes 1000 10000 100000
    nice python bench/bench_scale.py --sizes --parse 1000000  # the parse only
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "demo_sessions.csv"
OUTPUTS = (
    "links.jsonl",
    "links.csv",
    "turns.jsonl",
    "turns.csv",
    "sessions.jsonl",
    "sessions.csv",
    "meta.json",
    "run.json",
    "report.html",
)

SCENARIO = """\
version = 1
name = "bench-scale"
description = "Synthetic sessions, one offline link judge, meta-evaluation and report."

[input]
path = "{input}"
format = "jsonl"

[engine]
concurrency = 64
cache_mode = "off"

[[judges]]
name = "link_usefulness.dna"

[aggregate]
measures = ["sdcg_urge", "srbp_urge", "decreasing"]
session = "decreasing"
gold = true

[[aggregate.combine]]
name = "z(sdcg_urge+srbp_urge)"
scores = ["sdcg_urge", "srbp_urge"]

[meta]
n_boot = 1000
seed = 0

[output]
dir = "{out}"
report = false
"""


def write_sessions(path: Path, n: int, seed: int = 0) -> tuple[int, int]:
    """``n`` sessions as canonical JSONL, streamed to ``path``; returns (turns, links)."""
    from genir_eval.ingest import load_sessions
    from genir_eval.records import session_to_dict

    templates = [session_to_dict(s) for s in load_sessions(FIXTURES).sessions]
    rng = random.Random(seed)
    turns = links = 0
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            doc = json.loads(json.dumps(templates[i % len(templates)]))
            doc["session_id"] = f"scale-{i}"
            for turn in doc["turns"]:
                turn["query"] = f"{turn['query']} (variant {i})"
                turns += 1
                links += len(turn["links"])
            gold = doc.get("gold") or {}
            gold["session_satisfaction"] = rng.randint(1, 5)
            gold["query_satisfaction"] = [rng.randint(1, 5) for _ in doc["turns"]]
            gold["link_usefulness"] = [
                {str(link["id"]): rng.randint(0, 3) for link in turn["links"]}
                for turn in doc["turns"]
            ]
            gold["citation_usefulness"] = None
            doc["gold"] = gold
            handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return turns, links


def _child_run(scenario: str) -> None:
    """In a fresh process: run the scenario, then render its report from the run folder
    (as ``genir-eval run`` does at its end, timed apart); print timings and peak RSS."""
    started = time.perf_counter()
    from genir_eval.report.html import write_report
    from genir_eval.runner import assemble, run_scenario

    # What the judging phase keeps: the RSS when every window is judged, written and
    # forgotten (before the z-score combinations and the meta-evaluation), after returning
    # freed heap to the system (glibc's malloc_trim), so what is left is what is held.
    judged: dict[str, float] = {}
    finish = assemble.Assembly.finish

    def finish_measured(self: Any) -> Any:
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        judged["rss_mb"] = _rss_mb()
        return finish(self)

    assemble.Assembly.finish = finish_measured  # type: ignore[method-assign]
    run = run_scenario(scenario)
    run_wall = time.perf_counter() - started
    run_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    write_report(run)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "run_wall_s": run_wall,
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "run_peak_rss_mb": run_peak / 1024,
                "judged_rss_mb": judged.get("rss_mb"),
                "peak_rss_mb": usage.ru_maxrss / 1024,
                "calls": run.info["provider_calls"],
                "input": run.info["input"],
                "status": (run.info.get("status") or {}).get("ok"),
                "dir": str(run.directory),
            }
        )
    )


def _rss_mb() -> float:
    """The resident memory of this process now (Linux), in MB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return math.nan


def _child_parse(source: str, target: str) -> None:
    started = time.perf_counter()
    from genir_eval.cli import main

    code = main(["parse", source, "-o", target])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "code": code,
                "wall_s": time.perf_counter() - started,
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "peak_rss_mb": usage.ru_maxrss / 1024,
            }
        )
    )


def _in_child(*args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"child {args[0]} failed with exit code {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _check_outputs(directory: Path, n: int, turns: int, links: int, info: dict) -> str:
    missing = [name for name in OUTPUTS if not (directory / name).is_file()]
    counts = {
        name: sum(1 for _ in (directory / f"{name}.jsonl").open(encoding="utf-8"))
        for name in ("sessions", "turns", "links")
    }
    expected = {"sessions": n, "turns": turns, "links": links}
    if missing or counts != expected or info["input"]["sessions"] != n:
        return f"INCOMPLETE (missing {missing}, rows {counts}, expected {expected})"
    return "all outputs, one row per session/turn/link"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10_000])
    parser.add_argument("--parse", type=int, default=0, metavar="N", help="also parse N")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="genir-scale-"))
    rows = []
    for n in sorted(args.sizes):
        source = work / f"sessions-{n}.jsonl"
        turns, links = write_sessions(source, n)
        out = work / f"run-{n}"
        scenario = work / f"scale-{n}.toml"
        scenario.write_text(SCENARIO.format(input=source, out=out), encoding="utf-8")
        result = _in_child("run", str(scenario))
        check = _check_outputs(out, n, turns, links, result)
        rows.append((n, result))
        print(
            f"{n:>9,} sessions ({turns:,} turns, {links:,} links, {result['calls']:,} calls): "
            f"{result['wall_s']:8.1f} s wall ({result['run_wall_s']:.1f} s before the report), "
            f"{result['cpu_s']:8.1f} s CPU, peak RSS {result['peak_rss_mb']:7.1f} MB "
            f"({result['run_peak_rss_mb']:.1f} MB before the report; "
            f"{result['judged_rss_mb']:.1f} MB held at the end of judging), "
            f"{1000 * result['wall_s'] / n:6.2f} s per 1k sessions; {check}",
            flush=True,
        )
        if not args.keep:
            source.unlink()
    for (n1, r1), (n2, r2) in zip(rows, rows[1:], strict=False):
        slope = (r2["wall_s"] - r1["wall_s"]) / ((n2 - n1) / 1000)
        cpu_slope = (r2["cpu_s"] - r1["cpu_s"]) / ((n2 - n1) / 1000)
        print(
            f"slope {n1:,} -> {n2:,}: {slope:.2f} s wall ({cpu_slope:.2f} s CPU) per 1k sessions; "
            f"peak RSS x{r2['peak_rss_mb'] / r1['peak_rss_mb']:.2f} for x{n2 / n1:.0f} sessions; "
            f"held at the end of judging: "
            f"{(r2['judged_rss_mb'] - r1['judged_rss_mb']) * 1024 / (n2 - n1):.2f} kB per session"
        )
    if args.parse:
        for n in sorted({min(10_000, args.parse), args.parse}):
            source = work / f"parse-{n}.jsonl"
            write_sessions(source, n)
            target = work / f"parsed-{n}.jsonl"
            result = _in_child("parse", str(source), str(target))
            size = source.stat().st_size / 1e6
            print(
                f"parse {n:>9,} sessions ({size:,.0f} MB JSONL): {result['wall_s']:.1f} s wall, "
                f"{n / result['wall_s']:,.0f} sessions/s, peak RSS "
                f"{result['peak_rss_mb']:.1f} MB",
                flush=True,
            )
            source.unlink()
            target.unlink()
    print(f"work folder: {work}" if args.keep else "")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        _child_run(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "parse":
        _child_parse(sys.argv[2], sys.argv[3])
    else:
        main()
