"""The labels people give, in SQLite beside the run (``RUN_DIR/labels.sqlite``).

Write-ahead logging, one transaction per save: several labellers (and several servers on
one store) save at once without losing a label, and a server killed mid-save leaves every
label it answered for on disk (SQLite's commit is durable before the answer is sent). A
label is never overwritten: undo marks the labeller's last action undone, and the label an
item has from a person is their last one not undone. Each row keeps who, when, how long,
the comment, and the judges' label the item was shown against (and whether it was shown).

A store says what it is and whose it is: its ``store`` table holds the format's name, its
version and, once a server has opened it over a run, that run's digest and its logs'
(:class:`StoreOwner`). A file is looked at read-only first and anything else (another
SQLite file, a journal, a cache) is refused untouched: no table is made in it and its
journal mode is left as it was. Every row is checked as it is read
(:mod:`genir_eval.runner.label.rows`: a value off its queue's scale, a key that is not an
item's, a name, a time), and a bad one is refused with the file, the table, the row's id,
the field and the value.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from genir_eval.errors import ConfigError, InputError
from genir_eval.runner.label.keys import BadKey, item_key, legacy_parts
from genir_eval.runner.label.rows import (
    Event,
    check_labeller,
    checked_event,
    checked_queue_row,
)

__all__ = [
    "STORE_FILE",
    "STORE_FORMAT",
    "STORE_VERSION",
    "LEASE_SECONDS",
    "LabelStore",
    "StoreOwner",
    "Event",
    "check_labeller",
    "NotInQueue",
    "NameTaken",
    "new_session",
]

STORE_FILE = "labels.sqlite"
STORE_FORMAT = "genir-eval label store"
STORE_VERSION = 2
#: How long an item handed to a labeller stays theirs while they read it: others are not
#: given it meanwhile when it already has as many people as ``--per-item`` asks.
LEASE_SECONDS = 30 * 60

_SCHEMA = """
CREATE TABLE IF NOT EXISTS store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queue (
    queue TEXT NOT NULL, position INTEGER NOT NULL, item TEXT NOT NULL,
    judge_label REAL, PRIMARY KEY (queue, item));
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL, item TEXT NOT NULL, labeller TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('label', 'skip')),
    value REAL, comment TEXT NOT NULL DEFAULT '',
    judge_label REAL, judge_shown INTEGER NOT NULL DEFAULT 0,
    seconds REAL, saved_at TEXT NOT NULL, undone_at TEXT);
