"""Compact holders of what grows with a run: HashSet (genir_eval/hashes.py) and TextColumn
(genir_eval/columns.py)."""

from __future__ import annotations

import random
import sys

import pytest

from genir_eval.columns import TextColumn
from genir_eval.hashes import HashIndex, HashSet


def test_agrees_with_a_python_set_across_growth() -> None:
    # cases: random 64-bit keys (negative ones too), repeats, 0 and 1 (0 is stored as 1),
    # enough keys to double the table several times (1024 slots at first)
    rng = random.Random(7)
    keys = [rng.randint(-(2**63), 2**63 - 1) for _ in range(6000)]
    keys += keys[:500] + [0, 1, -1, 2**63 - 1, -(2**63)]
    table, expected = HashSet(), set()
    for key in keys:
        stored = key or 1
        assert table.add(key) is (stored not in expected)
        expected.add(stored)
    assert len(table) == len(expected)
    assert all(key in table for key in keys)
    absent = [rng.randint(-(2**63), 2**63 - 1) for _ in range(2000)]
    assert [k in table for k in absent] == [(k or 1) in expected for k in absent]


def test_keys_that_share_low_bits_probe_past_each_other() -> None:
    # every key lands in slot 5 of the first table: linear probing must keep them apart
    table = HashSet()
    keys = [5 + (i << 20) for i in range(300)]
    assert all(table.add(k) for k in keys)
    assert not any(table.add(k) for k in keys)
    assert all(k in table for k in keys) and (5 + (300 << 20)) not in table


def test_holds_hashes_in_about_16_bytes_each() -> None:
    table = HashSet()
    for i in range(100_000):
        table.add(hash(f"session-{i}"))
    size = sys.getsizeof(table._slots)
    assert 8 * 100_000 < size <= 32 * 100_000  # a Python set of ints takes about 90 bytes each


def test_hash_index_keeps_the_first_values_of_each_key_across_growth() -> None:
    # cases: random keys with repeats (the first values are kept), 0 (stored as 1), keys
    # sharing low bits, enough keys to double the table several times
    rng = random.Random(11)
    keys = [rng.randint(-(2**63), 2**63 - 1) for _ in range(5000)] + [
        5 + (i << 20) for i in range(200)
    ]
    keys += keys[:300] + [0, 1]
    index, expected = HashIndex(), {}
    for position, key in enumerate(keys):
        stored = key or 1
        found = index.setdefault(key, position, -position)
        assert found == expected.get(stored)
        expected.setdefault(stored, (position, -position))
    assert len(index) == len(expected)
    assert all(index.setdefault(k, -1, -1) == expected[k or 1] for k in keys)


def test_text_column_gives_back_every_text() -> None:
    # cases: empty text, non-ASCII, a lone surrogate (a JSON log may hold one), '#' ids
    texts = ["a", "", "日本語", "x\ud800y", "s-1#2"] * 3
    column = TextColumn()
    for text in texts:
        column.append(text)
    assert len(column) == len(texts)
    assert list(column) == texts
    assert [column[i] for i in range(len(texts))] == texts
    assert column[-1] == texts[-1] and column[-len(texts)] == texts[0]
    for bad in (len(texts), -len(texts) - 1):
        with pytest.raises(IndexError):
            column[bad]
