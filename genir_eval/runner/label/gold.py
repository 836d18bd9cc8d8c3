"""People's labels as gold: what ``genir-eval run --labels`` and ``meta --labels`` read in
place of the log's gold, and what ``genir-eval label export`` writes (canonical JSONL with
a ``gold`` block, the format every reader takes).

Each kind of gold the people labelled (link usefulness, citation support, query or session
satisfaction) becomes what the people said and nothing else: an item of it nobody labelled
has no gold, so the meta-evaluation compares the judges on the labelled items and the
prediction-powered means use the rest as the unlabelled sample. A kind of gold the people
gave no label of is the input's own, kept (``run --labels`` and ``meta --labels`` say so):
a store nobody has labelled yet never takes away the users' own ratings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO

import orjson

from genir_eval.errors import InputError
from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS, PAIRWISE
from genir_eval.records import SUPPORT_VALUE, Gold, Session, session_to_dict
from genir_eval.rundir.files import file_digest
from genir_eval.runner.label.agreement import people_label
from genir_eval.runner.label.items import (
    NUGGET_QUEUE,
    NUGGET_WORDS,
    SESSION_SATISFACTION,
    TURN_SATISFACTION,
    nugget_where,
)
from genir_eval.runner.label.keys import parse_item_key
from genir_eval.runner.label.store import STORE_FILE, LabelStore

__all__ = [
    "PeopleGold",
    "open_people_gold",
    "people_gold_note",
    "with_people_gold",
    "write_gold_sessions",
]

_SUPPORT_WORD = {v: k for k, v in SUPPORT_VALUE.items()}


class PeopleGold:
    """The people's label of every item a store holds, by what it is about."""

    def __init__(self, store: LabelStore) -> None:
        self.links: dict[tuple[str, int], dict[int, int]] = {}
        self.support: dict[tuple[str, int, int], dict[int, str]] = {}
        self.turns: dict[tuple[str, int], float] = {}
        self.sessions: dict[str, float] = {}
        #: pairwise labels: item key -> 1 (a), 0 (b) or 0.5 (tie)
        self.pairs: dict[str, float] = {}
        #: (session, turn) -> nugget id -> support / partial_support / not_support
        self.nuggets: dict[tuple[str, int], dict[str, str]] = {}
        for queue in (
            LINK_USEFULNESS,
            CITATION_SUPPORT,
            NUGGET_QUEUE,
            TURN_SATISFACTION,
            SESSION_SATISFACTION,
            PAIRWISE,
        ):
            for item, by in store.labels(queue).items():
                value = people_label(queue, by)
                if value is not None:
                    self._put(queue, item, value)

    def _put(self, queue: str, item: str, value: float) -> None:
        _, parts = parse_item_key(item)  # the store checked it against its queue
        if queue == PAIRWISE:
            self.pairs[item] = value
        elif queue == NUGGET_QUEUE:
            self._put_nugget(item, value)
        elif queue == LINK_USEFULNESS:
            sid, turn, link = parts
            self.links.setdefault((sid, turn), {})[link] = int(value)
        elif queue == CITATION_SUPPORT:
            sid, turn, statement, link = parts
            self.support.setdefault((sid, turn, statement), {})[link] = _SUPPORT_WORD[int(value)]
        elif queue == TURN_SATISFACTION:
            sid, turn = parts
            self.turns[(sid, turn)] = value
        else:
            self.sessions[parts[0]] = value

    def _put_nugget(self, item: str, value: float) -> None:
        """A (nugget, answer) label as its assignment word (TREC 2024 RAG's)."""
        session_id, index, nugget = nugget_where(item)
        word = NUGGET_WORDS.get(float(value))
        if word is None:
            raise InputError(f"label store: item {item!r}: {value!r} is not a nugget label")
        self.nuggets.setdefault((session_id, index), {})[nugget] = word

    def fields(self) -> tuple[str, ...]:
        """The :class:`Gold` fields the people gave at least one label of."""
        # the Gold fields are named after the kinds whose gold they hold
        given = {
            LINK_USEFULNESS: self.links,
            CITATION_SUPPORT: self.support,
            "query_satisfaction": self.turns,
            "session_satisfaction": self.sessions,
        }
        return tuple(name for name, labels in given.items() if labels)

    def __len__(self) -> int:
        return (
            sum(len(v) for v in self.links.values())
            + sum(len(v) for v in self.support.values())
            + len(self.turns)
            + len(self.sessions)
            + len(self.pairs)
            + sum(len(v) for v in self.nuggets.values())
        )

    def gold(self, session: Session) -> Gold | None:
        """``session``'s gold from the people's labels alone (``None`` when they gave none)."""
        sid = session.session_id
        turns = session.turns
        links = tuple(self.links.get((sid, t.index), {}) for t in turns)
        support = tuple(
            tuple(self.support.get((sid, t.index, s), {}) for s in range(1, len(t.statements) + 1))
            for t in turns
        )
        satisfaction = tuple(self.turns.get((sid, t.index)) for t in turns)
        nuggets = tuple(self.nuggets.get((sid, t.index)) for t in turns)
        has_links = any(links)
        has_support = any(any(s) for s in support)
        has_turns = any(v is not None for v in satisfaction)
        has_nuggets = any(nuggets)
        if not (has_links or has_support or has_turns or has_nuggets or sid in self.sessions):
            return None
        return Gold(
            session_satisfaction=self.sessions.get(sid),
            query_satisfaction=satisfaction if has_turns else None,
            link_usefulness=links if has_links else None,
            citation_support=support if has_support else None,
            nugget_assignments=nuggets if has_nuggets else None,
        )


