"""The rows of a label store, checked as they are read: each field against what it may
hold (a value on its queue's scale, an item key of its queue's kind, a labeller's name, a
finite number, a time), a bad one an :class:`InputError` naming the file, the table, the
row's id, the field and the value. A hand-edited store is refused, never read with a
default in place of what it holds."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.kind_names import CITATION_SUPPORT, LINK_USEFULNESS, PAIRWISE
from genir_eval.runner.label.items import (
    CHOICES,
    NUGGET_QUEUE,
    SESSION_SATISFACTION,
    TURN_SATISFACTION,
)
from genir_eval.runner.label.keys import BadKey, parse_item_key

__all__ = ["Event", "QUEUE_KEY_KIND", "check_labeller", "checked_event", "checked_queue_row"]

_LABELLER = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
#: The kind of item key each queue holds (genir_eval/runner/label/keys.py).
QUEUE_KEY_KIND = {
    LINK_USEFULNESS: "link",
    CITATION_SUPPORT: "support",
    TURN_SATISFACTION: "turn",
    SESSION_SATISFACTION: "session",
    PAIRWISE: "pair",
    NUGGET_QUEUE: "nugget",
}


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


def checked_event(path: Path, row: Sequence[Any]) -> Event:
    """An events row, checked field by field (:class:`InputError` naming the file, the
    table, the row's id, the field and the value)."""
    where = f"{path}: table events, id {row[0]!r}"
    queue = row[1]
    if queue not in CHOICES:
        raise InputError(f"{where}: queue: {queue!r} is not one of {', '.join(CHOICES)}")
    item = _item(where, queue, row[2])
    labeller = row[3]
    try:
        check_labeller(labeller)
    except ValueError as error:
        raise InputError(f"{where}: {error} (got {labeller!r})") from None
    action = row[4]
    value = _optional_number(where, "value", row[5])
    if action == "label":
        allowed = [c.value for c in CHOICES[queue]]
        if value is None or value not in allowed:
            raise InputError(
                f"{where}: value: {row[5]!r} is not one of "
                f"{', '.join(f'{v:g}' for v in sorted(allowed))} ({queue})"
            )
    elif action == "skip":
        if value is not None:
            raise InputError(f"{where}: value: {row[5]!r} on a skip (a skip has none)")
    else:
        raise InputError(f"{where}: action: {action!r} is not 'label' or 'skip'")
    comment = row[6]
    if comment is not None and not isinstance(comment, str):
        raise InputError(f"{where}: comment: {comment!r} is not text")
    judge = _optional_number(where, "judge_label", row[7])
    if row[8] not in (0, 1):
        raise InputError(f"{where}: judge_shown: {row[8]!r} is not 0 or 1")
    seconds = _optional_number(where, "seconds", row[9])
    if seconds is not None and seconds < 0:
        raise InputError(f"{where}: seconds: {row[9]!r} is below 0")
    saved_at = _time(where, "saved_at", row[10])
    return Event(
        int(row[0]),
        queue,
        item,
        labeller,
        action,
        value,
        str(comment or ""),
        judge,
        bool(row[8]),
        seconds,
        saved_at,
    )


def checked_queue_row(path: Path, queue: str, row: Sequence[Any]) -> str:
    """A queue row's item key (``row`` is rowid, item, judge_label), each field checked."""
    where = f"{path}: table queue, row {row[0]}"
    item = _item(where, queue, row[1])
    _optional_number(where, "judge_label", row[2])
    return item


def _item(where: str, queue: str, item: Any) -> str:
    """``item`` when it is a key of ``queue``'s kind, else a located :class:`InputError`."""
    try:
        kind, _ = parse_item_key(item)
    except BadKey as error:
        raise InputError(f"{where}: item: {item!r}: {error}") from None
    wanted = QUEUE_KEY_KIND.get(queue)
    if wanted is None:
        raise InputError(f"{where}: queue: {queue!r} is not one of {', '.join(QUEUE_KEY_KIND)}")
    if kind != wanted:
        raise InputError(f"{where}: item: {item!r} is a {kind} key in the {queue} queue")
    return str(item)


def _optional_number(where: str, field: str, value: Any) -> float | None:
    """A stored number (``None`` for NULL): a finite SQLite integer or real, not text."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {field}: {value!r} is not a number")
    if not math.isfinite(value):
        raise InputError(f"{where}: {field}: {value!r} is not a finite number")
    return float(value)


def _time(where: str, field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: {field}: {value!r} is not a time")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{where}: {field}: {value!r} is not an ISO 8601 time") from None
    return value
