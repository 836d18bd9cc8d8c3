"""Token prices, from a packaged table (``prices.json``: every price with its date and source)
that the user can override. A model without a known price costs ``None`` (unknown), never 0;
the offline provider costs 0."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.llm.base import Usage

__all__ = ["Price", "PriceTable", "load_prices"]


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
    def from_json(cls, data: dict[str, Any], *, origin: str) -> PriceTable:
        table = cls()
        try:
            for row in data["prices"]:
                price = Price(
                    input_per_mtok=float(row["input"]),
                    output_per_mtok=float(row["output"]),
                    as_of=str(row["as_of"]),
                    source=str(row["source"]),
                )
                for model in row["models"]:
                    table.prices[(str(row["provider"]), str(model))] = price
        except (KeyError, TypeError, ValueError) as error:
            raise ConfigError(
                f"{origin}: a price table needs 'prices': [{{provider, models, input, output, "
                f"as_of, source}}] ({error})"
            ) from error
        return table


def load_prices(override: str | Path | None = None) -> PriceTable:
    """The packaged table, then ``GENIR_EVAL_PRICES`` and ``override`` (later wins)."""
    packaged = resources.files("genir_eval.llm").joinpath("prices.json").read_text("utf-8")
    table = PriceTable.from_json(json.loads(packaged), origin="packaged prices.json")
    for extra in (os.environ.get("GENIR_EVAL_PRICES"), override):
        if extra:
            path = Path(extra)
            try:
                data = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as error:
                raise ConfigError(f"cannot read the price table {path}: {error}") from error
            table.update(PriceTable.from_json(data, origin=str(path)))
    return table
