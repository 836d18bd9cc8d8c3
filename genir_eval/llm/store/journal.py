"""The run journal: each judgment's outcome written as it completes, so a killed run resumes.

One row per :class:`JudgmentKey` (session, turn, item, judge, prompt_version, repeat) with
status ``ok`` or ``failed``, the judge's parsed value as JSON, the raw reply, the error class
and message, and the fingerprint (the cache key) of the request that produced it. A later run
skips every ``ok`` row whose fingerprint still matches the request (same prompt, model,
parameters) and retries ``failed`` ones.

The journal is table ``journal`` of a SQLite file: by default the cache file
(``.genir-cache/cache.sqlite``, next to the ``cache`` table), or a file of its own.
:meth:`Journal.record` returns once the row is committed (durable through ``kill -9``), and
concurrent records share one commit.

Memory does not grow with the replies: the journal keeps the 64-bit hash of each recorded
key in a :class:`~genir_eval.hashes.HashSet` (8 to 16 bytes a judgment; a Python set of
ints took about 90, the rows with their raw replies some 1.6 kB)
and the last :data:`RECENT` entries. :meth:`Journal.get` answers a key never recorded
from the hashes alone, without touching the file (every lookup of a fresh run), and reads
a recorded one from the table by its primary key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from genir_eval.hashes import HashSet
from genir_eval.llm.providers.base import ErrorClass, Failure, JudgmentKey
from genir_eval.llm.store._sqlite import SqliteWorker, storage_error

__all__ = ["JOURNAL_VERSION", "Journal", "JournalEntry", "JournalStatus", "as_stored"]

JOURNAL_VERSION = 1
#: What to do when the journal file cannot be used (said in the error).
JOURNAL_REMEDY = (
    "move it aside (the run starts over; the cache still answers the calls already paid "
    "for) or run with --journal none"
)
JournalStatus = Literal["ok", "failed"]
#: Entries kept in memory after they are recorded or read (the most recent ones).
RECENT = 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    key TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    turn INTEGER,
    item TEXT NOT NULL,
    judge TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    status TEXT NOT NULL,
    value TEXT,
    raw TEXT,
    error_class TEXT,
    error_message TEXT,
    attempts INTEGER,
    fingerprint TEXT,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_judge ON journal (judge, status);
"""


def _key_text(key: JudgmentKey) -> str:
    return json.dumps(list(key.as_tuple()), separators=(",", ":"), ensure_ascii=False)


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot journal a {type(value).__name__}")


def as_stored(value: Any) -> Any:
    """``value`` as the journal gives it back (dataclasses as dicts, sets as sorted lists,
    tuples as lists): what a stored value is compared with."""
    return json.loads(json.dumps(value, default=_json_default, ensure_ascii=False))


