"""The arena's answers on disk: every system's answers read once, matched, and read back a
window at a time.

An arena of ``n`` queries and ``k`` systems meets ``n * k`` answers (about 5 KB each with
their source texts), too many to hold at a million queries. :class:`AnswerStore` writes each
answer, as it is read, to a SQLite file in the run folder (its canonical JSON, keyed by the
match key: session id and turn index, or the normalised query text with ``match="query"``),
checks and matches the keys there (a key one system lacks is a located error, or with
``match="query"`` an unmatched answer counted), numbers the matched queries in the first
system's order and gives back the answers of the queries a window of pairs needs. What stays
in memory is SQLite's page cache and the window being judged; the file is removed when the
store is closed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from genir_eval.errors import InputError, StorageError
from genir_eval.ingest import iter_sessions
from genir_eval.judges.prompting import session_language
from genir_eval.records import Session, Turn, session_from_dict, session_to_dict

__all__ = ["System", "AnswerStore", "Answer", "normalised_query"]


@dataclass(frozen=True)
class System:
    """One system's logs: ``format`` detected when ``None``; ``sources`` a side file of
    source texts (as ``run`` reads them)."""

    name: str
    path: Path
    format: str | None = None
    sources: Path | None = None


@dataclass(frozen=True)
class Answer:
    """One system's answer to a matched query, and the language of its session."""

    turn: Turn
    language: str


