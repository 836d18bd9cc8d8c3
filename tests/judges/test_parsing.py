"""Reply parsing: every accepted wrapping, every rejection with its reason (expected values
come from the reply texts themselves)."""

from __future__ import annotations

import math

import pytest

from genir_eval.judges.parsing import (
    ReplyError,
    expect_id_map,
    expect_index_list,
    expect_int,
    extract_object,
)
from genir_eval.judges.satisfaction.common import weighted_rating_at
from genir_eval.llm.base import Completion, TokenLogprob

EXTRACT = [
    ('{"O": 2}', {"O": 2}),
    ('The label is {"O": 2}.', {"O": 2}),
    ('```json\n{"O": 2}\n```', {"O": 2}),
    ("{'O': 2, 'ok': True}", {"O": 2, "ok": True}),
    ('{"O": 2,}', {"O": 2}),
    ('example {"O": 0} then answer {"O": 3, "M": 1}', {"O": 3, "M": 1}),
    ("[1, 2]", [1, 2]),
]


@pytest.mark.parametrize("text, expected", EXTRACT)
def test_extract_object(text: str, expected: object) -> None:
    assert extract_object(text) == expected


@pytest.mark.parametrize(
    "text, truncated",
    [
        ('{"O": 2', True),
        ('```json\n{"judges": [{"O": 1}', True),
        ("no json here", False),
        ("", False),
    ],
)
def test_extract_object_failures(text: str, truncated: bool) -> None:
    with pytest.raises(ReplyError) as info:
        extract_object(text)
    assert info.value.truncated is truncated


def test_never_eval() -> None:
    with pytest.raises(ReplyError):
        extract_object("{'O': __import__('os').getcwd()}")


@pytest.mark.parametrize("value, expected", [(2, 2), ("3", 3), (1.0, 1), ("0", 0)])
def test_expect_int_accepts(value: object, expected: int) -> None:
    assert expect_int(value, 0, 3, "O") == expected


@pytest.mark.parametrize("value", [4, -1, 2.5, "two", True, None, float("nan")])
def test_expect_int_rejects(value: object) -> None:
    with pytest.raises(ReplyError):
        expect_int(value, 0, 3, "O")


def test_expect_id_map() -> None:
    assert expect_id_map({"1": 3, "[2]": 0}, [1, 2], 0, 3, "labels") == {1: 3, 2: 0}
    assert expect_id_map([{"id": 1, "label": 2}], [1], 0, 3, "labels") == {1: 2}
    with pytest.raises(ReplyError, match="missing ids"):
        expect_id_map({"1": 3}, [1, 2], 0, 3, "labels")
    with pytest.raises(ReplyError, match="unknown ids"):
        expect_id_map({"1": 3, "2": 1, "7": 1}, [1, 2], 0, 3, "labels")


def test_expect_index_list() -> None:
    assert expect_index_list({"useful_segments": [2, 0, 2]}, 3, "s") == (0, 2)
    assert expect_index_list([], 3, "s") == ()
    with pytest.raises(ReplyError):
        expect_index_list([3], 3, "s")


def test_weighted_rating() -> None:
    # Reply '{"overall": 7}': tokens '{"overall": ', '7', '}'; at the rating token the model
    # gave 7 with p=0.5, 8 with p=0.3, "x" with p=0.2 -> (0.5*7 + 0.3*8) / 0.8 = 7.375.
    tokens = (
        TokenLogprob('{"overall": ', 0.0),
        TokenLogprob(
            "7", math.log(0.5), (("7", math.log(0.5)), ("8", math.log(0.3)), ("x", math.log(0.2)))
        ),
        TokenLogprob("}", 0.0),
    )
    completion = Completion(text='{"overall": 7}', logprobs=tokens)
    assert weighted_rating_at(completion, 12) == pytest.approx(7.375, abs=1e-12)
    assert weighted_rating_at(Completion(text='{"overall": 7}'), 12) is None
