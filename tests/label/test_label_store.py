"""The label store: what it keeps, undo, the queue's order, several writers at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from genir_eval.errors import ConfigError
from genir_eval.runner.label.store import LabelStore, NotInQueue

ITEMS = [("i1", 2.0), ("i2", None), ("i3", 0.5)]


def _store(path: Path, per_item: int = 1) -> LabelStore:
    store = LabelStore(path)
    store.ensure_queue("q", ITEMS, per_item=per_item)
    return store


def test_a_label_keeps_who_when_and_what_it_was_shown_against(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite")
    event = store.save("q", "i1", "ann", value=3, comment="<b>x</b>", judge_shown=True, seconds=4.5)
    (kept,) = store.events("q")
    assert kept == event
    assert (kept.labeller, kept.value, kept.judge_label, kept.judge_shown) == ("ann", 3, 2.0, True)
    assert kept.comment == "<b>x</b>" and kept.seconds == 4.5 and kept.saved_at.endswith("+00:00")


def test_an_item_not_in_the_queue_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite")
    with pytest.raises(NotInQueue, match="item 'i9' is not in the 'q' queue"):
        store.save("q", "i9", "ann", value=1)
    with pytest.raises(ValueError, match="labeller"):
        store.save("q", "i1", "<ann>", value=1)
    assert store.events() == []


def test_next_undo_and_skip(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite")
    assert store.next_item("q", "ann", 1) == "i1"
    store.save("q", "i1", "ann", value=1)
    store.save("q", "i2", "ann", value=None)  # a skip
    assert store.next_item("q", "ann", 1) == "i3"
    assert store.labels("q") == {"i1": {"ann": store.events("q")[0]}}
    undone = store.undo("q", "ann")
    assert undone is not None and undone.action == "skip"
    assert store.next_item("q", "ann", 1) == "i2"
    assert store.undo("q", "ann").item == "i1"  # type: ignore[union-attr]
    assert store.labels("q") == {} and store.undo("q", "ann") is None
    assert len(store.events("q", live=False)) == 2, "undo marks, never deletes"


def test_each_item_to_k_people(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite", per_item=2)
    store.save("q", "i1", "ann", value=1)
    assert store.next_item("q", "bob", 2) == "i1"
    store.save("q", "i1", "bob", value=2)
    assert store.next_item("q", "carol", 2) == "i2"


def test_the_queue_is_stored_once_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    _store(path)
    again = LabelStore(path)
    # another order of the same items: the stored order holds
    assert again.ensure_queue("q", ITEMS[::-1], per_item=1) == ["i1", "i2", "i3"]
    with pytest.raises(ConfigError, match="other items than this run"):
        again.ensure_queue("q", [("i1", None)], per_item=1)
    with pytest.raises(ConfigError, match="--per-item 1"):
        again.ensure_queue("q", ITEMS, per_item=2)


def _writer(path: str, who: str, n: int) -> None:
    store = LabelStore(path)
    for i in range(n):
        store.save("q", ITEMS[i % 3][0], f"{who}{i}", value=i % 4)


@pytest.mark.slow
def test_processes_saving_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    _store(path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), w, 60)) for w in "abcd"]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
        assert w.exitcode == 0
    events = LabelStore(path).events()
    assert len(events) == 240 and len({e.id for e in events}) == 240
