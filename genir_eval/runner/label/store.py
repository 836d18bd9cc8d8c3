"""The labels people give, in SQLite beside the run (``RUN_DIR/labels.sqlite``).

Write-ahead logging, one transaction per save: several labellers (and several servers on
one store) save at once without losing a label, and a server killed mid-save leaves every
label it answered for on disk (SQLite's commit is durable before the answer is sent). A
label is never overwritten: undo marks the labeller's last action undone, and the label an
item has from a person is their last one not undone. Each row keeps who, when, how long,
the comment, and the judges' label the item was shown against (and whether it was shown).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from genir_eval.errors import ConfigError, InputError

__all__ = ["STORE_FILE", "STORE_VERSION", "LabelStore", "Event", "check_labeller", "NotInQueue"]

STORE_FILE = "labels.sqlite"
STORE_VERSION = 1
_LABELLER = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")

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
"""


class NotInQueue(LookupError):
    """A label for an item the queue does not hold (or a queue the store does not)."""


def check_labeller(name: str) -> str:
    """A labeller's name as given, or a :class:`ValueError` saying what a name may hold."""
    if not isinstance(name, str) or not _LABELLER.fullmatch(name):
        raise ValueError(
            "labeller: a name of 1-40 letters, digits, spaces, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


@dataclass(frozen=True)
class Event:
    """One saved action: a label (``value``) or a skip (``value`` ``None``)."""

    id: int
    queue: str
    item: str
    labeller: str
    action: str
    value: float | None
    comment: str
    judge_label: float | None
    judge_shown: bool
    seconds: float | None
    saved_at: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class LabelStore:
    """The labels of one run folder. Opens a connection per call (threads and processes
    share the file, not a connection); writes run in ``BEGIN IMMEDIATE`` transactions."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                row = db.execute("SELECT value FROM store WHERE key='version'").fetchone()
                if row is None:
                    db.execute(
                        "INSERT OR IGNORE INTO store VALUES ('version', ?)", (str(STORE_VERSION),)
                    )
                elif row[0] != str(STORE_VERSION):
                    raise InputError(
                        f"{self.path}: store version {row[0]}, this genir-eval reads "
                        f"version {STORE_VERSION}"
                    )
        except sqlite3.DatabaseError as error:
            raise InputError(f"{self.path}: not a label store ({error})") from None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout=60000")
            db.execute("PRAGMA synchronous=FULL")
            yield db
        finally:
            db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
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
            stored = [
                r[0]
                for r in db.execute(
                    "SELECT item FROM queue WHERE queue=? ORDER BY position", (queue,)
                )
            ]
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
        if row is not None and int(row[0]) != per_item:
            raise ConfigError(
                f"{self.path}: the {queue} queue shows each item to {row[0]} labellers, not "
                f"{per_item} (--per-item): start with --per-item {row[0]}"
            )
        return stored

    def judge_label(self, queue: str, item: str) -> float | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT judge_label FROM queue WHERE queue=? AND item=?", (queue, item)
            ).fetchone()
        if row is None:
            raise NotInQueue(f"item {item!r} is not in the {queue!r} queue")
        return None if row[0] is None else float(row[0])

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
        :class:`NotInQueue` for an item the queue does not hold."""
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
            db.execute("UPDATE events SET undone_at=? WHERE id=?", (_now(), row[0]))
        return _event(row)

    # -- reading --------------------------------------------------------------------------

    def next_item(self, queue: str, labeller: str, per_item: int) -> str | None:
        """The first item of the queue ``labeller`` has not acted on and fewer than
        ``per_item`` people have labelled; ``None`` when there is none."""
        with self._connect() as db:
            row = db.execute(
                """SELECT q.item FROM queue q
                   WHERE q.queue = ?1
                     AND NOT EXISTS (SELECT 1 FROM events e WHERE e.queue = ?1
                         AND e.item = q.item AND e.labeller = ?2 AND e.undone_at IS NULL)
                     AND (SELECT COUNT(DISTINCT e.labeller) FROM events e WHERE e.queue = ?1
                         AND e.item = q.item AND e.action = 'label'
                         AND e.undone_at IS NULL) < ?3
                   ORDER BY q.position LIMIT 1""",
                (queue, labeller, per_item),
            ).fetchone()
        return None if row is None else str(row[0])

    def events(self, queue: str | None = None, *, live: bool = True) -> list[Event]:
        """Saved actions in order (only those not undone when ``live``)."""
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
        return [_event(r) for r in rows]

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


def _event(row: Sequence[object]) -> Event:
    return Event(
        int(row[0]),  # type: ignore[call-overload]
        str(row[1]),
        str(row[2]),
        str(row[3]),
        str(row[4]),
        None if row[5] is None else float(row[5]),  # type: ignore[arg-type]
        str(row[6] or ""),
        None if row[7] is None else float(row[7]),  # type: ignore[arg-type]
        bool(row[8]),
        None if row[9] is None else float(row[9]),  # type: ignore[arg-type]
        str(row[10]),
    )
