"""Reading a scenario's TOML one value at a time: :class:`_Table` takes each key with its type,
bound or choices checked and refuses a key left over (a typo, with a did-you-mean), every
problem a :class:`~genir_eval.errors.ConfigError` naming the key's dotted path. See
:mod:`genir_eval.runner.scenario`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.errors import ConfigError, did_you_mean
from genir_eval.settings import check_base_url, check_setting


class _Table:
    """A TOML table being read: every key taken is checked, leftovers are typos."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where or 'scenario'}: expected a table, got {_kind(data)}")
        self.data = data
        self.where = where
        self.taken: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(self, name: str) -> Any:
        self.taken.add(name)
        return self.data.get(name)

    def has(self, name: str) -> bool:
        return name in self.data

    def finish(self, allowed: Sequence[str] | None = None) -> None:
        allowed = list(allowed if allowed is not None else self.taken)
        for name in self.data:
            if name not in allowed:
                raise ConfigError(
                    f"{self.key(name)}: unknown key{did_you_mean(name, allowed)}; expected one of: "
                    f"{', '.join(sorted(allowed))}"
                )

    def string(self, name: str, default: str | None = None, choices: Sequence[str] = ()) -> Any:
        value = self.get(name)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{self.key(name)}: expected a non-empty string, got {_show(value)}")
        if choices and value not in choices:
            raise ConfigError(
                f"{self.key(name)}: expected one of {', '.join(choices)}, got {value!r}"
            )
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(f"{self.key(name)}: expected true or false, got {_show(value)}")
        return value

    def integer(self, name: str, default: int | None, minimum: int) -> Any:
        value = self.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(
                f"{self.key(name)}: expected an integer >= {minimum}, got {_show(value)}"
            )
        return value

    def setting(self, name: str, default: Any, setting: str | None = None) -> Any:
        """A numeric setting checked by :func:`genir_eval.settings.check_setting` (finite,
        in range; ``setting`` names it when the key differs)."""
        value = self.get(name)
        if value is None:
            return default
        try:
            return check_setting(setting or name, value)
        except ValueError as error:
            raise ConfigError(f"{self.key(name)}: {error}") from None

    def url(self, name: str, default: str | None) -> Any:
        value = self.string(name, default)
        if value is None or value == default:
            return value
        try:
            return check_base_url(value)
        except ValueError as error:
            raise ConfigError(f"{self.key(name)}: {error}") from None

    def strings(self, name: str, default: Any) -> Any:
        value = self.get(name)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(
                f"{self.key(name)}: expected a list of non-empty strings, got {_show(value)}"
            )
        return tuple(value)

    def table(self, name: str) -> _Table:
        value = self.get(name)
        return _Table({} if value is None else value, self.key(name))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _show(value: Any) -> str:
    text = repr(value)
    return f"{_kind(value)} {text if len(text) <= 60 else text[:57] + '...'}"