CREATE INDEX IF NOT EXISTS events_by_labeller ON events (queue, labeller, undone_at);
CREATE INDEX IF NOT EXISTS events_by_item ON events (queue, item, undone_at);
CREATE TABLE IF NOT EXISTS labellers (
    name TEXT PRIMARY KEY, session TEXT NOT NULL, claimed_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS leases (
    queue TEXT NOT NULL, labeller TEXT NOT NULL, item TEXT NOT NULL, until REAL NOT NULL,
    PRIMARY KEY (queue, labeller));
"""


@dataclass(frozen=True)
class StoreOwner:
    """Whose labels a store holds: the run's digest (what its items were made from) and
    the SHA-256 of the logs it labels (``None`` for an arena's pairs)."""

    run: str
    input_sha256: str | None


class NotInQueue(LookupError):
    """A label for an item the queue does not hold (or a queue the store does not)."""


class NameTaken(ValueError):
    """A labeller's name another person (another browser session) already labels under."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def new_session() -> str:
    """A labeller session's id: what tells two people who typed the same name apart."""
    return secrets.token_urlsafe(18)


class LabelStore:
    """The labels of one run folder. Opens a connection per call (threads and processes
    share the file, not a connection); writes run in ``BEGIN IMMEDIATE`` transactions.

    ``create`` makes the store when ``path`` does not exist (or is empty) and migrates a
    version 1 store; otherwise a missing store is an :class:`InputError`. ``readonly``
    opens every connection read-only (the readers: ``run --labels``, ``label export``).
    ``owner``, when given, must be the store's (another run's store is refused); a store
    that names no owner yet is given it by :meth:`claim`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = False,
        readonly: bool = False,
        owner: StoreOwner | None = None,
    ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if self.path.exists() and not self.path.is_file():
            raise InputError(f"{self.path}: not a file (a label store is one SQLite file)")
        if not self.path.exists() or self.path.stat().st_size == 0:
            if not create:
                raise InputError(
                    f"{self.path}: no label store here (`genir-eval label RUN_DIR` makes one)"
                )
            self._make()
            return
        settings = self._inspect()
        if settings.get("version") == "1":
            if readonly or not create:
                raise InputError(
                    f"{self.path}: a label store of an older genir-eval (version 1, item keys "
                    "joined by colons): `genir-eval label RUN_DIR --store "
                    f"{self.path}` migrates it to version {STORE_VERSION}"
                )
            self._migrate()
        if owner is not None:
            self.check_owner(owner)

    # -- opening ------------------------------------------------------------------------

    def _make(self) -> None:
        try:
            with self._connect(readonly=False) as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.executemany(
                    "INSERT OR IGNORE INTO store VALUES (?, ?)",
                    [("format", STORE_FORMAT), ("version", str(STORE_VERSION))],
                )
                db.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise InputError(f"{self.path}: cannot make a label store here ({error})") from None

    def _inspect(self) -> dict[str, str]:
        """The ``store`` table of an existing file, read through a read-only connection;
        an :class:`InputError` (the file untouched) when it is not a genir-eval store or
        one of a version this genir-eval does not read."""
        untouched = "refused, nothing was written to it"
        try:
            with self._connect(readonly=True) as db:
                tables = {
                    str(r[0])
                    for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                }
                if not {"store", "queue", "events"} <= tables:
                    raise InputError(
                        f"{self.path}: not a genir-eval label store (it has no store, queue "
                        f"and events tables; {untouched})"
                    )
                rows = db.execute("SELECT key, value FROM store").fetchall()
        except sqlite3.DatabaseError as error:
            raise InputError(
                f"{self.path}: not a genir-eval label store ({error}; {untouched})"
            ) from None
        settings = {str(k): v for k, v in rows}
        version = settings.get("version")
        if settings.get("format") is None and version == "1":
            return {"version": "1"}
        if settings.get("format") != STORE_FORMAT:
            raise InputError(
                f"{self.path}: not a genir-eval label store (table store, key format: "
                f"{settings.get('format')!r}, expected {STORE_FORMAT!r}; {untouched})"
            )
        if version != str(STORE_VERSION):
            raise InputError(
                f"{self.path}: table store, key version: {version!r}; this genir-eval reads "
                f"label stores of version {STORE_VERSION}"
            )
        return {str(k): str(v) for k, v in settings.items()}

    def _migrate(self) -> None:
        """A version 1 store made version 2: its item keys rewritten from the colon-joined
        form, in one transaction; refused (nothing changed) when a key is ambiguous."""
        with self._write() as db:
            renamed: dict[str, str] = {}
            for table, ident in (("queue", "position"), ("events", "id")):
                for where, item in db.execute(f"SELECT {ident}, item FROM {table}"):
                    try:
                        kind, parts = legacy_parts(str(item))
                    except BadKey as error:
                        raise InputError(
                            f"{self.path}: table {table}, {ident} {where}: item: {item!r}: "
                            f"{error}; this version 1 store cannot be migrated"
                        ) from None
                    renamed[str(item)] = item_key(kind, *parts)
            for old, new in renamed.items():
                db.execute("UPDATE queue SET item=? WHERE item=?", (new, old))
                db.execute("UPDATE events SET item=? WHERE item=?", (new, old))
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.executemany(
                "INSERT OR REPLACE INTO store VALUES (?, ?)",
                [("format", STORE_FORMAT), ("version", str(STORE_VERSION))],
            )

    def owner(self) -> StoreOwner | None:
        """The run and logs the store was made for (``None`` before a server claimed it)."""
        run = self.setting("run")
        if run is None:
            return None
        return StoreOwner(run, self.setting("input_sha256") or None)

    def check_owner(self, owner: StoreOwner) -> None:
        """Refuse the store when it was made for another run than ``owner``'s."""
        stored = self.owner()
        if stored is not None and stored.run != owner.run:
            raise ConfigError(
                f"{self.path}: this label store holds another run's labels (table store, key "
                f"run: {stored.run[:12]}; this run folder's is {owner.run[:12]}: another run, "
                "or this one run again since): give that run's folder, or another --store "
                "for this one"
            )

    def check_input(self, digest: str, input_path: str | Path) -> None:
        """Refuse the store when the logs it labels are not ``input_path`` (SHA-256
        ``digest``): its labels are about other sessions."""
        stored = self.owner()
        if stored is None:
            raise InputError(
                f"{self.path}: the label store names no run yet (`genir-eval label RUN_DIR "
                f"--store {self.path}` opens it over its run)"
            )
        if stored.input_sha256 != digest:
            what = (
                "other logs"
                if stored.input_sha256
                else "no logs it can name (an arena's pairs, or a run that kept no digest of "
                "its logs)"
            )
            raise InputError(
                f"{self.path}: these labels are about {what}, not {input_path} (SHA-256 "
                f"{(stored.input_sha256 or '-')[:12]} in the store, {digest[:12]} now): "
                "label the run made from these logs"
            )

    def claim(self, owner: StoreOwner) -> None:
        """Name ``owner`` as the store's when it names none yet; refuse another's."""
        with self._write() as db:
            row = db.execute("SELECT value FROM store WHERE key='run'").fetchone()
            if row is None:
                db.executemany(
                    "INSERT INTO store VALUES (?, ?)",
                    [("run", owner.run), ("input_sha256", owner.input_sha256 or "")],
                )
        self.check_owner(owner)

    @contextmanager
    def _connect(self, readonly: bool | None = None) -> Iterator[sqlite3.Connection]:
        readonly = self.readonly if readonly is None else readonly
        if readonly:
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            db = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)
        else:
            db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout=60000")
            if not readonly:
                db.execute("PRAGMA synchronous=FULL")
            yield db
        finally:
            db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.readonly:
            raise InputError(f"{self.path}: opened read-only")
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- the queues ---------------------------------------------------------------------

    def setting(self, key: str) -> str | None:
        with self._connect() as db:
            row = db.execute("SELECT value FROM store WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def ensure_queue(
        self, queue: str, items: Sequence[tuple[str, float | None]], *, per_item: int
    ) -> list[str]:
        """The queue's item keys in their stored order: stored now from ``items`` on the
        first start, read back afterwards (a second server, a restart) and refused when
        they are not the same items (the store belongs to another run) or ``per_item``
        differs from the stored one."""
        with self._write() as db:
            rows = db.execute(
                "SELECT rowid, item, judge_label FROM queue WHERE queue=? ORDER BY position",
                (queue,),
            ).fetchall()
            stored = [checked_queue_row(self.path, queue, r) for r in rows]
            k_key = f"per_item:{queue}"
            row = db.execute("SELECT value FROM store WHERE key=?", (k_key,)).fetchone()
            if not stored:
                db.executemany(
                    "INSERT INTO queue VALUES (?, ?, ?, ?)",
                    [(queue, i, key, judged) for i, (key, judged) in enumerate(items)],
                )
                db.execute("INSERT OR REPLACE INTO store VALUES (?, ?)", (k_key, str(per_item)))
                return [key for key, _ in items]
        if set(stored) != {key for key, _ in items}:
            raise ConfigError(
                f"{self.path}: the {queue} queue stored here holds other items than this run "
                "folder has (the store was made for another run): move it away or give --store"
            )
        if row is not None and str(row[0]) != str(per_item):
            raise ConfigError(
                f"{self.path}: the {queue} queue shows each item to {row[0]} labellers, not "
                f"{per_item} (--per-item): start with --per-item {row[0]}"
            )
        return stored

    def judge_label(self, queue: str, item: str) -> float | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT rowid, item, judge_label FROM queue WHERE queue=? AND item=?",
                (queue, item),
            ).fetchone()
        if row is None:
            raise NotInQueue(f"item {item!r} is not in the {queue!r} queue")
        checked_queue_row(self.path, queue, row)
        return None if row[2] is None else float(row[2])  # checked just above

    # -- who labels ---------------------------------------------------------------------

    def claim_name(self, labeller: str, session: str) -> None:
        """Give ``labeller`` to ``session`` when nobody holds the name; :class:`NameTaken`
        when another session does (two people who typed the same name are told, not
        merged)."""
        check_labeller(labeller)
        with self._connect() as db:  # the common case, a name already held, reads only
            row = db.execute("SELECT session FROM labellers WHERE name=?", (labeller,)).fetchone()
        if row is None:
            with self._write() as db:
                row = db.execute(
                    "SELECT session FROM labellers WHERE name=?", (labeller,)
                ).fetchone()
                if row is None:
                    db.execute(
                        "INSERT INTO labellers VALUES (?, ?, ?)", (labeller, session, _now())
                    )
                    return
        if str(row[0]) != session:
            raise NameTaken(
                f"labeller: the name {labeller!r} is taken by someone else labelling here: "
                "choose another name (or come back from the browser you used before)"
            )

    # -- saving ---------------------------------------------------------------------------

    def save(
        self,
        queue: str,
        item: str,
        labeller: str,
        *,
        value: float | None,
        comment: str = "",
        judge_shown: bool = False,
        seconds: float | None = None,
    ) -> Event:
        """Save a label (``value``) or a skip (``None``) in one transaction; raises
        :class:`NotInQueue` for an item the queue does not hold. The labeller's lease on
        the item ends."""
        check_labeller(labeller)
        with self._write() as db:
            row = db.execute(
                "SELECT judge_label FROM queue WHERE queue=? AND item=?", (queue, item)
            ).fetchone()
            if row is None:
                raise NotInQueue(f"item {item!r} is not in the {queue!r} queue")
            saved_at = _now()
            cursor = db.execute(
                "INSERT INTO events (queue, item, labeller, action, value, comment, "
                "judge_label, judge_shown, seconds, saved_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    queue,
                    item,
                    labeller,
                    "skip" if value is None else "label",
                    value,
                    comment,
                    row[0],
                    int(judge_shown),
                    seconds,
                    saved_at,
                ),
            )
            event_id = int(cursor.lastrowid or 0)
            db.execute(
                "DELETE FROM leases WHERE queue=? AND labeller=? AND item=?",
                (queue, labeller, item),
            )
        return Event(
            event_id,
            queue,
            item,
            labeller,
            "skip" if value is None else "label",
            value,
            comment,
            row[0],
            judge_shown,
            seconds,
            saved_at,
        )

    def undo(self, queue: str, labeller: str) -> Event | None:
        """Mark ``labeller``'s last action on ``queue`` undone; the action, or ``None``
        when there is nothing left to undo."""
        check_labeller(labeller)
        with self._write() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM events WHERE queue=? AND labeller=? AND undone_at IS "
                "NULL ORDER BY id DESC LIMIT 1",
                (queue, labeller),
            ).fetchone()
            if row is None:
                return None
            event = checked_event(self.path, row)
            db.execute("UPDATE events SET undone_at=? WHERE id=?", (_now(), row[0]))
        return event

    # -- reading --------------------------------------------------------------------------

    def next_item(
        self, queue: str, labeller: str, per_item: int, *, now: float | None = None
    ) -> str | None:
        """The item ``labeller`` should label next, leased to them for
        :data:`LEASE_SECONDS` (in place of any lease they held on the queue): the first of
        the queue they have not acted on whose labels and other people's live leases
        number fewer than ``per_item``, so no item is out to more people at once than it
        needs; ``None`` when there is none."""
        check_labeller(labeller)
        moment = time.time() if now is None else now
        with self._write() as db:
            db.execute("DELETE FROM leases WHERE until <= ?", (moment,))
            row = db.execute(
                """SELECT q.item FROM queue q
                   WHERE q.queue = ?1
                     AND NOT EXISTS (SELECT 1 FROM events e WHERE e.queue = ?1
                         AND e.item = q.item AND e.labeller = ?2 AND e.undone_at IS NULL)
                     AND (EXISTS (SELECT 1 FROM leases l WHERE l.queue = ?1
                             AND l.item = q.item AND l.labeller = ?2)
                          OR (SELECT COUNT(DISTINCT e.labeller) FROM events e WHERE e.queue = ?1
                             AND e.item = q.item AND e.action = 'label'
                             AND e.undone_at IS NULL)
                           + (SELECT COUNT(*) FROM leases l WHERE l.queue = ?1
                             AND l.item = q.item AND l.labeller != ?2) < ?3)
                   ORDER BY q.position LIMIT 1""",
                (queue, labeller, per_item),
            ).fetchone()
            if row is None:
                db.execute("DELETE FROM leases WHERE queue=? AND labeller=?", (queue, labeller))
                return None
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?)",
                (queue, labeller, row[0], moment + LEASE_SECONDS),
            )
        return str(row[0])

    def events(self, queue: str | None = None, *, live: bool = True) -> list[Event]:
        """Saved actions in order (only those not undone when ``live``), each checked."""
        where = ["1=1"]
        args: list[str] = []
        if queue is not None:
            where.append("queue=?")
            args.append(queue)
        if live:
            where.append("undone_at IS NULL")
        with self._connect() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM events WHERE {' AND '.join(where)} ORDER BY id", args
            ).fetchall()
            queued = {
                (str(q), str(i))
                for q, i in db.execute(
                    "SELECT queue, item FROM queue" + (" WHERE queue=?" if queue else ""),
                    [queue] if queue else [],
                )
            }
        events = [checked_event(self.path, r) for r in rows]
        for event in events:
            if (event.queue, event.item) not in queued:
                raise InputError(
                    f"{self.path}: table events, id {event.id}: item: {event.item!r} is not "
                    f"in the {event.queue} queue (table queue): a label of no item"
                )
        return events

    def labels(self, queue: str) -> dict[str, dict[str, Event]]:
        """Item -> labeller -> their label (their last one not undone; skips left out)."""
        out: dict[str, dict[str, Event]] = {}
        for event in self.events(queue):
            if event.action == "label":
                out.setdefault(event.item, {})[event.labeller] = event
        return out

    def done_by(self, queue: str, labeller: str) -> tuple[int, float | None]:
        """How many items ``labeller`` has labelled or skipped, and their mean seconds per
        label."""
        with self._connect() as db:
            count, seconds = db.execute(
                "SELECT COUNT(DISTINCT item), AVG(CASE WHEN action='label' THEN seconds END) "
                "FROM events WHERE queue=? AND labeller=? AND undone_at IS NULL",
                (queue, labeller),
            ).fetchone()
        return int(count), None if seconds is None else float(seconds)


_COLUMNS = (
    "id, queue, item, labeller, action, value, comment, judge_label, judge_shown, seconds, saved_at"
)
