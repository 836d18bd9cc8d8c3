"""Benchmark: `genir-eval parse`, whole process, against a bare BeautifulSoup pass; and its memory.

Speed. The URGE sample's rows are repeated until the file holds at least ``--turns`` turns
(5,200 by default). ``genir-eval parse`` runs on it as a separate process (start-up, imports,
CSV, HTML, validation, JSONL writing: everything a user waits for), and in this process a
bare ``BeautifulSoup(html, "lxml").get_text()`` pass runs over the same response HTML. The
ratio is the bare pass's time over the whole parse's (higher is better); each side is the
best of ``--repeat`` runs. Also printed: per-turn throughput of ``parse_response_html``
alone and of the BeautifulSoup fallback backend.

Memory. Synthetic JSONL files of ``--sessions`` sizes (default 100,000 and 1,000,000
sessions, each one of the demo fixtures' sessions under a new id) are parsed by
``genir-eval parse`` and the peak resident set size of that process is printed for each:
flat when reading streams.

    python bench/bench_parse.py [--sample ../shared/urge/urge_sample_dev.csv] [--turns 5200]
        [--sessions 100000 1000000] [--repeat 3] [--skip-memory] [--skip-speed]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bs4 import BeautifulSoup

from genir_eval.ingest import load_sessions, parse_response_html
from genir_eval.records import session_to_dict

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SAMPLE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"


def repeated_csv(sample: Path, turns: int, out: Path) -> tuple[int, list[str]]:
    """Write the sample's rows repeated to ``turns`` turns; (rows written, every HTML)."""
    csv.field_size_limit(1 << 30)
    with sample.open(encoding="utf-8", newline="") as stream:
        reader = csv.reader(stream)
        header = next(reader)
        rows = list(reader)
    html_column = header.index("response_html")
    written, htmls = 0, []
    with out.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        for row in itertools.cycle(rows):
            if len(htmls) >= turns:
                break
            writer.writerow(row)
            written += 1
            htmls.extend(json.loads(row[html_column]))
    return written, htmls


def best_of(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def run_parse(source: Path, out: Path) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one `genir-eval parse` process.

    The peak is the process's own VmHWM: ``ru_maxrss`` would carry over this (larger)
    process's peak through fork and exec.
    """
    code = (
        "import sys\n"
        "from genir_eval.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "print(status, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, "parse", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"genir-eval parse failed: {done.stderr.strip()}")
    return elapsed, int(done.stderr.strip().splitlines()[-1])


def speed(args: argparse.Namespace, folder: Path) -> None:
    source = folder / "urge_repeated.csv"
    rows, htmls = repeated_csv(args.sample, args.turns, source)
    print(f"input: {rows:,} rows, {len(htmls):,} turns, {source.stat().st_size / 1e6:.1f} MB")
    out = folder / "out.jsonl"
    parse_times = [run_parse(source, out)[0] for _ in range(args.repeat)]
    whole = min(parse_times)
    bare = best_of(args.repeat, lambda: [BeautifulSoup(h, "lxml").get_text() for h in htmls])
    print(f"genir-eval parse (whole process)             {whole:7.2f} s")
    print(f'bare BeautifulSoup(html, "lxml").get_text()  {bare:7.2f} s')
    print(f"ratio bare / parse                           {bare / whole:7.2f} x  (goal >= 2.5)")
    own = best_of(args.repeat, lambda: [parse_response_html(h) for h in htmls])
    print(f"parse_response_html alone                    {len(htmls) / own:7,.0f} turns/s")
    few = htmls[: max(len(htmls) // 5, 1)]
    fallback = best_of(1, lambda: [parse_response_html(h, backend="bs4") for h in few])
    print(f'parse_response_html(backend="bs4")           {len(few) / fallback:7,.0f} turns/s')


def memory(args: argparse.Namespace, folder: Path) -> None:
    templates = [
        json.dumps(session_to_dict(s) | {"session_id": "@ID@"}, ensure_ascii=False)
        for s in load_sessions(args.fixtures).sessions
    ]
    size_each = sum(map(len, templates)) / len(templates)
    print(f"synthetic sessions: the {len(templates)} fixtures' ({size_each:,.0f} B of JSONL each)")
    for size in sorted(args.sessions):
        source = folder / f"synthetic-{size}.jsonl"
        with source.open("w", encoding="utf-8") as stream:
            for n in range(size):
                stream.write(templates[n % len(templates)].replace("@ID@", f"syn-{n}", 1) + "\n")
        elapsed, peak = run_parse(source, folder / "out.jsonl")
        print(
            f"{size:>9,} sessions ({source.stat().st_size / 1e6:6,.0f} MB): "
            f"peak RSS {peak / 1024:5.0f} MB, {elapsed:6.1f} s, {size / elapsed:7,.0f} sessions/s"
        )
        source.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=DEFAULT_SAMPLE)
    parser.add_argument("--turns", type=int, default=5200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fixtures", type=Path, default=ROOT / "fixtures" / "demo_sessions.csv")
    parser.add_argument("--sessions", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_parse.") as tmp:
        folder = Path(tmp)
        if not args.skip_speed:
            speed(args, folder)
        if not args.skip_memory:
            memory(args, folder)


if __name__ == "__main__":
    main()
