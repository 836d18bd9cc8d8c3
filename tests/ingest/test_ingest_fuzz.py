"""Generated hostile input for every reader: a located error or a lossless load, nothing else.

Sessions are generated (hypothesis), written in each format, then damaged: a hostile token
planted anywhere (non-ASCII digits, a 5,000-digit number, deep brackets or tags, NUL, an
escaped lone surrogate, a stray header or quote...), a span cut out, a line repeated or
dropped, the file cut short, bytes that are not UTF-8. ``genir-eval parse`` on the result
must exit 0 with output that reads back as exactly the sessions read, or exit 2 with one
line naming the file; with ``--skip-invalid`` every skipped session is listed with its
place. A plain fuzz run feeds each reader arbitrary bytes and text. Runs are derandomized
and bounded by ``max_examples``, so the suite's time stays fixed.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from hostile_helpers import SUFFIX, render
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.figures import counted
from genir_eval.ingest import iter_sessions, load_sessions, read_jsonl

pytestmark = pytest.mark.fuzz

FORMATS = ("urge", "jsonl", "markdown")

HOSTILE = [
    "²",
    "٣",
    "9" * 5000,
    "[" * 3000,
    "{" * 3000,
    "<div>" * 400,
    "<b>" * 3000,
    "\x00",
    "\\ud800",
    "\\udfff\\ud800",
    "NaN",
    "1e999",
    "-1",
    '"',
    '""',
    "'",
    ",",
    "\n",
    "\r",
    "\r\n\r\n",
    "\ufeff",
    "\\",
    "{}",
    "[]",
    "null",
    "# Session: dup\n",
    "# Session:\n",
    "## Query: \n",
    "## Query: again\n",
    "Sources:\n",
    "[1] https://x.example\n",
    "[2] no url\n",
    "[99]",
    "[0]",
    "[1, 2]",
    "```",
    "```\n",
    "`",
    "~~~\n",
    "回合1",
    "回合01",
    '"回合1": {"用户": "x"}, ',
    '<a class="citation" href="">1</a>',
    '<a class="citation" href="https://e.x">²</a>',
    '<a class="citation" href="https://e.x">1</a>',
    "</p>",
    "<!--",
    "<script>",
    "<?xml version='1.0' encoding='latin-1'?>",
    "\t",
    "\u2028",
]

WORDS = st.sampled_from(["Servers host sites", "价格", "It works", "x", "Data, and more", "a; b"])


@st.composite
def sessions(draw: st.DrawFn) -> list[list[tuple[str, list[tuple[str, tuple[int, ...]]]]]]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        turns = []
        for _ in range(draw(st.integers(1, 3))):
            parts = [
                (
                    draw(WORDS) + draw(st.sampled_from([".", "", "。", " "])),
                    tuple(draw(st.lists(st.integers(1, 4), max_size=2, unique=True))),
                )
                for _ in range(draw(st.integers(1, 3)))
            ]
            turns.append((draw(WORDS) + "?", parts))
        out.append(turns)
    return out


@st.composite
def damaged(draw: st.DrawFn, fmt: str) -> bytes:
    data = render(fmt, draw(sessions())).encode("utf-8")
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["plant", "cut", "repeat", "drop", "truncate", "bytes"]))
        at = draw(st.integers(0, len(data)))
        lines = data.split(b"\n")
        line = draw(st.integers(0, max(len(lines) - 1, 0)))
        if kind == "plant":
            data = data[:at] + draw(st.sampled_from(HOSTILE)).encode("utf-8") + data[at:]
        elif kind == "cut":
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
        elif kind == "repeat":
            data = b"\n".join([*lines[: line + 1], lines[line], *lines[line + 1 :]])
        elif kind == "drop":
            data = b"\n".join(lines[:line] + lines[line + 1 :])
        elif kind == "truncate":
            data = data[:at]
        else:
            data = (
                data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at:]
            )
    return data


def _parse(path: Path, out: Path, *extra: str) -> tuple[int, list[str]]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["parse", str(path), "-o", str(out), *extra])
    return code, err.getvalue().splitlines()


def _check(fmt: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"log{SUFFIX[fmt]}"
        path.write_bytes(data)
        out = Path(tmp) / "out.jsonl"
        code, err = _parse(path, out)
        if code == 2:
            assert len(err) == 1 and err[0].startswith(f"genir-eval: error: {path}"), err
            assert not out.exists()
        else:
            assert code == 0, err
            read = load_sessions(path).sessions
            assert read_jsonl(out).sessions == read
            assert err[-1].startswith(f"parsed {counted(len(read), 'session')}")
        code, err = _parse(path, out, "--skip-invalid")
        if code == 2:
            assert len(err) == 1 and err[0].startswith(f"genir-eval: error: {path}"), err
            return
        assert code == 0, err
        skipped = [line for line in err if line.startswith("genir-eval: skipped: ")]
        assert len(skipped) == len(err) - 1
        for line in skipped:
            assert line.startswith(f"genir-eval: skipped: {path}, ")
            assert ", line " in line or ", row " in line
        stream = iter_sessions(path, skip_invalid=True)
        kept = list(stream)
        assert read_jsonl(out).sessions == kept if kept else True
        assert len(stream.skipped) == len(skipped)


SETTINGS = settings(
    max_examples=70,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_damaged_logs_end_in_a_located_error_or_load_losslessly(fmt):
    @SETTINGS
    @given(damaged(fmt))
    def check(data: bytes) -> None:
        _check(fmt, data)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_undamaged_logs_load_every_statement_and_link(fmt):
    @settings(max_examples=30, deadline=None, derandomize=True)
    @given(sessions())
    def check(logical) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"log{SUFFIX[fmt]}"
            path.write_text(render(fmt, logical), encoding="utf-8")
            loaded = load_sessions(path).sessions
        assert len(loaded) == len(logical)
        for session, turns in zip(loaded, logical, strict=True):
            for turn, (_, parts) in zip(session.turns, turns, strict=True):
                cited = sorted({i for _, ids in parts for i in ids})
                assert sorted(link.id for link in turn.links) == cited
                assert [c for s in turn.statements for c in s.citations] == [
                    i for _, ids in parts for i in ids
                ]
                assert "[" not in turn.response_text

    check()


# -- plain fuzz: arbitrary input, each reader -------------------------------------------

TOKENS = st.sampled_from(HOSTILE + ["# Session: s\n", "## Query: q\n", "A [1].\n", "{", '"turns"'])


@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_readers_raise_nothing_but_located_errors(fmt):
    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(
        st.one_of(
            st.binary(max_size=300), st.lists(TOKENS, max_size=12).map("".join).map(str.encode)
        )
    )
    def check(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"log{SUFFIX[fmt]}"
            path.write_bytes(data)
            for skip in (False, True):
                stream = iter_sessions(path, format=fmt, skip_invalid=skip)
                try:
                    for _ in stream:
                        pass
                except InputError as error:
                    assert error.path == str(path)
                for error in stream.skipped:
                    assert error.path == str(path) and (error.line or error.row)

    check()
