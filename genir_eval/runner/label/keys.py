"""An item's key: what it is about, written so that any session id or system name reads
back as it was (colons, quotes, any character), and checked when it is read back.

A key is the item's kind, a colon, and its parts as a compact JSON array:
``link:["s-1",2,3]`` (session, turn, link), ``support:["s-1",2,1,3]`` (session, turn,
statement, link), ``turn:["s-1",2]``, ``session:["s-1"]``, ``pair:["s-1",2,"sys:a","b"]``
(session, turn, system a, system b), ``nugget:["s-1",2,"n:3"]`` (session, turn, nugget
id). Version 1 stores wrote the parts joined by colons
(``link:s-1:2:3``), which a system name holding a colon made ambiguous:
:func:`legacy_parts` reads them back where they are not.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["KEY_SHAPES", "BadKey", "item_key", "parse_item_key", "legacy_parts"]

#: Each kind's parts: a name (str) or a count (int), in order.
KEY_SHAPES: dict[str, tuple[type, ...]] = {
    "link": (str, int, int),
    "support": (str, int, int, int),
    "turn": (str, int),
    "session": (str,),
    "pair": (str, int, str, str),
    "nugget": (str, int, str),
}


class BadKey(ValueError):
    """An item key that is not one this version writes (its message says what is wrong)."""


def item_key(kind: str, *parts: str | int) -> str:
    """The key of an item of ``kind`` about ``parts``."""
    _check(kind, list(parts))
    return f"{kind}:{json.dumps(list(parts), ensure_ascii=False, separators=(',', ':'))}"


def _check(kind: str, parts: list[Any]) -> tuple[Any, ...]:
    shape = KEY_SHAPES.get(kind)
    if shape is None:
        raise BadKey(f"the kind {kind!r} is not one of {', '.join(KEY_SHAPES)}")
    if len(parts) != len(shape):
        raise BadKey(f"a {kind} key has {len(shape)} parts, this one {len(parts)}")
    for part, wanted in zip(parts, shape, strict=True):
        if wanted is int and (isinstance(part, bool) or not isinstance(part, int) or part < 0):
            raise BadKey(f"a {kind} key's part {part!r} is not a count (0 or more)")
        if wanted is str and (not isinstance(part, str) or not part):
            raise BadKey(f"a {kind} key's part {part!r} is not a name")
    return tuple(parts)


def parse_item_key(key: Any) -> tuple[str, tuple[Any, ...]]:
    """``key``'s kind and parts; :class:`BadKey` when it is not a key of that shape."""
    if not isinstance(key, str):
        raise BadKey(f"an item key is text, not {type(key).__name__}")
    kind, sep, body = key.partition(":")
    if not sep:
        raise BadKey("an item key is KIND:[PARTS]")
    try:
        parts = json.loads(body)
    except (ValueError, RecursionError):
        raise BadKey(f"the parts after {kind}: are not a JSON array") from None
    if not isinstance(parts, list):
        raise BadKey(f"the parts after {kind}: are not a JSON array")
    return kind, _check(kind, parts)


def legacy_parts(key: str) -> tuple[str, tuple[Any, ...]]:
    """A version 1 key's kind and parts (``link:SID:TURN:LINK``, ...): counts read from the
    right, the session id what is left (it may hold colons); a pair's key only when it
    holds exactly its four parts (a colon in a session id or system name makes it
    ambiguous). :class:`BadKey` when it cannot be read back unambiguously."""
    kind, sep, body = key.partition(":")
    shape = KEY_SHAPES.get(kind)
    if not sep or shape is None:
        raise BadKey(f"the kind {kind!r} is not one of {', '.join(KEY_SHAPES)}")
    if kind == "pair":
        fields = body.split(":")
        if len(fields) != 4:
            raise BadKey(
                "a version 1 pair key with a colon in its session id or a system name is ambiguous"
            )
        sid, turn, a, b = fields
        return kind, _check(kind, [sid, _count(turn, kind), a, b])
    fields = body.rsplit(":", len(shape) - 1)
    if len(fields) != len(shape):
        raise BadKey(f"a {kind} key has {len(shape)} parts, this one {len(fields)}")
    return kind, _check(kind, [fields[0], *(_count(f, kind) for f in fields[1:])])


def _count(text: str, kind: str) -> int:
    if not text.isdigit():
        raise BadKey(f"a {kind} key's part {text!r} is not a count")
    return int(text)
