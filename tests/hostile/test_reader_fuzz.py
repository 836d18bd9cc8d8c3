"""Property-based fuzz of the readers added since the first fuzz (preferences, CrowdRAG, source
texts, the arena's pairs) and of the citation-marker scanner: arbitrary text and arbitrary
JSON give what was read or a located :class:`InputError` (file and line), never another
exception, and what was read can be written back out (a lone surrogate let through crashed
the writers). Derandomized and bounded by ``max_examples``, so the suite's time stays
fixed."""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions, write_jsonl
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.ingest.markers import find_markers
from genir_eval.ingest.preferences import read_preferences, write_preferences
from genir_eval.ingest.sources import read_source_texts
from genir_eval.runner.arena import _listed_pairs
from genir_eval.runner.arena_answers import AnswerStore, System

pytestmark = pytest.mark.fuzz

FUZZ = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Text drawn to hit the readers' syntax: brackets, digits, spaces, markup, surrogates,
# invisible and format characters.
HOSTILE_CHARS = st.sampled_from(
    list("[]{}(),;:.-*#`~<>!\"'\\ \t\n01239aZ")
    + ["\ud800", "\udfff", "\u200b", "\u200d", "\ufeff", "\u00a0", "\u202e", "é", "\u0301", "中"]
)
HOSTILE_TEXT = st.one_of(st.text(HOSTILE_CHARS, max_size=300), st.text(max_size=200))

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | HOSTILE_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)


def _object_with(keys: list[str], values: st.SearchStrategy[Any] = JSON) -> st.SearchStrategy[Any]:
    """Objects with some of ``keys`` (the reader's own) and arbitrary values."""
    return st.dictionaries(
        st.sampled_from(keys) | st.text(max_size=8), values, max_size=len(keys) + 1
    )


def _line(value: Any) -> str:
    # allow_nan: NaN and Infinity reach the reader as JSON's non-standard constants; a lone
    # surrogate is written escaped, as a JSON file may hold it
    return json.dumps(value, allow_nan=True)


def _located(read: Callable[[], Any], write: Callable[[Any], Any] | None = None) -> None:
    try:
        result = read()
    except InputError as error:
        assert error.path, error
        text = str(error)
        assert "\n" not in text
    else:
        if write is not None:
            write(result)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text(
        "".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogatepass"
    )
    return path


# numbers where a reader wants a small whole number: out of range, not whole, not numbers
AWKWARD_NUMBERS = st.sampled_from(
    [0, -1, 2**63, 2**64, 10**30, True, 1.5, 1e20, float("nan"), float("inf"), "1"]
)
# short names of hostile characters: most examples hold a surrogate or an invisible one
NAMES = st.text(HOSTILE_CHARS, min_size=1, max_size=6)
PREFERENCE = st.fixed_dictionaries(
    {"winner": st.sampled_from(["a", "b", "tie"]), "session_a": NAMES, "session_b": NAMES},
    optional={
        "criterion": NAMES,
        "query": NAMES,
        "turn": st.integers(1, 3) | AWKWARD_NUMBERS,
    },
)
PREFERENCE_KEYS = [
    "winner",
    "session_a",
    "session_b",
    "session",
    "system_a",
    "system_b",
    "turn",
    "criterion",
    "query",
    "version",
]


@FUZZ
@given(st.lists(PREFERENCE, min_size=1, max_size=3))
def test_preferences_fuzz(rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / "p.jsonl", [_line(r) for r in rows])
        _located(lambda: read_preferences(path), lambda read: write_preferences(read, io.BytesIO()))


@FUZZ
@given(st.lists(_object_with(PREFERENCE_KEYS) | JSON, min_size=1, max_size=5))
def test_preferences_junk_fuzz(rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / "p.jsonl", [_line(r) for r in rows])
        _located(lambda: read_preferences(path), lambda read: write_preferences(read, io.BytesIO()))


@FUZZ
@given(st.lists(HOSTILE_TEXT, min_size=1, max_size=5))
def test_preferences_text_fuzz(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / "p.jsonl", lines)
        _located(lambda: read_preferences(path), lambda read: write_preferences(read, io.BytesIO()))


RESPONSE_KEYS = ["response", "topic", "query", "style", "writer", "text"]
SOURCE_KEYS = ["topic", "query", "references"]
RATING_KEYS = ["query_id", "response_a", "response_b", "quality_overall_gold", "coverage_deep_gold"]
STRINGS = st.sampled_from(["t1", "r1", "r2", "llm", "human", "essay", "a", "b", "n"]) | HOSTILE_TEXT
REFERENCE = st.fixed_dictionaries(
    {"index": st.integers(-1, 4) | JSON, "text": HOSTILE_TEXT}, optional={"id": STRINGS}
)


