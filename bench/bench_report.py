"""How long report.html takes to build as runs grow (synthetic run folders, no judging).

    python bench/bench_report.py [--sizes 1000 10000 100000]

Prints, per size, the seconds to render the report of an already written run folder and the
page's size: the session index is capped (ReportLimits.index_rows) and turn details are
shown for at most ReportLimits.detail_sessions sessions, so the page stays the same size and
the time grows only with the passes over the tables.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from genir_eval.report.html import render_report
from genir_eval.rundir.folder import LinkRow, SessionRow, TurnRow, load_run, write_run


def synthetic_run(directory: Path, n: int) -> Path:
    sessions, turns, links = [], [], []
    for i in range(n):
        sid = f"s{i}"
        cited = i % 10 != 0
        score = float((i * 37) % 101) / 20 if cited else None
        urs = float(1 + (i * 7) % 10)
        sessions.append(
            SessionRow(sid, f"task {i % 6}", 2, {"sdcg_urge": score, "satisfaction.urs": urs})
        )
        for t in (1, 2):
            turns.append(
                TurnRow(
                    sid,
                    t,
                    f"query {i}.{t}",
                    f"answer {i}.{t} [1]",
                    f"task {i % 6}",
                    {"sdcg_urge": score, "satisfaction.urs": urs},
                )
            )
            for link_id in (1, 2):
                links.append(
                    LinkRow(
                        sid,
                        t,
                        link_id,
                        f"https://x.example/{i}/{link_id}",
                        cited=cited,
                        labels={"dna": float((i + link_id) % 4), "true": float(i % 4)},
                    )
                )
    info = {
        "version": 1,
        "scenario": {
            "name": f"bench-{n}",
            "meta": {"headline": "sdcg_urge"},
            "document": {"aggregate": {"measures": ["sdcg_urge"], "link_judges": ["dna", "true"]}},
        },
        "judges": [
            {"id": "dna", "kind": "link_usefulness", "provider": "offline"},
            {"id": "true", "kind": "link_usefulness", "provider": "offline"},
            {"id": "satisfaction.urs", "kind": "satisfaction", "provider": "offline"},
        ],
    }
    return write_run(
        directory, links=links, turns=turns, sessions=sessions, meta=None, info=info, csv=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    print(f"{'sessions':>9} {'load s':>8} {'render s':>9} {'page kB':>8}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            directory = synthetic_run(Path(tmp) / "run", n)
            started = time.perf_counter()
            run = load_run(directory)
            loaded = time.perf_counter()
            page = render_report(run)
            done = time.perf_counter()
            print(
                f"{n:>9,} {loaded - started:>8.2f} {done - loaded:>9.2f} {len(page) / 1000:>8.0f}"
            )


if __name__ == "__main__":
    main()
