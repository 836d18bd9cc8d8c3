"""Token prices, from a packaged table (``prices.json``: every price with its date and source)
that the user can override. A model without a known price costs ``None`` (unknown), never 0;
the offline provider costs 0."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.llm.providers.base import Usage

__all__ = ["Price", "PriceTable", "load_prices"]

_PRICE_KEYS = ("provider", "models", "input", "output", "as_of", "source")
#: USD per million tokens; no model costs more, so a larger figure is a typo
_MAX_PRICE = 10_000


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens, with where and when it was read."""

    input_per_mtok: float
    output_per_mtok: float
    as_of: str
    source: str

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok
        ) / 1_000_000


class PriceTable:
    def __init__(self, prices: dict[tuple[str, str], Price] | None = None) -> None:
        self.prices: dict[tuple[str, str], Price] = dict(prices or {})

    def price(self, provider: str, model: str) -> Price | None:
        if provider == "offline":
            return Price(0.0, 0.0, "-", "the offline provider makes no paid call")
        return self.prices.get((provider, model))

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        price = self.price(provider, model)
        return None if price is None else price.cost(usage)

    def update(self, other: PriceTable) -> None:
        self.prices.update(other.prices)

    @classmethod
    def from_json(cls, data: Any, *, origin: str) -> PriceTable:
        """A table from its JSON, every row checked: a price is a finite number of USD per
        million tokens from 0 to 10,000, ``models`` a list of model names, each
        (provider, model) priced once; an unknown key is an error (a typo such as
        ``inputt`` must not leave a price out)."""
        table = cls()
        rows = data.get("prices") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise ConfigError(
                f"{origin}: a price table needs 'prices': [{{provider, models, input, output, "
                "as_of, source}]"
            )
        priced: dict[tuple[str, str], int] = {}
        for i, row in enumerate(rows):
            where = f"{origin}: prices[{i}]"
            if not isinstance(row, dict):
                raise ConfigError(f"{where}: expected an object")
            unknown = sorted(set(row) - set(_PRICE_KEYS))
            missing = [key for key in _PRICE_KEYS if key not in row]
            if unknown or missing:
                what = f"unknown key {unknown[0]!r}" if unknown else f"no {missing[0]!r}"
                raise ConfigError(f"{where}: {what}; a row has {', '.join(_PRICE_KEYS)}")
            for key in ("provider", "as_of", "source"):
                if not isinstance(row[key], str) or not row[key].strip():
                    raise ConfigError(f"{where}.{key}: expected a non-empty string")
            models = row["models"]
            if (
                not isinstance(models, list)
                or not models
                or not all(isinstance(m, str) and m.strip() for m in models)
            ):
                raise ConfigError(f"{where}.models: expected a non-empty list of model names")
            amounts = []
            for key in ("input", "output"):
                value = row[key]
                ok = isinstance(value, (int, float)) and not isinstance(value, bool)
                if not ok or not math.isfinite(value) or not 0 <= value <= _MAX_PRICE:
                    raise ConfigError(
                        f"{where}.{key}: expected USD per million tokens, a number from 0 to "
                        f"{_MAX_PRICE:,}, got {value!r}"
                    )
                amounts.append(float(value))
            price = Price(amounts[0], amounts[1], row["as_of"], row["source"])
            for model in models:
                pair = (row["provider"], model)
                if pair in priced:
                    raise ConfigError(
                        f"{where}.models: {model!r} of {row['provider']!r} is priced twice "
                        f"(first in prices[{priced[pair]}])"
                    )
                priced[pair] = i
                table.prices[pair] = price
        return table


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_prices(override: str | Path | None = None) -> PriceTable:
    """The packaged table, then ``GENIR_EVAL_PRICES`` and ``override`` (later wins)."""
    packaged = resources.files("genir_eval.llm").joinpath("prices.json").read_text("utf-8")
    table = PriceTable.from_json(json.loads(packaged), origin="packaged prices.json")
    for extra in (os.environ.get("GENIR_EVAL_PRICES"), override):
        if extra:
            path = Path(extra)
            try:
                data = json.loads(path.read_text("utf-8"), parse_constant=_no_constant)
            except UnicodeDecodeError as error:
                raise ConfigError(
                    f"cannot read the price table {path}: not UTF-8 text (byte "
                    f"0x{error.object[error.start]:02x} at byte {error.start + 1})"
                ) from None
            except json.JSONDecodeError as error:
                raise ConfigError(
                    f"cannot read the price table {path}, line {error.lineno}: not valid JSON: "
                    f"{error.msg}"
                ) from None
            except ValueError as error:
                raise ConfigError(f"cannot read the price table {path}: {error}") from None
            except RecursionError:
                raise ConfigError(
                    f"cannot read the price table {path}: nested too deeply"
                ) from None
            except OSError as error:
                raise ConfigError(
                    f"cannot read the price table {path}: {error.strerror or error}"
                ) from None
            table.update(PriceTable.from_json(data, origin=str(path)))
    return table