def normalised_query(text: str) -> str:
    """Case-folded, accents and punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


#: Positions read back by one statement (SQLite allows 32,766 variables a statement).
_POSITIONS_A_STATEMENT = 500

#: The answer store's name in the stale-file pattern ``.NAME.<pid>.<random>.part``.
STORE_NAME = "arena-answers.sqlite"

_SCHEMA = """
CREATE TABLE answers (
    key TEXT NOT NULL, turn INTEGER NOT NULL, system INTEGER NOT NULL, seq INTEGER NOT NULL,
    session_id TEXT NOT NULL, turn_index INTEGER NOT NULL, language TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE UNIQUE INDEX answers_by_key ON answers (key, turn, system);
CREATE INDEX answers_in_order ON answers (system, seq);
CREATE TABLE queries (
    position INTEGER PRIMARY KEY, key TEXT NOT NULL, turn INTEGER NOT NULL,
    session_id TEXT NOT NULL, turn_index INTEGER NOT NULL
);
"""


class AnswerStore:
    """The systems' answers in a SQLite file in ``folder`` (see the module docstring).

    After :meth:`read`, ``queries`` is the number of matched queries (positions ``0`` to
    ``queries - 1``, in the first system's order) and ``unmatched`` each system's answers
    left out."""

    def __init__(self, folder: Path) -> None:
        # a private part file (genir_eval.stale): the next arena into the folder removes the
        # one a killed arena left (168 MB for a large one), as a run removes its parts
        self.path = folder / f".{STORE_NAME}.{os.getpid()}.{secrets.token_hex(6)}.part"
        try:
            self._db = sqlite3.connect(self.path)
            # a scratch file removed at the end: nothing to recover after a crash
            self._db.execute("PRAGMA journal_mode = OFF")
            self._db.execute("PRAGMA synchronous = OFF")
            self._db.execute("PRAGMA page_size = 16384")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as error:
            self.close()
            raise StorageError(
                f"cannot write the arena's answer store: {error}", path=str(self.path)
            ) from None
        self.queries = 0
        self.unmatched: dict[str, int] = {}

    def close(self) -> None:
        """Close the file and remove it (closing twice is harmless)."""
        if hasattr(self, "_db"):
            self._db.close()
        for suffix in ("", "-journal"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass

    def __enter__(self) -> AnswerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, systems: Sequence[System], match: str) -> None:
        """Read every system's answers and match them: without ``match="query"`` a key one
        system lacks is a located error; with it, the unmatched answers are counted."""
        try:
            with self._db:
                for number, system in enumerate(systems):
                    self.unmatched[system.name] = self._read_system(number, system, match)
                if match == "session":
                    for number in range(1, len(systems)):
                        self._check_same(systems, number)
                self._number_queries(len(systems))
                if match != "session":
                    self._count_unmatched(systems)
        except sqlite3.Error as error:
            raise StorageError(
                f"cannot write the arena's answer store: {error}", path=str(self.path)
            ) from None
        if not self.queries:
            raise InputError(
                "no query is answered by every system (--match query matches by query text)",
                path=str(systems[0].path),
            )

    def _read_system(self, number: int, system: System, match: str) -> int:
        """Stores the system's answers; how many repeated a key (``match="query"``: the same
        query asked twice; the first answer is kept)."""
        repeated = 0
        stream = iter_sessions(
            system.path,
            format=system.format,  # type: ignore[arg-type]
            sources=system.sources,
        )
        insert = (
            "INSERT OR IGNORE INTO answers (key, turn, system, seq, session_id, turn_index, "
            "language, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        seq = 0
        for session in stream:
            language = session_language(session)
            for turn in session.turns:
                key, index = (
                    (session.session_id, turn.index)
                    if match == "session"
                    else (normalised_query(turn.query), 1)
                )
                body = json.dumps(
                    session_to_dict(Session(session.session_id, (turn,)))["turns"][0],
                    ensure_ascii=False,
                )
                cursor = self._db.execute(
                    insert,
                    (key, index, number, seq, session.session_id, turn.index, language, body),
                )
                seq += 1
                if cursor.rowcount == 0:
                    if match == "session":
                        raise InputError(
                            f"session {session.session_id!r} appears twice",
                            path=str(system.path),
                        )
                    repeated += 1
        return repeated

    def _check_same(self, systems: Sequence[System], number: int) -> None:
        first, other = systems[0], systems[number]
        missing = (
            "SELECT key, turn FROM answers AS mine WHERE system = ? AND NOT EXISTS "
            "(SELECT 1 FROM answers AS theirs WHERE theirs.key = mine.key "
            "AND theirs.turn = mine.turn AND theirs.system = ?) ORDER BY seq LIMIT 1"
        )

        def named(system: System) -> str:
            return f"{system.name} ({system.path})" if system is first else system.name

        for mine, theirs in ((0, number), (number, 0)):
            found = self._db.execute(missing, (mine, theirs)).fetchone()
            if found is not None:
                raise InputError(
                    f"session {found[0]!r} turn {found[1]} is answered by "
                    f"{named(systems[mine])} but not by {named(systems[theirs])}: the systems' "
                    "sessions must match (--match query matches by query text)",
                    path=str(other.path),
                )

    def _number_queries(self, n_systems: int) -> None:
        """The keys every system answered, numbered from 0 in the first system's order; a
        query is named by the first system's session id and turn index."""
        self._db.execute(
            "INSERT INTO queries (position, key, turn, session_id, turn_index) "
            "SELECT ROW_NUMBER() OVER (ORDER BY seq) - 1, key, turn, session_id, turn_index "
            "FROM answers AS first WHERE system = 0 AND (SELECT count(*) FROM answers AS any_ "
            "WHERE any_.key = first.key AND any_.turn = first.turn) = ?",
            (n_systems,),
        )
        self._db.execute("CREATE UNIQUE INDEX queries_by_key ON queries (key, turn)")
        # how gold rows name a query (answered()): one lookup a row, not a scan of them all
        self._db.execute("CREATE INDEX queries_by_session ON queries (session_id, turn_index)")
        self.queries = int(self._db.execute("SELECT count(*) FROM queries").fetchone()[0])

    def _count_unmatched(self, systems: Sequence[System]) -> None:
        counts = self._db.execute(
            "SELECT system, count(*) FROM answers AS mine WHERE NOT EXISTS (SELECT 1 FROM "
            "queries WHERE queries.key = mine.key AND queries.turn = mine.turn) GROUP BY system"
        )
        for number, count in counts:
            self.unmatched[systems[number].name] += int(count)

    def position(self, key: str, turn: int) -> int | None:
        """The matched query's position, ``None`` when no query has this key."""
        found = self._db.execute(
            "SELECT position FROM queries WHERE key = ? AND turn = ?", (key, turn)
        ).fetchone()
        return None if found is None else int(found[0])

    def answered(self, session_id: str, turn: int) -> bool:
        """Whether a matched query is the first system's ``session_id`` and turn ``turn``
        (how ``pairs.jsonl`` and gold rows name a query, whichever way answers matched)."""
        found = self._db.execute(
            "SELECT 1 FROM queries WHERE session_id = ? AND turn_index = ? LIMIT 1",
            (session_id, turn),
        ).fetchone()
        return found is not None

    def where(self, position: int) -> tuple[str, int]:
        """How rows name the query: the first system's session id and turn index."""
        found = self._db.execute(
            "SELECT session_id, turn_index FROM queries WHERE position = ?", (position,)
        ).fetchone()
        return str(found[0]), int(found[1])

    def answers(self, wanted: Iterable[tuple[int, int]]) -> dict[tuple[int, int], Answer]:
        """The answers of ``(position, system number)``, read back from the file (the
        queries' answers a few hundred positions a statement)."""
        places = set(wanted)
        positions = sorted({position for position, _ in places})
        out: dict[tuple[int, int], Answer] = {}
        for start in range(0, len(positions), _POSITIONS_A_STATEMENT):
            chunk = positions[start : start + _POSITIONS_A_STATEMENT]
            rows = self._db.execute(
                "SELECT queries.position, answers.system, answers.session_id, "
                "answers.language, answers.body FROM queries JOIN answers "
                "ON answers.key = queries.key AND answers.turn = queries.turn "
                f"WHERE queries.position IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            for position, system, session_id, language, body in rows:
                if (position, system) in places:
                    turns = [json.loads(body)]
                    session = session_from_dict({"session_id": session_id, "turns": turns})
                    out[(position, system)] = Answer(session.turns[0], language)
        return out
