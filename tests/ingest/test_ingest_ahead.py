"""Response HTML parsed in worker processes ahead of the URGE row loop: the same sessions
and the same located errors, in the same order, as the row loop alone; a worker that dies
costs only the shortcut.

Expected values are the row loop's own output (``workers=0``), the reference the workers
must reproduce exactly; the broken rows are the kinds the URGE tests name one by one.
"""

from __future__ import annotations

import csv
import json
import os
import threading
import time
from pathlib import Path

import pytest
from test_ingest_urge import good_row, page, write_csv

from genir_eval.errors import InputError
from genir_eval.ingest import iter_urge, urge
from genir_eval.ingest.ahead import CHUNK, WINDOW, ahead
from genir_eval.records import Session

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"
NO_URL = '<span><a class="citation" aria-label="x">3</a></span>'


def _read(path: Path, workers: int) -> tuple[list[object], list[str]]:
    stream = iter_urge(path, skip_invalid=True, workers=workers)
    sessions = list(stream)
    return sessions, [str(error) for error in stream.skipped]


def _hostile_rows() -> list[dict[str, str]]:
    two = [page("A server serves", 1, 2, ". It hosts", 2, "."), page("About 5 dollars.")]
    broken = [
        good_row(),
        good_row(response_html="[not json"),  # the cell cannot be read
        good_row(response_html=json.dumps({"a": 1})),  # not a list of HTML strings
        good_row(response_html=json.dumps([two[0]])),  # one response for two turns
        good_row(response_html=json.dumps([two[0], page(" ")])),  # turn 2 holds no text
        good_row(response_html=json.dumps([NO_URL, two[1]])),  # a citation with no url
        # a conversation problem is named before the HTML's
        good_row(conversation="{}", response_html="[not json"),
        good_row(response_html=""),  # an empty cell
        good_row(useful_text_user_self=json.dumps({"9": ["x"]})),  # gold of a turn not there
    ]
    # More rows than the chunks in flight, so results are handed back across many chunks.
    return broken * (2 * CHUNK * WINDOW // len(broken) + 1)


@pytest.mark.parametrize("source", ["sample", "hostile", "undecodable"])
def test_workers_read_what_the_row_loop_reads(tmp_path: Path, source: str) -> None:
    if source == "sample":
        path = SAMPLE
    else:
        path = write_csv(tmp_path / "rows.csv", _hostile_rows())
        if source == "undecodable":
            # a line of bytes that are not UTF-8 in the middle of the file, and a short row
            data = path.read_bytes().split(b"\n")
            data[5] = data[5][:40] + b"\xff\xfe" + data[5][40:]
            data.insert(9, b'"only one cell"')
            path.write_bytes(b"\n".join(data))
    alone, alone_errors = _read(path, workers=0)
    with_workers, errors = _read(path, workers=1)
    assert with_workers == alone
    assert errors == alone_errors
    if source == "sample":
        assert len(alone) == 12 and not alone_errors
    else:
        # every kind of broken row above is among the errors, located at its row
        assert len(alone) > 0 and len(alone_errors) >= 8 * (len(_hostile_rows()) // 9)
        assert all(", row " in error for error in alone_errors)


def test_large_files_use_workers_only_where_a_cpu_is_spare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genir_eval.ingest import urge

    path = write_csv(tmp_path / "rows.csv", [good_row()] * 3)
    used: list[int] = []
    real = urge._items

    def spy(path: Path, workers: int = 0):  # type: ignore[no-untyped-def]
        used.append(workers)
        return real(path, workers)

    monkeypatch.setattr(urge, "_items", spy)
    list(iter_urge(path))  # a small file: no pool
    monkeypatch.setattr(urge, "AHEAD_MIN_BYTES", 1)
    monkeypatch.setattr(urge, "spare_cpus", lambda: 0)
    list(iter_urge(path))  # one CPU: no pool
    monkeypatch.setattr(urge, "spare_cpus", lambda: 7)
    sessions = list(iter_urge(path))  # at most two workers
    assert used == [0, 0, 2]
    assert len(sessions) == 3


def _square(numbers: list[int | None]) -> list[int | None]:
    return [None if n is None else n * n for n in numbers]


def _die(numbers: list[int | None]) -> list[int | None]:
    os._exit(3)  # a worker killed mid-chunk (an out-of-memory kill, a crash in a parser)


@pytest.mark.parametrize("threads", [1, 2], ids=["forked", "forkserver"])
def test_ahead_hands_results_back_in_order(threads: int) -> None:
    # A process with a second thread (a run's SQLite worker) gets its workers from a
    # forkserver; a single-threaded one forks them.
    items = list(range(4 * CHUNK * WINDOW + 5))
    got = []
    done = threading.Event()
    helper = threading.Thread(target=done.wait)
    if threads == 2:
        helper.start()
    # items divisible by 4 are not sent: their result is None; the others are the worker's
    # square, or None where the reader got there first (it never waits for a worker)
    for item, result in ahead(
        items,
        lambda n: None if n % 4 == 0 else n,
        _square,
        workers=1,
        preload="genir_eval.ingest.urge",
    ):
        got.append((item, result))
        time.sleep(0.002)  # a reader slower than the worker, whatever the machine's load
    done.set()
    if threads == 2:
        helper.join()
    assert [item for item, _ in got] == items
    assert all(result in (None, n * n) for n, result in got)
    assert all(result is None for n, result in got if n % 4 == 0)
    assert any(result is not None for _, result in got)  # the worker did take chunks


def test_a_dead_worker_costs_only_the_shortcut() -> None:
    items = list(range(4 * CHUNK * WINDOW))
    got = []
    for pair in ahead(items, lambda n: n, _die, workers=1, preload="genir_eval.ingest.urge"):
        got.append(pair)
        time.sleep(0.001)
    assert [item for item, _ in got] == items  # nothing lost, nothing repeated
    assert all(result is None for _, result in got)  # each row is read by the reader itself


def test_an_error_of_the_items_is_raised_where_the_reader_meets_it() -> None:
    def items():  # type: ignore[no-untyped-def]
        yield from range(CHUNK + 3)
        raise OSError("the disk went away")

    got = []
    with pytest.raises(OSError, match="disk went away"):
        for item, _ in ahead(items(), lambda n: n, _square, workers=1, preload=__name__):
            got.append(item)
    assert got == list(range(CHUNK + 3))  # every item before it was handed back first


def test_a_workers_answer_reads_as_the_row_loop_reads(tmp_path: Path) -> None:
    # What a worker sends back (packed records, refused responses, a cell's problem) is
    # turned into the very session or located error the row loop makes of the row; here
    # the worker's side runs in this process, so every row takes that path.
    path = write_csv(tmp_path / "rows.csv", _hostile_rows()[:9])
    with path.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))

    def outcome(row: dict[str, str], responses: object) -> object:
        try:
            return urge._session("urge-0", row, responses)
        except urge._CellError as problem:
            return (problem.column, problem.message)
        except InputError as problem:
            return str(problem)

    outcomes = []
    for row in rows:
        (responses,) = urge._parse_responses([row["response_html"]])
        assert responses is not None
        outcomes.append(outcome(row, responses))
        assert outcomes[-1] == outcome(row, None)
    assert isinstance(outcomes[0], Session) and outcomes[6][0] == "conversation"  # type: ignore[index]
    assert sum(isinstance(o, tuple) and o[0] == "response_html" for o in outcomes) == 6
