"""Benchmark: response-HTML parsing throughput on one core.

Parses the URGE sample's response HTML, repeated to at least ``--turns`` turns, with the full
extraction (text, statements, links, segments: :func:`genir_eval.ingest.parse_response_html`)
and, for reference, a bare ``BeautifulSoup(html, "lxml").get_text()`` pass and the
BeautifulSoup fallback backend. Prints turns per second for each.

    python bench/bench_parse.py [--sample ../shared/urge/urge_sample_dev.csv] [--turns 10000]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path

from bs4 import BeautifulSoup

from genir_eval.ingest import parse_response_html

DEFAULT_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "urge" / "urge_sample_dev.csv"


def load_htmls(path: Path) -> list[str]:
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as stream:
        return [html for row in csv.DictReader(stream) for html in json.loads(row["response_html"])]


def throughput(label: str, parse: Callable[[str], object], htmls: list[str], n: int) -> float:
    batch = list(itertools.islice(itertools.cycle(htmls), n))
    start = time.perf_counter()
    for html in batch:
        parse(html)
    rate = n / (time.perf_counter() - start)
    print(f"{label:<48} {rate:>9,.0f} turns/s  ({n:,} turns)")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=DEFAULT_SAMPLE)
    parser.add_argument("--turns", type=int, default=10_000)
    args = parser.parse_args()
    htmls = load_htmls(args.sample)
    size = sum(map(len, htmls)) / len(htmls)
    print(f"{len(htmls)} distinct responses, {size:,.0f} characters of HTML on average")
    throughput(
        "parse_response_html (lxml, full extraction)", parse_response_html, htmls, args.turns
    )
    throughput(
        'reference: BeautifulSoup(html, "lxml").get_text()',
        lambda h: BeautifulSoup(h, "lxml").get_text(),
        htmls,
        max(args.turns // 5, len(htmls)),
    )
    throughput(
        'parse_response_html(backend="bs4") (fallback)',
        lambda h: parse_response_html(h, backend="bs4"),
        htmls,
        max(args.turns // 5, len(htmls)),
    )


if __name__ == "__main__":
    main()