@dataclass(frozen=True)
class JournalEntry:
    key: JudgmentKey
    status: JournalStatus
    value: Any = None
    raw: str | None = None
    error_class: ErrorClass | None = None
    error_message: str | None = None
    attempts: int = 0
    fingerprint: str | None = None
    updated: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Journal:
    """A run's journal in ``path`` (created if missing).

    ``earlier`` are journals the same output folder kept from runs laid out otherwise (a Ray
    run with another number of workers, a local run resumed on Ray or the other way): a key
    this journal lacks is looked up there, so a resume pays only for what no journal holds.
    Only this journal is written."""

    def __init__(self, path: str | Path, *, earlier: Sequence[str | Path] = ()) -> None:
        self.path = Path(path)
        self._earlier: list[Journal] = []
        self._worker = SqliteWorker(self.path, _SCHEMA, what="journal", remedy=JOURNAL_REMEDY)
        self._recent: OrderedDict[str, JournalEntry] = OrderedDict()
        try:
            # every row is read (and its value parsed) once, so a damaged row is refused
            # now, not in the middle of a resumed run; only the keys' hashes stay
            self._known: HashSet = self._worker.run_sync(_load_keys)
        except (ValueError, TypeError) as error:  # a row whose JSON was damaged
            self._worker.close()
            raise storage_error(error, self.path, "journal", JOURNAL_REMEDY) from None
        except BaseException:
            self._worker.close()
            raise
        try:
            for other in earlier:
                self._earlier.append(Journal(other))
        except BaseException:
            self.close()
            raise

    def _remember(self, text: str, entry: JournalEntry) -> None:
        self._recent[text] = entry
        self._recent.move_to_end(text)
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)

    def get(self, key: JudgmentKey) -> JournalEntry | None:
        """The recorded outcome for ``key``, ``None`` if it was never recorded: this journal's
        row, else an ``ok`` row of an earlier journal (see the class)."""
        own = self._get(key)
        if (own is None or not own.ok) and self._earlier:
            for other in self._earlier:
                found = other.get(key)
                if found is not None and found.ok:
                    return found
        return own

    def _get(self, key: JudgmentKey) -> JournalEntry | None:
        text = _key_text(key)
        if hash(text) not in self._known:
            return None
        found = self._recent.get(text)
        if found is not None:
            self._recent.move_to_end(text)
            return found
        try:
            rows = self._worker.run_sync(lambda conn: _select(conn, "WHERE key = ?", (text,)))
        except (ValueError, TypeError) as error:
            raise storage_error(error, self.path, "journal", JOURNAL_REMEDY) from None
        if not rows:
            return None  # another key with the same hash
        self._remember(text, rows[0])
        return rows[0]

    def __len__(self) -> int:
        return int(
            self._worker.run_sync(lambda c: c.execute("SELECT COUNT(*) FROM journal").fetchone()[0])
        )

    def entries(self) -> list[JournalEntry]:
        """Every recorded entry (read from the file: for tests and tools, not for a run)."""
        return self._worker.run_sync(lambda conn: _select(conn, "", ()))

    def counts(self) -> dict[str, int]:
        out = {"ok": 0, "failed": 0}
        rows = self._worker.run_sync(
            lambda c: c.execute("SELECT status, COUNT(*) FROM journal GROUP BY status").fetchall()
        )
        for status, count in rows:
            out[status] = out.get(status, 0) + int(count)
        return out

    async def record(
        self,
        key: JudgmentKey,
        *,
        value: Any = None,
        failure: Failure | None = None,
        raw: str | None = None,
        fingerprint: str | None = None,
        attempts: int | None = None,
    ) -> JournalEntry:
        """Record ``key``'s outcome: ok with ``value`` (the judge's parsed label, any JSON-able
        value or dataclass) or failed with ``failure``. Returns once committed."""
        entry = JournalEntry(
            key=key,
            status="failed" if failure is not None else "ok",
            value=value,
            raw=raw,
            error_class=failure.error_class if failure is not None else None,
            error_message=failure.message if failure is not None else None,
            attempts=attempts if attempts is not None else (failure.attempts if failure else 1),
            fingerprint=fingerprint,
            updated=time.time(),
        )
        text = _key_text(key)
        values = (
            text,
            JOURNAL_VERSION,
            key.session_id,
            key.turn,
            key.item,
            key.judge,
            key.prompt_version,
            key.repeat,
            entry.status,
            json.dumps(value, default=_json_default, ensure_ascii=False),
            raw,
            entry.error_class,
            entry.error_message,
            entry.attempts,
            fingerprint,
            entry.updated,
        )

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO journal (key, version, session_id, turn, item, judge, "
                "prompt_version, repeat, status, value, raw, error_class, error_message, "
                "attempts, fingerprint, updated) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        await self._worker.run(write, write=True)
        self._known.add(hash(text))
        self._remember(text, entry)
        return entry

    def close(self) -> None:
        for other in self._earlier:
            other.close()
        self._worker.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_COLUMNS = (
    "session_id, turn, item, judge, prompt_version, repeat, status, value, raw, "
    "error_class, error_message, attempts, fingerprint, updated"
)


def _entry(row: tuple[Any, ...]) -> JournalEntry:
    sid, turn, item, judge, pv, rep, status, value, raw, ecls, emsg, att, fp, upd = row
    return JournalEntry(
        key=JudgmentKey(sid, turn, item, judge, pv, rep),
        status=status,
        value=json.loads(value) if value is not None else None,
        raw=raw,
        error_class=ecls,
        error_message=emsg,
        attempts=att or 0,
        fingerprint=fp,
        updated=upd,
    )


def _select(conn: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> list[JournalEntry]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM journal {where}", args).fetchall()
    return [_entry(row) for row in rows]


def _load_keys(conn: sqlite3.Connection) -> HashSet:
    """The hashes of the recorded keys, each row parsed on the way (one at a time)."""
    known = HashSet()
    for row in conn.execute(f"SELECT {_COLUMNS} FROM journal"):
        known.add(hash(_key_text(_entry(row).key)))
    return known
