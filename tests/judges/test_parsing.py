"""Reply parsing: every accepted wrapping, every rejection with its reason (expected values
come from the reply texts themselves)."""

from __future__ import annotations

import math
import re

import pytest

from genir_eval.judges.parsing import (
    ReplyError,
    expect_id_map,
    expect_index_list,
    expect_int,
    expect_key,
    extract_object,
)
from genir_eval.judges.satisfaction.common import weighted_rating_at
from genir_eval.llm.providers.base import Completion, TokenLogprob

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


# A reply naming one field twice with different values: which one the model meant cannot be
# told, so the judgment is missing with that reason (json.loads kept the last one silently).
REPEATED_FIELDS = [
    ('{"O": 1, "O": 3}', "the reply gives 'O' twice (1, 3)"),
    ('```json\n{"label": 0, "label": 2}\n```', "the reply gives 'label' twice"),
    ("The answer: {'O': 1, 'O': 2}", "the reply gives a key twice"),
    ('{"O": 1, "O": 2,}', "the reply gives a key twice"),
    # one field repeated with its own value does not hide another repeated with a new one
    ('{"M": 1, "M": 1, "O": 1, "O": 3}', "the reply gives 'O' twice (1, 3)"),
]


@pytest.mark.parametrize(("text", "words"), REPEATED_FIELDS)
def test_a_field_given_twice_is_refused(text, words):
    with pytest.raises(ReplyError, match=re.escape(words)):
        extract_object(text)


def test_the_same_value_twice_is_one_answer():
    assert extract_object('{"O": 2, "O": 2}') == {"O": 2}


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        ({"O": 1, "o": 3}, "the reply gives 'o' twice (1, 3)"),
        ({"label": 1, "usefulness": 2}, "the reply gives the 'label' field several values"),
    ],
)
def test_expect_key_refuses_a_field_given_twice(obj, words):
    with pytest.raises(ReplyError, match=re.escape(words)):
        expect_key(obj, "label", "usefulness") if "label" in obj else expect_key(obj, "O")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"1": 2, "[1]": 3}, "link 1 is labelled twice"),
        ({"link 1": 2, "1": 2}, "link 1 is labelled twice"),
        ({"1.0": 2}, "'1.0' is not a link id"),
        ({"1-2": 2}, "'1-2' is not a link id"),
        ({"link": 2}, "'link' is not a link id"),
    ],
)
def test_expect_id_map_refuses_ambiguous_ids(value, words):
    with pytest.raises(ReplyError, match=re.escape(words)):
        expect_id_map(value, [1], 0, 3, "labels")


def test_expect_id_map_reads_ids_written_with_words_or_brackets():
    assert expect_id_map({"[1]": 2, "link 2": 0, "3": 3}, [1, 2, 3], 0, 3, "labels") == {
        1: 2,
        2: 0,
        3: 3,
    }
