"""The instrumented RAG app of fixtures/trace_app.py, loaded for the tests, and the checks
of what a reader recovered against what the app recorded itself."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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


def mismatches(
    record: object, sessions: list[Session], *, root_is_trace: bool = False
) -> list[str]:
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
                want.trace_id if root_is_trace else want.span_id,
            ):
                problems.append(f"{where}: ids {ids[position]} != {want.trace_id}/{want.span_id}")
    return problems


def _iso(ns: int) -> str:
    import datetime as dt

    moment = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=ns // 1000)
    return moment.isoformat().replace("+00:00", "Z")


def _turns(record: object) -> list[tuple[str, int, Any]]:
    out = []
    clock = 0
    for session_id, turns in record.sessions.items():  # type: ignore[attr-defined]
        for turn in turns:
            clock += 10_000_000_000
            out.append((session_id, clock, turn))
    return out


def langfuse_traces(record: object) -> list[dict[str, Any]]:
    """The app's turns as Langfuse exports them: a trace (``sessionId``, ``input``) with its
    observations, a RETRIEVER (LangChain documents as output) and a GENERATION (an OpenAI
    style message as output)."""
    traces = []
    for session_id, clock, turn in _turns(record):
        docs = [
            {"page_content": text, "metadata": {"url": url, "title": title}}
            for url, title, text in turn.documents
        ]
        traces.append(
            {
                "id": turn.trace_id,
                "timestamp": _iso(clock),
                "name": "rag.turn",
                "sessionId": session_id,
                "userId": "user-1",
                "input": {"question": turn.query},
                "output": turn.answer,
                "observations": [
                    {
                        "id": turn.trace_id + "-r",
                        "traceId": turn.trace_id,
                        "type": "RETRIEVER",
                        "name": "retrieve",
                        "startTime": _iso(clock + 1000),
                        "endTime": _iso(clock + 2000),
                        "parentObservationId": None,
                        "input": turn.query,
                        "output": docs,
                    },
                    {
                        "id": turn.trace_id + "-g",
                        "traceId": turn.trace_id,
                        "type": "GENERATION",
                        "name": "chat",
                        "startTime": _iso(clock + 3000),
                        "endTime": _iso(clock + 9000),
                        "parentObservationId": None,
                        "input": [{"role": "user", "content": "Sources: ..."}],
                        "output": {"role": "assistant", "content": turn.answer},
                    },
                ],
            }
        )
    return traces


def langsmith_runs(record: object) -> list[dict[str, Any]]:
    """The app's turns as LangSmith runs: a root chain (the thread in its metadata), a
    retriever run (``outputs.documents``) and an llm run (``outputs.generations``)."""
    runs = []
    for session_id, clock, turn in _turns(record):
        root = turn.span_id
        common = {"trace_id": turn.trace_id, "extra": {"metadata": {"thread_id": session_id}}}
        runs.append(
            {
                "id": root + "-r",
                "parent_run_id": root,
                "run_type": "retriever",
                "name": "retrieve",
                "start_time": _iso(clock + 1000),
                "end_time": _iso(clock + 2000),
                "inputs": {"query": turn.query},
                "outputs": {
                    "documents": [
                        {
                            "page_content": text,
                            "metadata": {"source": url, "title": title},
                            "type": "Document",
                        }
                        for url, title, text in turn.documents
                    ]
                },
                **common,
            }
        )
        runs.append(
            {
                "id": root + "-l",
                "parent_run_id": root,
                "run_type": "llm",
                "name": "ChatOpenAI",
                "start_time": _iso(clock + 3000),
                "end_time": _iso(clock + 9000),
                "inputs": {"messages": [[{"type": "human", "data": {"content": "Sources: ..."}}]]},
                "outputs": {"generations": [[{"text": turn.answer, "type": "ChatGeneration"}]]},
                **common,
            }
        )
        runs.append(
            {
                "id": root,
                "parent_run_id": None,
                "run_type": "chain",
                "name": "rag.turn",
                "start_time": _iso(clock),
                "end_time": _iso(clock + 10000),
                "inputs": {"question": turn.query},
                "outputs": {"output": turn.answer},
                **common,
            }
        )
    return runs
