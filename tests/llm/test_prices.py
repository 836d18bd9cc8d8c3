"""A price table (``--prices``, ``engine.prices``, ``GENIR_EVAL_PRICES``) is checked row by
row: a cost figure is never NaN, negative or made of a typo.

Before, ``"input": "nan"``, ``-1``, ``true`` or ``"1.5"`` became prices, ``"models":
"gpt-x"`` priced the models ``g``, ``p``, ``t``..., an unknown key (``inputt``) or a model
priced twice passed, and a file that was a folder or not UTF-8 gave Python's wording.
"""

from __future__ import annotations

import json
import math

import pytest

from genir_eval.errors import ConfigError
from genir_eval.llm.prices import load_prices
from genir_eval.llm.providers.base import Usage

ROW = {
    "provider": "openai",
    "models": ["my-model"],
    "input": 1.0,
    "output": 2.0,
    "as_of": "2026-11-01",
    "source": "our contract",
}


def _row(**changes: object) -> dict[str, object]:
    return {**ROW, **changes}


# (table, words of the error)
BAD_TABLES = [
    ({"prices": [_row(input="nan")]}, "prices[0].input: expected USD per million tokens"),
    ({"prices": [_row(input=-1)]}, "prices[0].input: expected"),
    ({"prices": [_row(output=1e308)]}, "prices[0].output: expected"),
    ({"prices": [_row(input=True)]}, "prices[0].input: expected"),
    ({"prices": [_row(input="1.5")]}, "prices[0].input: expected"),
    ({"prices": [_row(models="my-model")]}, "prices[0].models: expected a non-empty list"),
    ({"prices": [_row(models=[])]}, "prices[0].models: expected a non-empty list"),
    ({"prices": [_row(models=["a", 3])]}, "prices[0].models: expected a non-empty list"),
    ({"prices": [_row(provider=5)]}, "prices[0].provider: expected a non-empty string"),
    ({"prices": [_row(inputt=3)]}, "prices[0]: unknown key 'inputt'"),
    ({"prices": [{k: v for k, v in ROW.items() if k != "output"}]}, "prices[0]: no 'output'"),
    ({"prices": [ROW, ROW]}, "prices[1].models: 'my-model' of 'openai' is priced twice"),
    ({"prices": {"openai": 1}}, "a price table needs 'prices'"),
    ([ROW], "a price table needs 'prices'"),
    ({"prices": ["x"]}, "prices[0]: expected an object"),
]


@pytest.mark.parametrize(("table", "words"), BAD_TABLES)
def test_a_bad_price_row_is_refused_naming_file_and_row(tmp_path, table, words):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_prices(path)
    assert str(caught.value).startswith(f"{path}: ") or str(path) in str(caught.value)
    assert words in str(caught.value), str(caught.value)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "Is a directory"),
        (b"\xff{}", "not UTF-8 text (byte 0xff at byte 1)"),
        (b'{"prices": [\n{"input": NaN}]}', "NaN is not a JSON number"),
        (b'{"prices": \n[', "line 2: not valid JSON"),
    ],
)
def test_an_unreadable_price_file_is_refused_naming_it(tmp_path, content, words):
    path = tmp_path / "prices.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_prices(path)
    assert f"cannot read the price table {path}" in str(caught.value)
    assert words in str(caught.value), str(caught.value)


def test_a_valid_override_prices_its_models(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"prices": [_row(input=0, models=["a", "b"])]}), encoding="utf-8")
    table = load_prices(path)
    cost = table.cost("openai", "b", Usage(1_000_000, 1_000_000))
    assert cost is not None and math.isclose(cost, 2.0)
