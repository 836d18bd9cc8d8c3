"""Reading judge replies: JSON, JSON in prose or code fences, Python-style dicts, truncation.

Models wrap their JSON in prose, in Markdown fences, emit Python literals (single quotes,
``True``), or stop mid-object when they run out of tokens. :func:`extract_object` finds the
object and reads it (``json`` first, then :func:`ast.literal_eval`, never ``eval``); the
``expect_*`` validators check the shape a judge asked for. Anything unusable raises
:class:`ReplyError` with a reason: the caller repairs once and otherwise records the label as
missing with that reason. Nothing here ever substitutes a default value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from genir_eval.unique_keys import RepeatedKey, literal, unique_values

__all__ = [
    "ReplyError",
    "extract_object",
    "expect_mapping",
    "expect_int",
    "expect_score",
    "expect_key",
    "expect_id_map",
    "expect_index_list",
]


class ReplyError(ValueError):
    """A reply that cannot be used as it is; ``truncated`` when it stops mid-structure."""

    def __init__(self, reason: str, *, truncated: bool = False) -> None:
        super().__init__(reason)
        self.truncated = truncated


_FENCE = re.compile(r"```(?:json|python|JSON)?\s*\n?(.*?)```", re.DOTALL)
_OPENERS = {"{": "}", "[": "]"}


def _balanced_spans(text: str) -> tuple[list[str], bool]:
    """Top-level ``{...}`` / ``[...]`` spans in ``text`` (strings respected); and whether an
    opened structure never closed (a truncated reply)."""
    spans: list[str] = []
    stack: list[str] = []
    start = -1
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if stack and ch in "\"'":
            # Apostrophes in prose outside any structure are not quotes.
            quote = ch
            continue
        if ch in _OPENERS:
            if not stack:
                start = i
            stack.append(_OPENERS[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                spans.append(text[start : i + 1])
        elif stack and ch in "}]":
            # Mismatched closer: give up on this candidate and restart scanning.
            stack.clear()
            quote = None
    return spans, bool(stack)


class _RepeatedKey(ReplyError):
    pass


def _load(candidate: str) -> Any:
    try:
        return _json(candidate)
    except _RepeatedKey:
        raise
    except (ValueError, RecursionError):
        pass
    try:
        return literal(candidate)
    except RepeatedKey:
        raise _RepeatedKey("the reply gives a key twice") from None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    # Trailing commas are a common, harmless slip.
    cleaned = re.sub(r",\s*([}\]])", r"\1", candidate)
    if cleaned != candidate:
        try:
            return _json(cleaned)
        except _RepeatedKey:
            raise
        except (ValueError, RecursionError):
            pass
    raise ValueError("not JSON or a Python literal")


def _json(text: str) -> Any:
    """JSON of a reply; a key given twice with different values is a :class:`ReplyError`
    (``{"label": 1, "label": 3}``: which one the model meant cannot be told)."""
    try:
        return json.loads(text, object_pairs_hook=unique_values)
    except RepeatedKey as error:
        first, second = error.values[:2]
        raise _RepeatedKey(f"the reply gives {error.key!r} twice ({first!r}, {second!r})") from None


def extract_object(text: str, *, want: type | tuple[type, ...] = (dict, list)) -> Any:
    """The first JSON object (or list) in ``text``, however it is wrapped."""
    if text is None or not text.strip():
        raise ReplyError("empty reply")
    candidates: list[str] = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    spans, unclosed = _balanced_spans(text)
    # Largest structures first: the answer usually encloses any small examples.
    candidates += sorted(spans, key=len, reverse=True)
    for candidate in candidates:
        try:
            value = _load(candidate)
        except _RepeatedKey:
            raise
        except ValueError:
            continue
        if isinstance(value, want):
            return value
    if unclosed or text.count("```") % 2 == 1:
        raise ReplyError("reply is truncated (an object or list never closes)", truncated=True)
    raise ReplyError("no JSON object found in the reply")


def expect_mapping(value: Any, what: str = "reply") -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ReplyError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def expect_key(obj: Mapping[str, Any], *names: str) -> Any:
    """``obj[name]`` for the first of ``names`` present (case-insensitive)."""
    lowered: dict[str, Any] = {}
    for k, v in obj.items():
        key = str(k).strip().lower()
        if key in lowered and lowered[key] != v:
            raise ReplyError(f"the reply gives {key!r} twice ({lowered[key]!r}, {v!r})")
        lowered[key] = v
    found = [name for name in names if name.lower() in lowered]
    if len({repr(lowered[name.lower()]) for name in found}) > 1:
        shown = ", ".join(f"{name}={lowered[name.lower()]!r}" for name in found)
        raise ReplyError(f"the reply gives the {names[0]!r} field several values ({shown})")
    if found:
        return lowered[found[0].lower()]
    raise ReplyError(f"missing field {names[0]!r}")


def expect_int(value: Any, lo: int, hi: int, what: str) -> int:
    """An integer label in ``[lo, hi]``; ``"2"`` and ``2.0`` are accepted, ``2.5`` is not."""
    if isinstance(value, bool):
        raise ReplyError(f"{what} must be an integer, got {value!r}")
    if isinstance(value, str):
        stripped = value.strip()
        if not re.fullmatch(r"[+-]?\d+(\.0+)?", stripped):
            raise ReplyError(f"{what} must be an integer, got {value!r}")
        value = float(stripped)
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ReplyError(f"{what} must be an integer, got {value!r}")
        value = int(value)
    if not isinstance(value, int):
        raise ReplyError(f"{what} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ReplyError(f"{what} = {value} is out of range {lo}-{hi}")
    return value


def expect_score(value: Any, lo: float, hi: float, what: str) -> float:
    """A number in ``[lo, hi]`` (for means of simulated judges)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ReplyError(f"{what} must be a number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ReplyError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(number) or not lo <= number <= hi:
        raise ReplyError(f"{what} = {value} is out of range {lo}-{hi}")
    return number


def expect_id_map(value: Any, ids: Iterable[int], lo: int, hi: int, what: str) -> dict[int, int]:
    """``{"<id>": label}`` covering exactly ``ids`` (extra ids are an error, so are gaps).

    Also accepts a list of ``{"id": .., "label": ..}`` objects.
    """
    wanted = list(ids)
    if isinstance(value, Sequence) and not isinstance(value, str):
        pairs: dict[Any, Any] = {}
        for item in value:
            item = expect_mapping(item, f"{what} entry")
            pairs[expect_key(item, "id", "link", "citation")] = expect_key(
                item, "label", "usefulness", "score", "O"
            )
        value = pairs
    obj = expect_mapping(value, what)
    out: dict[int, int] = {}
    for raw_key, label in obj.items():
        # one number, with words or brackets around it: "1", "[1]", "link 1" ("1.0" is no id)
        match = re.fullmatch(r"[^\d.]*(\d{1,18})[^\d.]*", str(raw_key))
        if match is None:
            raise ReplyError(f"{what}: {raw_key!r} is not a link id")
        link_id = int(match.group(1))
        if link_id in out:
            raise ReplyError(f"{what}: link {link_id} is labelled twice")
        out[link_id] = expect_int(label, lo, hi, f"{what}[{raw_key}]")
    missing = [i for i in wanted if i not in out]
    extra = sorted(set(out) - set(wanted))
    if missing:
        raise ReplyError(f"{what}: missing ids {missing}")
    if extra:
        raise ReplyError(f"{what}: unknown ids {extra}")
    return out


def expect_index_list(value: Any, n: int, what: str) -> tuple[int, ...]:
    """Distinct indices into ``range(n)``, sorted; an empty list is a valid answer."""
    if isinstance(value, Mapping):
        value = expect_key(value, "useful_segments", "segments", "useful", "indices")
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ReplyError(f"{what} must be a list of segment indices")
    out = {expect_int(v, 0, max(n - 1, 0), f"{what} index") for v in value}
    if n == 0 and out:
        raise ReplyError(f"{what}: the turn has no segments")
    return tuple(sorted(out))