@FUZZ
@given(
    st.lists(_object_with(RESPONSE_KEYS, STRINGS), min_size=1, max_size=3),
    st.lists(
        _object_with(SOURCE_KEYS, STRINGS | st.lists(REFERENCE, min_size=1, max_size=3)),
        min_size=1,
        max_size=2,
    ),
    st.lists(_object_with(RATING_KEYS, STRINGS) | JSON, min_size=1, max_size=3),
)
def test_crowdrag_fuzz(responses: list[Any], sources: list[Any], ratings: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write(folder / "responses.jsonl", [_line(r) for r in responses])
        _write(folder / "sources.jsonl", [_line(s) for s in sources])
        _write(folder / "ratings.jsonl", [_line(r) for r in ratings])
        _located(lambda: convert_crowdrag(folder, folder / "out"))


@FUZZ
@given(
    st.sampled_from(["t1", "r1"]),
    st.text(HOSTILE_CHARS, max_size=300),
)
def test_crowdrag_answer_text_fuzz(topic: str, text: str) -> None:
    """An answer's text, markers and all, is read or refused with its line."""
    passages = [{"index": i, "id": f"d#{i}", "text": f"Passage {i}."} for i in range(3)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        answer = {"response": "r1", "topic": topic, "query": "q", "style": "s", "writer": "w"}
        other = {**answer, "response": "r2", "writer": "v", "text": "Other [1]."}
        _write(folder / "responses.jsonl", [_line({**answer, "text": text}), _line(other)])
        _write(folder / "sources.jsonl", [_line({"topic": topic, "references": passages})])
        rating = {
            "query_id": topic,
            "response_a": "r1",
            "response_b": "r2",
            "quality_overall_gold": "a",
        }
        _write(folder / "ratings.jsonl", [_line(rating)])
        _located(lambda: convert_crowdrag(folder, folder / "out"))


@FUZZ
@given(st.lists(_object_with(["url", "text"], STRINGS | JSON) | JSON, min_size=1, max_size=4))
def test_source_texts_fuzz(rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / "s.jsonl", ["{}"] + [_line(r) for r in rows])
        _located(lambda: read_source_texts(path))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Two systems' answers to session s1, in the arena's SQLite store."""
    folder = tmp_path_factory.mktemp("arena")
    session = {
        "session_id": "s1",
        "turns": [{"index": 1, "query": "q", "response_text": "An answer."}],
    }
    systems = []
    for name in ("a", "b"):
        path = _write(folder / f"{name}.jsonl", [_line(session)])
        systems.append(System(name, path))
    with AnswerStore(folder) as answers:
        answers.read(systems, "session")
        yield answers


PAIR = st.fixed_dictionaries(
    {"a": st.just("a"), "b": st.just("b")},
    optional={
        "session_id": st.just("s1") | NAMES,
        "session": NAMES,
        "turn": st.integers(1, 3) | AWKWARD_NUMBERS | JSON,
    },
)


@FUZZ
@given(
    st.lists(
        PAIR | _object_with(["session_id", "turn", "a", "b"], STRINGS | JSON),
        min_size=1,
        max_size=4,
    )
)
def test_arena_pairs_fuzz(store: AnswerStore, rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / "pairs.jsonl", [_line(r) for r in rows])
        _located(lambda: _listed_pairs(path, store, ["a", "b"], "session"))


@FUZZ
@given(st.text(HOSTILE_CHARS, max_size=400))
def test_markers_fuzz(text: str) -> None:
    """Every marker found lies in the text, in order, and spells numbers."""
    markers = find_markers(text)
    last = 0
    for marker in markers:
        assert last <= marker.start < marker.end <= len(text)
        assert "[" in text[marker.start : marker.end]
        assert all(part.isdigit() for part in marker.ids)
        last = marker.end


@FUZZ
@given(st.lists(HOSTILE_TEXT, min_size=1, max_size=3), st.sampled_from(["jsonl", "markdown"]))
def test_session_ids_fuzz(ids: list[str], fmt: str) -> None:
    """Any ids: sessions, or a located error (look-alike ids refused with both lines)."""
    with tempfile.TemporaryDirectory() as tmp:
        if fmt == "jsonl":
            lines = [
                _line(
                    {
                        "session_id": sid,
                        "turns": [{"index": 1, "query": "q", "response_text": "An answer."}],
                    }
                )
                for sid in ids
            ]
            path = _write(Path(tmp) / "s.jsonl", lines)
        else:
            text = "".join(
                f"# Session: {sid.splitlines()[0] if sid.splitlines() else sid}\n## Query: q\nAn answer.\n\n"
                for sid in ids
            )
            path = Path(tmp) / "s.md"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _located(
            lambda: load_sessions(path, format=fmt),
            lambda read: write_jsonl(read.sessions, io.BytesIO()),
        )