def open_people_gold(path: str | Path, logs: str | Path) -> PeopleGold:
    """The people's gold of a store (``labels.sqlite``, or a run folder holding one), read
    only, for the sessions of ``logs``: refused when the store labels other logs."""
    where = Path(path)
    if where.is_dir():
        where = where / STORE_FILE
    if not where.is_file():
        raise InputError(f"{where}: no label store here (`genir-eval label RUN_DIR` makes one)")
    store = LabelStore(where, readonly=True)
    try:
        digest = file_digest(Path(logs))
    except OSError as error:
        raise InputError(f"{logs}: cannot read the logs ({error.strerror or error})") from None
    store.check_input(digest, logs)
    return PeopleGold(store)


def with_people_gold(
    sessions: Iterable[Session], gold: PeopleGold, *, keep_input: bool = False
) -> Iterator[Session]:
    """``sessions`` with their gold replaced by the people's labels; with ``keep_input``,
    only the kinds of gold the people labelled (:meth:`PeopleGold.fields`) are replaced, the
    input's other gold (the users' ratings, thumbs, spans) is kept."""
    fields = gold.fields()
    for session in sessions:
        people = gold.gold(session)
        if keep_input and session.gold is not None:
            taken = {name: getattr(people, name) if people else None for name in fields}
            merged = replace(session.gold, **taken)
            yield replace(session, gold=None if merged == Gold() else merged)
        else:
            yield replace(session, gold=people)


def people_gold_note(gold: PeopleGold, store: str | Path) -> str:
    """The line ``run --labels`` and ``meta --labels`` print: how many labels the store
    holds, which kinds of gold they replace, and that the input's other gold is kept."""
    fields = gold.fields()
    replaced = ", ".join(f.replace("_", " ") for f in fields)
    if not fields:
        return (
            f"gold from people's labels: 0 items in {store} (nobody has labelled yet): the "
            "input's own gold is kept"
        )
    return (
        f"gold from people's labels: {len(gold)} items in {store}, in place of the input's "
        f"{replaced}; the input's other gold is kept"
    )


def write_gold_sessions(sessions: Iterable[Session], gold: PeopleGold, stream: IO[bytes]) -> int:
    """Canonical JSONL of ``sessions`` with the people's gold; how many sessions carry it."""
    count = 0
    for session in with_people_gold(sessions, gold):
        count += session.gold is not None
        stream.write(orjson.dumps(session_to_dict(session), option=orjson.OPT_APPEND_NEWLINE))
    return count
