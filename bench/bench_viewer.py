"""How fast the viewer answers as runs grow: a 100,000-session run folder against a
100-session one (synthetic, no judging), served by ``genir-eval view`` in its own process.

    nice -n 19 python bench/bench_viewer.py [--sizes 100 100000] [--repeats 30]

Prints, per size and action (the table's first page, a page deep in it, a score range, a
sort by a score, a text search, the judge-vs-people disagreement filter, a session's page,
the API's page of JSON), the median and 95th percentile of the server's response time as
the client on the same machine sees it (request sent to the last byte read, over one
kept-alive connection), and how long the server took to read the run folder.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from genir_eval.rundir.folder import LinkRow, SessionRow, TurnRow, write_run

_WORDS = "server cloud storage backup media game robot garden travel recipe tax visa".split()
_LISTENING = re.compile(r"at (http://\S+/) ")


def synthetic_run(directory: Path, n: int) -> Path:
    """``n`` sessions of two turns, two links a turn, two link judges with the annotators'
    label, a satisfaction judge, the users' rating, one judgment row a turn in the evidence
    and a missing label every 50th session."""
    sessions, turns, links, evidence = [], [], [], []
    for i in range(n):
        sid = f"s{i:06d}"
        words = " ".join(_WORDS[(i * k) % len(_WORDS)] for k in (1, 3, 7))
        score = float((i * 37) % 101) / 20 if i % 50 else None
        urs = float(1 + (i * 7) % 10)
        scores = {"sdcg_urge": score, "satisfaction.urs": urs}
        sessions.append(SessionRow(sid, f"task {i % 6}", 2, scores, float(1 + i % 5)))
        for t in (1, 2):
            turns.append(
                TurnRow(
                    sid,
                    t,
                    f"query {i}.{t} {words}",
                    f"answer {i}.{t} about {words} [1]",
                    f"task {i % 6}",
                    scores,
                    float(1 + (i + t) % 5),
                )
            )
            judgments = []
            for link_id in (1, 2):
                labels = {"dna": float((i + link_id) % 4), "true": float(i % 4)}
                links.append(
                    LinkRow(
                        sid,
                        t,
                        link_id,
                        f"https://x.example/{i}/{link_id}",
                        labels=labels,
                        gold=float((i * link_id) % 4),
                    )
                )
                judgments += [
                    {
                        "judge": j,
                        "item": f"link:{link_id}",
                        "repeat": 0,
                        "value": v,
                        "missing_reason": None,
                        "reason": f"{j} on {words}",
                        "raw": None,
                    }
                    for j, v in labels.items()
                ]
            evidence.append(
                {
                    "version": 1,
                    "session_id": sid,
                    "turn": t,
                    "statements": [[f"answer {i}.{t}", [1]]],
                    "judgments": judgments,
                }
            )
    info = {
        "version": 1,
        "scenario": {"name": f"bench-{n}", "meta": {"headline": "sdcg_urge"}},
        "headline": {"score": "sdcg_urge"},
        "judges": [
            {"id": "dna", "kind": "link_usefulness", "provider": "offline"},
            {"id": "true", "kind": "link_usefulness", "provider": "offline"},
            {"id": "satisfaction.urs", "kind": "satisfaction", "provider": "offline"},
        ],
    }
    return write_run(
        directory,
        links=links,
        turns=turns,
        sessions=sessions,
        meta=None,
        info=info,
        csv=False,
        evidence=evidence,
    )


def actions(n: int) -> dict[str, str]:
    deep = max(1, n // 50 // 2)
    return {
        "first page": "/",
        "page deep in": f"/?page={deep}",
        "score range": "/?col=sdcg_urge&lo=1&hi=3",
        "sort by score": "/?sort=satisfaction.urs&desc=1",
        "text search": "/?q=" + quote("garden travel"),
        "disagreement": "/?dis=disagree:annotators:dna&dis_min=1.5",
        "range+sort+search": "/?col=sdcg_urge&lo=1&sort=sdcg_urge&desc=1&q=robot",
        "session page": f"/session?id=s{n // 2:06d}",
        "API page (JSON)": "/api/sessions?sort=sdcg_urge&size=100",
    }


def time_actions(url: str, n: int, repeats: int) -> dict[str, list[float]]:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=600)
    found: dict[str, list[float]] = {}
    for name, path in actions(n).items():
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            connection.request("GET", path)
            answer = connection.getresponse()
            answer.read()
            times.append(time.perf_counter() - started)
            if answer.status != 200:
                raise SystemExit(f"{path}: HTTP {answer.status}")
        found[name] = times
    connection.close()
    return found


def serve(directory: Path) -> tuple[subprocess.Popen[str], str, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "genir_eval", "view", str(directory), "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = _LISTENING.search(line)
    if found is None:
        process.kill()
        raise SystemExit(f"the viewer did not start: {line}{process.stderr.read()}")
    url = found.group(1)
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    while True:  # the socket is bound before uvicorn listens on it
        try:
            http.client.HTTPConnection(host, int(port), timeout=600).request("HEAD", "/api/runs")
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    return process, url, time.perf_counter() - started


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 100_000])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    results: dict[int, dict[str, list[float]]] = {}
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            made = time.perf_counter()
            directory = synthetic_run(Path(tmp) / "run", n)
            print(f"{n:,} sessions: written in {time.perf_counter() - made:.1f} s", flush=True)
            process, url, startup = serve(directory)
            try:
                print(
                    f"{n:,} sessions: the viewer read the run and listened in {startup:.1f} s",
                    flush=True,
                )
                results[n] = time_actions(url, n, args.repeats)
            finally:
                process.send_signal(signal.SIGINT)
                process.wait(timeout=60)
    header = "".join(f" | {n:>9,} median ms | p95 ms" for n in results)
    print(f"{'action':<20}{header}")
    for name in actions(args.sizes[0]):
        cells = "".join(
            f" | {statistics.median(r[name]) * 1000:>16.1f} | {p95(r[name]) * 1000:>6.1f}"
            for r in results.values()
        )
        print(f"{name:<20}{cells}")


if __name__ == "__main__":
    main()
