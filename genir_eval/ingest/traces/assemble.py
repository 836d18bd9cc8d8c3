"""Steps in, sessions out: spans grouped by trace, traces by session, in bounded memory.

The rules (the same for every source):

* a **session** is the trace's session id (``session.id``, ``gen_ai.conversation.id``,
  Langfuse's ``sessionId``, LangSmith's ``session_id``/``thread_id`` metadata), else the
  trace itself;
* a **turn** is a root request of a trace (a span without a parent; a span whose parent is
  not in the trace is read as a root, with a note) holding a model call, the session's
  turns in the time order of their roots;
* its **query** is the root's text input, else the user message of its last model call;
  its **answer** the output of its last model call to end;
* its **links** are the documents its retrievals returned, in retrieval order (the
  retrievals by start time, each one's documents in their order), numbered from 1, with
  title and url from their metadata and their content as source text; a document without
  url is named by its id (or its place in the trace), with a note;
* its **citations** are the answer's ``[n]`` markers, read by the Markdown reader's rules
  (:mod:`genir_eval.ingest.markers`) and mapped to that numbering; a marker past the
  retrieved list stays text, with a note.

The original trace id and span ids of each turn (its root, its last model call, its
retrievals, each document's) are kept in the session's ``meta["traces"]``, so scores can go
back to the spans they judge; what could not be mapped is one line per trace in
``meta["trace_notes"]``. Nothing is dropped without a note.

Memory: spans are held by trace until their trace has seen no new span for ``window`` spans
(a trace's spans arrive together: an exporter sends a span when it ends), then the trace
becomes turns; a session is closed and yielded once none of its traces has been seen for
twice that. A later trace of a closed session is a located error naming the window, so a
file whose sessions are far apart is read with a larger one (or sorted by session).
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.markers import find_markers, marker_pieces
from genir_eval.ingest.response import Citation, build_response
from genir_eval.ingest.traces.steps import Document, Step
from genir_eval.ingest.validate import validate_session
from genir_eval.records import Link, Session, Turn, is_blank

__all__ = ["DEFAULT_WINDOW", "Assembler"]

#: Spans a trace may wait for its next span (and half what a session waits for its next
#: trace) before it is taken as complete.
DEFAULT_WINDOW = 20_000


#: How many windows a closed trace or session is remembered, to name a late span of it; a
#: span later still starts a trace of its own (its parent missing: a root, with a note).
MEMORY = 10


def _forget(closed: OrderedDict[int, int], before: int) -> None:
    while closed and next(iter(closed.values())) < before:
        closed.popitem(last=False)


@dataclass
class _Trace:
    steps: dict[str, Step] = field(default_factory=dict)
    last: int = 0
    notes: list[str] = field(default_factory=list)
    error: InputError | None = None


@dataclass(frozen=True)
class _TurnDraft:
    key: tuple[int, str, str]  # root start, trace id, root span id: the time order
    query: str
    answer: str
    documents: tuple[Document, ...]
    ids: dict[str, Any]
    where: str


@dataclass
class _SessionDraft:
    turns: list[_TurnDraft] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    user_id: str | None = None
    last: int = 0


class Assembler:
    """Feed it steps in file order with :meth:`feed`; it yields sessions (and the located
    errors of traces or sessions that cannot be read) as they complete, and the rest at
    :meth:`finish`. ``source`` is the sessions' ``source`` field; :attr:`notes` counts the
    traces that carry a note, by the note's kind."""

    def __init__(self, path: str, source: str, *, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("window must be at least 1")
        self.path = path
        self.source = source
        self.window = window
        self.position = 0
        self.spans = 0
        self.notes: Counter[str] = Counter()
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._sessions: OrderedDict[str, _SessionDraft] = OrderedDict()
        # what was closed lately (hash -> where), to name a late span or trace; forgotten
        # after MEMORY windows, so memory stays bounded by the window, not the file
        self._closed_traces: OrderedDict[int, int] = OrderedDict()
        self._closed_sessions: OrderedDict[int, int] = OrderedDict()

    def feed(self, step: Step) -> Iterator[Session | InputError]:
        self.position += 1
        self.spans += 1
        if hash(step.trace_id) in self._closed_traces:
            yield InputError(
                f"{step.where}: span {step.span_id} of trace {step.trace_id} comes more than "
                f"{self.window} spans after the rest of its trace; sort the file by trace or "
                "read it with a larger window",
                path=self.path,
            )
            return
        trace = self._traces.get(step.trace_id)
        if trace is None:
            trace = self._traces[step.trace_id] = _Trace()
        else:
            self._traces.move_to_end(step.trace_id)
        trace.last = self.position
        known = trace.steps.get(step.span_id)
        if known is None:
            trace.steps[step.span_id] = step
        elif known.fingerprint == step.fingerprint:
            trace.notes.append(f"span {step.span_id} is given twice, identically (one copy read)")
            self.notes["duplicate span copies"] += 1
        elif trace.error is None:
            trace.error = InputError(
                f"{step.where}: span id {step.span_id} of trace {step.trace_id} is given twice "
                f"with different contents (first at {known.where})",
                path=self.path,
                column="spanId",
            )
        yield from self._ripe()

    def finish(self) -> Iterator[Session | InputError]:
        """Every trace and session still open, as the input has ended."""
        while self._traces:
            trace_id, trace = self._traces.popitem(last=False)
            yield from self._close_trace(trace_id, trace)
        while self._sessions:
            session_id, draft = self._sessions.popitem(last=False)
            yield self._build(session_id, draft)

    def _ripe(self) -> Iterator[Session | InputError]:
        while self._traces:
            trace_id, trace = next(iter(self._traces.items()))
            if trace.last > self.position - self.window:
                break
            del self._traces[trace_id]
            yield from self._close_trace(trace_id, trace)
        while self._sessions:
            session_id, draft = next(iter(self._sessions.items()))
            if draft.last > self.position - 2 * self.window:
                break
            del self._sessions[session_id]
            self._closed_sessions[hash(session_id)] = self.position
            _forget(self._closed_sessions, self.position - MEMORY * self.window)
            yield self._build(session_id, draft)

    def _close_trace(self, trace_id: str, trace: _Trace) -> Iterator[Session | InputError]:
        self._closed_traces[hash(trace_id)] = self.position
        _forget(self._closed_traces, self.position - MEMORY * self.window)
        if trace.error is not None:
            yield trace.error
            return
        try:
            session_id, user_id, turns, notes = _trace_turns(trace_id, trace, self.path)
        except InputError as error:
            yield InputError(error.message, path=self.path, column=error.column)
            return
        notes = trace.notes + notes
        for note in notes:
            self.notes[_kind_of(note)] += 1
        if hash(session_id) in self._closed_sessions:
            yield InputError(
                f"trace {trace_id} belongs to session {session_id!r}, which was complete "
                f"{self.position - self._closed_sessions[hash(session_id)]} spans earlier "
                f"(no trace of it for {2 * self.window} spans); sort the file by session or "
                "read it with a larger window",
                path=self.path,
                column="session.id",
            )
            return
        draft = self._sessions.get(session_id)
        if draft is None:
            draft = self._sessions[session_id] = _SessionDraft()
        else:
            self._sessions.move_to_end(session_id)
        draft.turns.extend(turns)
        draft.last = self.position
        draft.user_id = draft.user_id or user_id
        if notes:
            draft.notes.append(f"trace {trace_id}: " + "; ".join(notes))

    def _build(self, session_id: str, draft: _SessionDraft) -> Session | InputError:
        if not draft.turns:
            return InputError(
                f"session {session_id!r} has no turn: none of its traces holds a model call "
                f"({' | '.join(draft.notes)[:400]})",
                path=self.path,
            )
        draft.turns.sort(key=lambda t: t.key)
        notes: list[str] = []  # what building the turns notes (links, markers)
        turns = []
        for index, turn in enumerate(draft.turns, start=1):
            try:
                turns.append(_turn(index, turn, notes))
            except InputError as error:
                return InputError(
                    f"session {session_id!r}, {turn.where}: {error.message}",
                    path=self.path,
                    column=error.column,
                )
        for note in notes:
            self.notes[_kind_of(note)] += 1
        notes = draft.notes + notes
        meta: dict[str, Any] = {
            "traces": {
                "source": self.source,
                "user_id": draft.user_id,
                "turns": [t.ids for t in draft.turns],
            }
        }
        if notes:
            meta["trace_notes"] = notes
        session = Session(
            session_id=session_id,
            turns=tuple(turns),
            source=self.source,
            language=detect_language(" ".join(t.query + " " + t.response_text for t in turns)),
            meta=meta,
        )
        try:
            validate_session(session, derived=True)
        except InputError as error:
            return InputError(
                f"session {session_id!r}: {error.message}", path=self.path, column=error.column
            )
        return session


_VALUES = re.compile(r"'[^']*'|\"[^\"]*\"|\b[0-9a-f]{16}\b|\b[0-9a-f]{32}\b|\d+")


def _kind_of(note: str) -> str:
    """A note's kind for the counts: its words with the ids, numbers and quoted values
    taken out (``span … has no url``)."""
    return " ".join(_VALUES.sub("…", note).split())[:120]


def _parents(trace_id: str, trace: _Trace, path: str) -> tuple[list[Step], list[str]]:
    """The trace's roots in time order (orphans among them, with a note), after refusing a
    cycle of parent ids."""
    steps = trace.steps
    notes: list[str] = []
    roots = []
    for step in steps.values():
        if step.parent_id is None:
            roots.append(step)
        elif step.parent_id not in steps:
            notes.append(
                f"span {step.span_id}'s parent {step.parent_id} is not in the trace (read as a root)"
            )
            roots.append(step)
    settled: set[str] = {s.span_id for s in roots}
    for step in steps.values():
        chain: list[str] = []
        current: Step | None = step
        while current is not None and current.span_id not in settled:
            if current.span_id in chain:
                cycle = chain[chain.index(current.span_id) :] + [current.span_id]
                raise InputError(
                    f"{step.where}: trace {trace_id}: the parent ids of spans "
                    f"{' -> '.join(cycle)} form a cycle",
                    path=path,
                    column="parentSpanId",
                )
            chain.append(current.span_id)
            current = steps.get(current.parent_id) if current.parent_id else None
        settled.update(chain)
    roots.sort(key=lambda s: (s.start_ns, s.span_id))
    return roots, notes


def _trace_turns(
    trace_id: str, trace: _Trace, path: str
) -> tuple[str, str | None, list[_TurnDraft], list[str]]:
    roots, notes = _parents(trace_id, trace, path)
    children: dict[str, list[Step]] = {}
    for step in trace.steps.values():
        if step.parent_id is not None and step.parent_id in trace.steps:
            children.setdefault(step.parent_id, []).append(step)
            parent = trace.steps[step.parent_id]
            if (parent.start_ns and step.start_ns and step.start_ns < parent.start_ns) or (
                parent.end_ns and step.end_ns > parent.end_ns
            ):
                notes.append(
                    f"span {step.span_id} starts or ends outside its parent's time (clock skew; "
                    "read by its parent, not its clock)"
                )
        if step.end_ns and step.end_ns < step.start_ns:
            notes.append(f"span {step.span_id} ends before it starts (clock skew)")
        notes.extend(f"span {step.span_id}: {note}" for note in step.notes)
    session_ids = [s.session_id for s in trace.steps.values() if s.session_id]
    user_ids = [s.user_id for s in trace.steps.values() if s.user_id]
    root_sessions = [r.session_id for r in roots if r.session_id]
    session_id = (root_sessions or session_ids or [trace_id])[0]
    if len(set(session_ids)) > 1:
        notes.append(
            f"spans name {len(set(session_ids))} session ids; the trace is read as session "
            f"{session_id!r}"
        )
    turns = []
    for root in roots:
        subtree = _subtree(root, children)
        turn = _turn_draft(trace_id, root, subtree, notes)
        if turn is not None:
            turns.append(turn)
    return session_id, user_ids[0] if user_ids else None, turns, notes


def _subtree(root: Step, children: dict[str, list[Step]]) -> list[Step]:
    out = []
    stack = [root]
    while stack:
        step = stack.pop()
        out.append(step)
        stack.extend(children.get(step.span_id, ()))
    return out


def _turn_draft(
    trace_id: str, root: Step, subtree: list[Step], notes: list[str]
) -> _TurnDraft | None:
    calls = sorted((s for s in subtree if s.kind == "llm"), key=lambda s: (s.end_ns, s.start_ns))
    if not calls:
        names = Counter(s.name for s in subtree)
        notes.append(
            f"root span {root.span_id} ({root.name!r}) holds no model call: not a turn "
            f"({len(subtree)} spans: {', '.join(f'{n!r} x{c}' for n, c in names.items())[:200]})"
        )
        return None
    final = calls[-1]
    retrievals = sorted(
        (s for s in subtree if s.kind == "retriever"), key=lambda s: (s.start_ns, s.span_id)
    )
    used = {root.span_id, final.span_id, *(s.span_id for s in retrievals)}
    if len(calls) > 1:
        notes.append(
            f"root span {root.span_id}: {len(calls) - 1} earlier model call(s) "
            f"({', '.join(c.span_id for c in calls[:-1])[:200]}); the answer is the last one's"
        )
        used.update(c.span_id for c in calls)
    rest = [s for s in subtree if s.span_id not in used]
    if rest:
        names = Counter(s.name for s in rest)
        notes.append(
            f"root span {root.span_id}: {len(rest)} span(s) carry nothing a turn holds "
            f"({', '.join(f'{n!r} x{c}' for n, c in names.items())[:200]})"
        )
    where = f"{root.where}, trace {trace_id}, span {root.span_id}"
    answer = final.output_text
    if answer is None or is_blank(answer):
        raise InputError(
            f"{final.where}: trace {trace_id}, span {final.span_id}: the model call's output is "
            "empty or missing (no assistant message, no output value)",
            column="llm.output_messages",
        )
    query = root.input_text if root.kind != "llm" and not is_blank(root.input_text) else None
    if query is None:
        query = final.user_message
    if query is None or is_blank(query):
        raise InputError(
            f"{where}: no query: the root has no text input and the model call no user message",
            column="input.value",
        )
    documents = tuple(d for s in retrievals for d in s.documents)
    spans_of_docs = [s.span_id for s in retrievals for _ in s.documents]
    ids = {
        "trace_id": trace_id,
        "span_id": root.span_id,
        "llm_span_id": final.span_id,
        "retriever_span_ids": [s.span_id for s in retrievals],
        "documents": [
            {"id": d.id, "span_id": span, "score": d.score}
            for d, span in zip(documents, spans_of_docs, strict=True)
        ],
    }
    return _TurnDraft((root.start_ns, trace_id, root.span_id), query, answer, documents, ids, where)


def _links(turn: _TurnDraft, notes: list[str]) -> tuple[Link, ...]:
    links = []
    for number, doc in enumerate(turn.documents, start=1):
        url = doc.url
        if url is None:
            where = f"trace {turn.ids['trace_id']}: document {number}"
            if doc.id:
                url = doc.id
                notes.append(
                    f"{where} has no url in its metadata; its id {doc.id[:80]!r} stands for it"
                )
            else:
                span = turn.ids["documents"][number - 1]["span_id"]
                url = f"trace:{turn.ids['trace_id']}/span:{span}/document:{number}"
                notes.append(f"{where} has no url and no id; named {url}")
        text = None if doc.content is None or is_blank(doc.content) else doc.content
        links.append(Link(id=number, url=url, title=doc.title, text=text))
    return tuple(links)


def _turn(index: int, turn: _TurnDraft, notes: list[str]) -> Turn:
    links = _links(turn, notes)
    by_id = {link.id: link for link in links}
    markers = find_markers(turn.answer) if "[" in turn.answer else []
    kept = []
    for marker in markers:
        numbers = [int(i) if len(i) <= 18 else -1 for i in marker.ids]
        if all(n in by_id for n in numbers):
            kept.append(marker)
        else:
            shown = turn.answer[marker.start : marker.end].strip()
            notes.append(
                f"trace {turn.ids['trace_id']}: the answer cites {shown} but "
                f"{len(links)} document(s) were retrieved; the marker is kept as text"
            )

    def resolve(link_id: int, at: int) -> Citation:
        link = by_id[link_id]
        return Citation(link_id, link.url, link.title)

    try:
        parsed = build_response(marker_pieces(turn.answer, resolve, kept))
    except InputError as error:
        raise InputError(error.message, column="llm.output_messages") from None
    return Turn(
        index=index,
        query=turn.query.strip(),
        response_text=parsed.response_text,
        statements=parsed.statements,
        links=links,
        segments=parsed.segments,
    )
