"""The instrumented RAG app of fixtures/trace_app.py, loaded for the tests, and the checks
of what a reader recovered against what the app recorded itself."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from genir_eval.records import Session

ROOT = Path(__file__).resolve().parents[3]


def load_app() -> ModuleType:
    name = "genir_trace_app"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "fixtures" / "trace_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_MARKER = re.compile(r"\[(\d+)\]")


def expected_citations(answer: str) -> list[int]:
    """The numbers the answer cites, in reading order: a second reading of the markers, by a
    plain regex (the app's answers hold no code, urls or reference links)."""
    return [int(n) for n in _MARKER.findall(answer)]


def cited_pairs(answer: str) -> int:
    """(statement, cited link) pairs of the answer: each group of adjacent markers closes
    one statement, which cites each of the group's numbers once."""
    groups = re.findall(r"(?:\[\d+\])+", answer)
    return sum(len(set(_MARKER.findall(group))) for group in groups)


def expected_text(answer: str) -> str:
    """The answer without its markers and the spaces before them (the Markdown rules)."""
    return re.sub(r"[ \t]*\[\d+\]", "", answer).strip()


def mismatches(record: object, sessions: list[Session]) -> list[str]:
    """Every difference between the app's record and the sessions read: sessions, turns
    (query, text, trace and span ids), links (url, title, text, order) and citations."""
    problems: list[str] = []
    by_id = {s.session_id: s for s in sessions}
    wanted = record.sessions  # type: ignore[attr-defined]
    for missing in sorted(set(wanted) - set(by_id)):
        problems.append(f"session {missing} lost")
    for extra in sorted(set(by_id) - set(wanted)):
        problems.append(f"session {extra} invented")
    for session_id, turns in wanted.items():
        session = by_id.get(session_id)
        if session is None:
            continue
        if len(session.turns) != len(turns):
            problems.append(f"{session_id}: {len(session.turns)} turns, not {len(turns)}")
            continue
        ids = session.meta["traces"]["turns"]
        for position, (got, want) in enumerate(zip(session.turns, turns, strict=True)):
            where = f"{session_id} turn {position + 1}"
            if got.query != want.query:
                problems.append(f"{where}: query {got.query!r} != {want.query!r}")
            if got.response_text != expected_text(want.answer):
                problems.append(f"{where}: text {got.response_text!r}")
            links = [(lk.url, lk.title, lk.text) for lk in got.links]
            if links != [tuple(d) for d in want.documents]:
                problems.append(f"{where}: links {links} != {want.documents}")
            if [lk.id for lk in got.links] != list(range(1, len(want.documents) + 1)):
                problems.append(f"{where}: link ids {[lk.id for lk in got.links]}")
            cited = [c for s in got.statements for c in s.citations]
            if cited != expected_citations(want.answer):
                problems.append(f"{where}: citations {cited} != {expected_citations(want.answer)}")
            if (ids[position]["trace_id"], ids[position]["span_id"]) != (
                want.trace_id,
                want.span_id,
            ):
                problems.append(f"{where}: ids {ids[position]} != {want.trace_id}/{want.span_id}")
    return problems
