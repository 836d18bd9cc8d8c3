"""Every reader and converter reads about a megabyte of adversarial input in linear time, and
so do the offline twins' and judges' helpers that read a statement's text.

Each case is one reader given ~1 MB built to make a backtracking pattern or a quadratic loop
blow up: long runs of spaces after a citation marker, ``[`` and thousands of digits, a
Sources heading followed by spaces, deep JSON, thousands of tags. The reader must return (or
refuse the input with a located error) within :data:`BOUND` seconds. The linear readers take
well under a second each; the quadratic versions these cases were written against took
minutes (the ``[1].`` + 100,000 spaces answer over 200 s) or never finished (``[`` + 30
digits in a CrowdRAG answer), so the bound tells them apart even on a loaded machine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_helpers import urge_csv, urge_row

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions
from genir_eval.ingest.crowdrag import read_crowdrag
from genir_eval.ingest.markers import find_markers
from genir_eval.ingest.preferences import read_preferences
from genir_eval.ingest.sources import read_source_texts
from genir_eval.judges.citations.support import find_evidence
from genir_eval.judges.offline.features import synthesis
from genir_eval.judges.pairwise.rows import style_features
from genir_eval.records import Link, Statement, Turn

pytestmark = pytest.mark.realtime

#: Seconds a reader may take on one case: generous for a busy machine, far below what a
#: quadratic reader needs on a megabyte.
BOUND = 30.0
MB = 1_000_000
SPACES = " " * MB

LINKS = [{"id": i, "url": f"https://s{i}.example/p", "title": f"S{i}"} for i in (1, 2)]


def _jsonl(path: Path, text: str) -> Callable[[], Any]:
    turn = {"index": 1, "query": "q", "response_text": text, "links": LINKS}
    path.write_text(json.dumps({"session_id": "s1", "turns": [turn]}) + "\n", encoding="utf-8")
    return lambda: load_sessions(path, format="jsonl")


def _markdown(
    path: Path, answer: str, sources: str = "[1] S1 - https://s1.example/p"
) -> Callable[[], Any]:
    path.write_text(
        f"# Session: m1\n\n## Query: q\n\n{answer}\n\nSources:\n{sources}\n", encoding="utf-8"
    )
    return lambda: load_sessions(path, format="markdown")


def _urge(path: Path, html: str) -> Callable[[], Any]:
    row = urge_row([("q", [("text", (1,))])], response_html=json.dumps([html]))
    path.write_text(urge_csv([row]), encoding="utf-8")
    return lambda: load_sessions(path, format="urge")


def _crowdrag(folder: Path, text: str) -> Callable[[], Any]:
    folder.mkdir()
    passages = [{"index": i, "id": f"d#{i}", "text": f"Passage {i}."} for i in range(3)]
    answers = [("r1", "llm", "bullet", text), ("r2", "human", "essay", "A server [1].")]
    (folder / "responses.jsonl").write_text(
        "".join(
            json.dumps(
                {"response": r, "topic": "t1", "query": "q", "style": s, "writer": w, "text": t}
            )
            + "\n"
            for r, w, s, t in answers
        ),
        encoding="utf-8",
    )
    (folder / "sources.jsonl").write_text(
        json.dumps({"topic": "t1", "query": "q", "references": passages}) + "\n", encoding="utf-8"
    )
    (folder / "ratings.jsonl").write_text(
        json.dumps(
            {"query_id": "t1", "response_a": "r1", "response_b": "r2", "quality_overall_gold": "a"}
        )
        + "\n",
        encoding="utf-8",
    )
    return lambda: read_crowdrag(folder)


def _file(path: Path, text: str, read: Callable[[Path], Any]) -> Callable[[], Any]:
    path.write_text(text, encoding="utf-8")
    return lambda: read(path)


def _pairs(path: Path, text: str) -> Callable[[], Any]:
    from genir_eval.runner.arena import _listed_pairs

    class Store:  # the answer store's one method the pairs reader asks
        def position(self, key: str, turn: int) -> int | None:
            return 0 if (key, turn) == ("s1", 1) else None

    path.write_text(text, encoding="utf-8")
    return lambda: _listed_pairs(path, Store(), ["a", "b"], "session")  # type: ignore[arg-type]


def _deep(depth: int = MB // 2) -> str:
    return "[" * depth + "]" * depth


PREFERENCE = '{"session_a": "s1", "session_b": "s2", "winner": "a"}'

CASES: dict[str, Callable[[Path], Callable[[], Any]]] = {
    "jsonl marker then spaces": lambda d: _jsonl(d / "a.jsonl", "See [1]." + SPACES + "end"),
    "jsonl open marker then spaces": lambda d: _jsonl(d / "a.jsonl", "See [1" + SPACES + "x"),
    "jsonl spaces between markers": lambda d: _jsonl(d / "a.jsonl", "A [1]" + SPACES + "[2] b"),
    "jsonl many markers and tags": lambda d: _jsonl(d / "a.jsonl", "<b>x [1]: " * 20_000),
    "jsonl marker digits": lambda d: _jsonl(d / "a.jsonl", "See [" + "1," * (MB // 2) + "x"),
    "jsonl statements gap": lambda d: _jsonl_statements(d / "a.jsonl"),
    "jsonl deep": lambda d: _file(
        d / "a.jsonl", _deep() + "\n", lambda p: load_sessions(p, format="jsonl")
    ),
    "markdown marker then spaces": lambda d: _markdown(d / "a.md", "See [1]." + SPACES + "end"),
    "markdown sources heading spaces": lambda d: _markdown(
        d / "a.md", "See [1].\nSources" + SPACES + "x"
    ),
    "markdown heading stars spaces": lambda d: _markdown(
        d / "a.md", "See [1].\n#" + SPACES + "*" + SPACES + "x"
    ),
    "markdown source title spaces": lambda d: _markdown(
        d / "a.md", "See [1].", "[1] t" + SPACES + "x"
    ),
    "markdown source dashes": lambda d: _markdown(
        d / "a.md", "See [1].", "[1] t" + " - x" * (MB // 4) + " - https://s1.example/p"
    ),
    "markdown many blank lines": lambda d: _markdown(d / "a.md", "See [1]." + "\n \n" * (MB // 3)),
    "urge html spaces": lambda d: _urge(d / "a.csv", "<p>text " + SPACES + "</p>" + _anchor()),
    "urge html unclosed tags": lambda d: _urge(d / "a.csv", "<b>" * 50_000 + "text" + _anchor()),
    "urge html unclosed comments": lambda d: _urge(
        d / "a.csv", "<p>text" + _anchor() + "<!--" * (MB // 4)
    ),
    "urge html open anchors": lambda d: _urge(
        d / "a.csv", "<p>text" + _anchor() + '<a class="' * (MB // 10)
    ),
    "urge html entities": lambda d: _urge(d / "a.csv", "<p>text" + _anchor() + "&#" * (MB // 2)),
    "crowdrag bracket digits": lambda d: _crowdrag(d / "c", "Servers [" + "1" * MB + " host [0]."),
    "crowdrag bracket spaced digits": lambda d: _crowdrag(
        d / "c", "Servers [" + "1 " * (MB // 2) + "x [0]."
    ),
    "crowdrag spaces": lambda d: _crowdrag(d / "c", "Servers [0]." + SPACES + "done"),
    "crowdrag spaces in marker": lambda d: _crowdrag(d / "c", "Servers [0" + SPACES + "x [1]."),
    "crowdrag deep": lambda d: _file(d / "x", "", lambda p: None) and _crowdrag_deep(d / "c"),
    "sources long text": lambda d: _file(
        d / "s.jsonl",
        json.dumps({"url": "https://s1.example/p", "text": "[1]" + SPACES + "x"}) + "\n",
        read_source_texts,
    ),
    "sources deep": lambda d: _file(
        d / "s.jsonl", "{" + '"a":' + _deep() + "}\n", read_source_texts
    ),
    "sources csv quotes": lambda d: _file(
        d / "s.csv", "url,text\nhttps://a.example," + '"' * MB + "\n", read_source_texts
    ),
    "preferences deep": lambda d: _file(d / "p.jsonl", _deep() + "\n", read_preferences),
    "preferences many rows": lambda d: _file(
        d / "p.jsonl",
        "".join(
            json.dumps(
                {"session_a": f"s{i}", "session_b": "z", "winner": "a", "criterion": f"c{i % 50}"}
            )
            + "\n"
            for i in range(MB // 80)
        ),
        read_preferences,
    ),
    "preferences criteria": lambda d: _file(
        d / "p.jsonl",
        "".join(
            json.dumps({"session_a": "s1", "session_b": "s2", "winner": "a", "criterion": f"c{i}"})
            + "\n"
            for i in range(MB // 80)
        ),
        read_preferences,
    ),
    "preferences spaces": lambda d: _file(
        d / "p.jsonl", PREFERENCE[:-1] + SPACES + "}\n", read_preferences
    ),
    "arena pairs deep": lambda d: _pairs(d / "pairs.jsonl", _deep() + "\n"),
    "arena pairs many": lambda d: _pairs(
        d / "pairs.jsonl", '{"session_id": "s1", "turn": 1, "a": "a", "b": "b"}\n' * (MB // 50)
    ),
    "arena gold deep": lambda d: _file(
        d / "gold.jsonl", '{"a":' * (MB // 5) + "1" + "}" * (MB // 5) + "\n", read_preferences
    ),
    "twin synthesis on bracketed digits": lambda d: _synthesis(
        "See [" + "1 " * (MB // 2) + "x [1]."
    ),
    "twin synthesis on bracket digit runs": lambda d: _synthesis("See [" + "1" * MB + " [1]."),
    "pairwise style on blank lines": lambda d: _style("A list:" + "\n" * MB + "x"),
    "citation judge quote of spaces": lambda d: (
        lambda: find_evidence("a" + SPACES + "...", "a source text")
    ),
    "markers alone": lambda d: lambda: find_markers(("[1]" + " " * 1000 + "x") * (MB // 1000)),
}


def _turn(text: str) -> Turn:
    link = Link(id=1, url="https://s1.example/p", title="S1", text="A source text of words.")
    return Turn(
        index=1,
        query="q",
        response_text=text,
        statements=(Statement(text=text, citations=(1,)),),
        links=(link,),
    )


def _synthesis(text: str) -> Callable[[], Any]:
    turn = _turn(text)
    return lambda: synthesis(turn)


def _style(text: str) -> Callable[[], Any]:
    turn = _turn(text)
    return lambda: style_features(turn)


def _anchor() -> str:
    return '<a class="citation" aria-label="S1" href="https://s1.example/p">1</a></p>'


def _jsonl_statements(path: Path) -> Callable[[], Any]:
    turn = {
        "index": 1,
        "query": "q",
        "response_text": "A." + SPACES + "B.",
        "statements": [{"text": "A.", "citations": [1]}, {"text": "B.", "citations": []}],
        "links": LINKS,
    }
    path.write_text(json.dumps({"session_id": "s1", "turns": [turn]}) + "\n", encoding="utf-8")
    return lambda: load_sessions(path, format="jsonl")


def _crowdrag_deep(folder: Path) -> Callable[[], Any]:
    read = _crowdrag(folder, "Servers [0].")
    (folder / "ratings.jsonl").write_text(_deep() + "\n", encoding="utf-8")
    return read


@pytest.mark.parametrize("name", list(CASES))
def test_reader_is_linear_on_a_megabyte(name: str, tmp_path: Path) -> None:
    read = CASES[name](tmp_path)
    started = time.perf_counter()
    try:
        read()
    except InputError as error:
        assert error.path is not None or "markers" in name, error
    elapsed = time.perf_counter() - started
    assert elapsed < BOUND, f"{name}: {elapsed:.1f} s"
