"""JSON objects and Python literals read with each key once.

``json.loads`` and ``ast.literal_eval`` keep the last of two equal keys without a word, so
``{"label": 1, "label": 3}`` silently reads 3. Every reader of logs, side files and judge
replies reads objects through here instead, and a repeated key is an error
(:class:`RepeatedKey`) its caller words and locates.
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["RepeatedKey", "unique_keys", "unique_values", "literal"]


class RepeatedKey(ValueError):
    """An object gives ``key`` more than once; ``values`` are its values, in order."""

    def __init__(self, key: Any, values: list[Any]) -> None:
        self.key = key
        self.values = values
        shown = repr(key)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        super().__init__(f"key {shown} appears twice in one object")


def _check(pairs: list[tuple[Any, Any]], same_value_ok: bool) -> dict[Any, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    first: dict[Any, Any] = {}
    for key, value in pairs:
        if key not in first:
            first[key] = value
        elif not same_value_ok or value != first[key]:
            raise RepeatedKey(key, [v for k, v in pairs if k == key])
    return out


def unique_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """``object_pairs_hook`` for :func:`json.loads`: any repeated key is an error."""
    return _check(pairs, same_value_ok=False)


def unique_values(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """``object_pairs_hook`` for :func:`json.loads`: a key repeated with the same value is
    kept; with another value it is an error (which one was meant cannot be told)."""
    return _check(pairs, same_value_ok=True)


def literal(text: str) -> Any:
    """``ast.literal_eval`` of ``text`` (never ``eval``), a dict repeating a key refused."""
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            seen: set[str] = set()
            for key in node.keys:
                if isinstance(key, ast.Constant):
                    if repr(key.value) in seen:
                        raise RepeatedKey(key.value, [])
                    seen.add(repr(key.value))
    return ast.literal_eval(tree)
