"""The pairwise queue: an arena folder's pairs (``genir-eval arena``), the two answers side
by side in an order drawn for each pair, people choosing the better or a tie.

A label is stored in the pair's own terms, 1 for ``a``, 0 for ``b``, 0.5 for a tie, whatever
side each answer was shown on: the page's keys say left and right, the item's choices map
them back. The judges' labels are the judge's verdict in each order it judged (the two
orders disagreeing is the doubt the queue puts first).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions
from genir_eval.ingest.preferences import Preference
from genir_eval.kind_names import PAIRWISE
from genir_eval.records import Session, Turn
from genir_eval.runner.label.items import Choice, Item, Pane
from genir_eval.runner.label.keys import item_key, parse_item_key

__all__ = ["ARENA_FILE", "PAIRS_FILE", "is_arena", "arena_items", "WINNER_VALUE", "preference_rows"]

ARENA_FILE = "arena.json"
PAIRS_FILE = "pairs.jsonl"
#: A pair's winner as a label value, and back.
WINNER_VALUE = {"a": 1.0, "b": 0.0, "tie": 0.5}
_VALUE_WINNER = {v: k for k, v in WINNER_VALUE.items()}


def is_arena(folder: Path) -> bool:
    return (folder / ARENA_FILE).is_file() and (folder / PAIRS_FILE).is_file()


def _input(folder: Path, given: str) -> Path:
    """An input of the arena: as written, else beside the arena folder's parent (arena
    writes the paths it was given, relative to where it ran)."""
    path = Path(given)
    for candidate in (path, folder.parent / path, folder.parent.parent / path):
        if candidate.is_file():
            return candidate
    raise InputError(
        f"{folder / ARENA_FILE}: inputs: {given} is not there (the labelling page shows the "
        "answers' text from it): run from the folder the arena ran in"
    )


def _systems(folder: Path, document: Mapping[str, Any]) -> dict[str, dict[str, Session]]:
    where = folder / ARENA_FILE
    inputs = document.get("inputs") or []
    if not isinstance(inputs, list):
        raise InputError(f"{where}: inputs: a list of {{name, path}}, got {inputs!r:.80}")
    out = {}
    for number, given in enumerate(inputs, 1):
        if not isinstance(given, dict) or not all(
            isinstance(given.get(k), str) and given.get(k) for k in ("name", "path")
        ):
            raise InputError(
                f"{where}: inputs, entry {number}: an object with a name and a path, got "
                f"{given!r:.80}"
            )
        sessions = load_sessions(_input(folder, given["path"])).sessions
        out[given["name"]] = {s.session_id: s for s in sessions}
    return out


def _document(folder: Path) -> dict[str, Any]:
    """``arena.json``: a JSON object, or a located :class:`InputError`."""
    where = folder / ARENA_FILE
    try:
        document = json.loads(where.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:
        raise InputError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise InputError(
            f"{where}: a JSON object (what `genir-eval arena` writes), got a "
            f"{type(document).__name__}"
        )
    return document


def _pair(path: Path, number: int, row: Any) -> tuple[str, int, str, str]:
    """A ``pairs.jsonl`` row's session, turn and two systems, each checked."""
    where = f"{path}: line {number}"
    if not isinstance(row, dict):
        raise InputError(f"{where}: a JSON object, got {row!r:.80}")
    sid, turn = row.get("session_id"), row.get("turn")
    if isinstance(sid, bool) or not isinstance(sid, (str, int)) or sid == "":
        raise InputError(f"{where}: session_id: a session's id, got {sid!r:.80}")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
        raise InputError(f"{where}: turn: a turn's index (0 or more), got {turn!r:.80}")
    for side in ("a", "b"):
        if not isinstance(row.get(side), str) or not row.get(side):
            raise InputError(f"{where}: {side}: a system's name, got {row.get(side)!r:.80}")
    orders = row.get("orders")
    if orders is not None and (
        not isinstance(orders, list) or not all(isinstance(o, dict) for o in orders)
    ):
        raise InputError(f"{where}: orders: a list of objects, got {orders!r:.80}")
    return str(sid), turn, row["a"], row["b"]


def _turn(session: Session | None, index: int) -> Turn | None:
    if session is None:
        return None
    return next((t for t in session.turns if t.index == index), None)


def _left_is_a(sid: str, turn: int, a: str, b: str) -> bool:
    """The side ``a`` is shown on, drawn from the pair: random across pairs, the same for
    every labeller and every reload, and the same as before item keys were JSON (drawn
    from the version 1 key's text, so a migrated store's pairs keep their sides)."""
    return hashlib.sha256(f"pair:{sid}:{turn}:{a}:{b}".encode()).digest()[0] % 2 == 0


def _choices(left_is_a: bool) -> tuple[Choice, ...]:
    left, right = (1.0, 0.0) if left_is_a else (0.0, 1.0)
    return (
        Choice(left, "1", "left answer is better"),
        Choice(right, "2", "right answer is better"),
        Choice(0.5, "t", "tie: neither is better"),
    )


def arena_items(folder: Path) -> list[Item]:
    """Every pair of the arena folder as an item of the pairwise queue."""
    systems = _systems(folder, _document(folder))
    items = []
    for number, row in enumerate(_rows(folder / PAIRS_FILE), 1):
        sid, index, a, b = _pair(folder / PAIRS_FILE, number, row)
        key = item_key("pair", sid, index, a, b)
        turns = {name: _turn(systems.get(name, {}).get(sid), index) for name in (a, b)}
        query = next((t.query for t in turns.values() if t is not None), "")
        left_is_a = _left_is_a(sid, index, a, b)
        shown = (a, b) if left_is_a else (b, a)
        panes = tuple(
            Pane(f"{side} answer", _answer(turns[name]))
            for side, name in zip(("Left", "Right"), shown, strict=True)
        )
        judged = {
            f"pairwise ({order['order']})": WINNER_VALUE.get(str(order.get("overall")))
            for order in row.get("orders") or []
            if not order.get("mirrored")
        }
        items.append(
            Item(
                key=key,
                queue=PAIRWISE,
                session_id=sid,
                turn=index,
                panes=(Pane("Query", query), *panes),
                judged=judged or {PAIRWISE: WINNER_VALUE.get(str(row.get("winner")))},
                choices=_choices(left_is_a),
            )
        )
    return items


def _answer(turn: Turn | None) -> str:
    return "(answer not found in the system's input)" if turn is None else turn.response_text


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                yield json.loads(line)
            except ValueError:
                raise InputError(f"{path}: line {number}: not valid JSON") from None


def preference_rows(labels: Mapping[str, float]) -> list[Preference]:
    """People's pairwise labels (item key -> value) as rows of the preferences format."""
    out = []
    for key, value in labels.items():
        _, (sid, turn, a, b) = parse_item_key(key)
        out.append(
            Preference(
                winner=_VALUE_WINNER[value],
                query=sid,
                session=sid,
                turn=int(turn),
                system_a=a,
                system_b=b,
            )
        )
    return out
