"""The nugget judge's replies: parsing each step's reply (a :class:`ReplyError` names what
is wrong, for the one repair :func:`~genir_eval.judges.base.ask` makes) and an answer's
nuggets in words for the report."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.parsing import ReplyError, expect_key, expect_mapping, extract_object
from genir_eval.records import NUGGET_ASSIGNMENTS as ASSIGNMENTS
from genir_eval.records import NUGGET_IMPORTANCE as IMPORTANCE

__all__ = [
    "parse_created",
    "parse_importance",
    "parse_assignments",
    "coverage_reason",
    "created_schema",
    "importance_schema",
    "assignments_schema",
]

#: The longest nugget and reason a schema-constrained reply may write (a nugget is a short
#: fact; a small model left unconstrained can repeat a phrase until its token budget ends).
MAX_NUGGET_CHARS = 300
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_REASON_CHARS = 400


def created_schema(limit: int) -> dict[str, Any]:
    """The JSON schema of a creation reply, for servers that constrain decoding to it
    (``response_format=json_schema``): at most ``limit`` nuggets, each a short string."""
    return {
        "type": "object",
        "properties": {
            "nuggets": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_NUGGET_CHARS},
                "maxItems": limit,
            }
        },
        "required": ["nuggets"],
        "additionalProperties": False,
    }


def _by_id(ids: Sequence[str], value: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {i: value for i in ids},
        "required": list(ids),
        "additionalProperties": False,
    }


def importance_schema(ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of an importance reply covering exactly ``ids``."""
    return {
        "type": "object",
        "properties": {"importance": _by_id(ids, {"enum": list(IMPORTANCE)})},
        "required": ["importance"],
        "additionalProperties": False,
    }


def assignments_schema(ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of an assignment reply covering exactly ``ids``, each with a reason."""
    entry = {
        "type": "object",
        "properties": {
            "assignment": {"enum": list(ASSIGNMENTS)},
            "reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
        },
        "required": ["assignment", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"assignments": _by_id(ids, entry)},
        "required": ["assignments"],
        "additionalProperties": False,
    }


def parse_created(limit: int) -> Any:
    """A creation reply: ``{"nuggets": [str, ...]}`` -> the distinct facts, at most ``limit``."""

    def parse(reply: str) -> list[str]:
        obj = extract_object(reply)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "nuggets", "facts")
        if isinstance(obj, str) or not isinstance(obj, Sequence):
            raise ReplyError("'nuggets' must be a list of strings")
        out: list[str] = []
        for item in obj:
            if isinstance(item, Mapping):
                item = expect_key(item, "text", "nugget", "fact")
            if not isinstance(item, str):
                raise ReplyError(f"each nugget must be a string, got {item!r}")
            if _SURROGATE.search(item):
                # a lone UTF-16 surrogate ("\\ud800" in JSON) is no text: the run's
                # nuggets.jsonl, written as UTF-8, could not hold it
                raise ReplyError(f"nugget {item[:40]!r}... holds a lone surrogate, not text")
            text = " ".join(item.split())
            if text and text.lower() not in {o.lower() for o in out}:
                out.append(text)
        return out[:limit]

    return parse


def parse_importance(ids: Sequence[str]) -> Any:
    """An importance reply: ``{"importance": {id: "vital"|"okay"}}`` covering exactly ``ids``."""

    def parse(reply: str) -> dict[str, str]:
        obj = expect_mapping(extract_object(reply, want=dict))
        given = expect_mapping(expect_key(obj, "importance", "labels"), "'importance'")
        out: dict[str, str] = {}
        for key, value in given.items():
            if str(key) not in ids:
                raise ReplyError(f"unknown nugget id {key!r}")
            label = str(value).strip().lower()
            if label not in IMPORTANCE:
                raise ReplyError(f"nugget {key}: importance must be vital or okay, got {value!r}")
            out[str(key)] = label
        missing = [i for i in ids if i not in out]
        if missing:
            raise ReplyError(f"no importance for nuggets {missing}")
        return out

    return parse


def parse_assignments(ids: Sequence[str]) -> Any:
    """An assignment reply: ``{"assignments": {id: {"assignment": ..., "reason": ...}}}``
    covering exactly ``ids`` (an assignment given as a bare word has no reason)."""

    def parse(reply: str) -> dict[str, dict[str, str]]:
        obj = expect_mapping(extract_object(reply, want=dict))
        given = expect_mapping(expect_key(obj, "assignments", "labels"), "'assignments'")
        out: dict[str, dict[str, str]] = {}
        for key, value in given.items():
            if str(key) not in ids:
                raise ReplyError(f"unknown nugget id {key!r}")
            entry = value if isinstance(value, Mapping) else {"assignment": value}
            word = str(expect_key(entry, "assignment", "label")).strip().lower()
            word = word.replace(" ", "_").replace("-", "_")
            if word not in ASSIGNMENTS:
                raise ReplyError(
                    f"nugget {key}: assignment must be one of {', '.join(ASSIGNMENTS)}, "
                    f"got {word!r}"
                )
            reason = entry.get("reason", "")
            out[str(key)] = {"assignment": word, "reason": str(reason or "")}
        missing = [i for i in ids if i not in out]
        if missing:
            raise ReplyError(f"no assignment for nuggets {missing}")
        return out

    return parse


def coverage_reason(nuggets: Sequence[Mapping[str, Any]]) -> str:
    """The answer's nuggets in words, vital first: how many it covers, then each covered
    and each missed nugget with the reason given."""
    order = sorted(nuggets, key=lambda n: n["importance"] != "vital")
    parts = []
    for importance in ("vital", "okay"):
        group = [n for n in order if n["importance"] == importance]
        if group:
            full = sum(1 for n in group if n["assignment"] == "support")
            half = sum(1 for n in group if n["assignment"] == "partial_support")
            parts.append(f"{importance}: {full} supported, {half} partly, of {len(group)}")
    lines = ["; ".join(parts)]
    for covered, title in ((True, "covered"), (False, "missed")):
        chosen = [n for n in order if (n["assignment"] != "not_support") == covered]
        for n in chosen:
            why = f" ({n['reason']})" if n.get("reason") else ""
            lines.append(
                f"{title} [{n['importance']}] {n['id']} {n['assignment']}: {n['text']}{why}"
            )
    return "\n".join(lines)
