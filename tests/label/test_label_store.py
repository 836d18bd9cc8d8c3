"""The label store: what it keeps, undo, the queue's order, several writers at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from genir_eval.errors import ConfigError
from genir_eval.runner.label.keys import item_key
from genir_eval.runner.label.store import LabelStore, NotInQueue

Q = "link_usefulness"
I1, I2, I3 = (item_key("link", "s", 1, n) for n in (1, 2, 3))
ITEMS = [(I1, 2.0), (I2, None), (I3, 0.5)]


def _store(path: Path, per_item: int = 1) -> LabelStore:
    store = LabelStore(path, create=True)
    store.ensure_queue(Q, ITEMS, per_item=per_item)
    return store


def test_a_label_keeps_who_when_and_what_it_was_shown_against(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite")
    event = store.save(Q, I1, "ann", value=3, comment="<b>x</b>", judge_shown=True, seconds=4.5)
    (kept,) = store.events(Q)
    assert kept == event
    assert (kept.labeller, kept.value, kept.judge_label, kept.judge_shown) == ("ann", 3, 2.0, True)
    assert kept.comment == "<b>x</b>" and kept.seconds == 4.5 and kept.saved_at.endswith("+00:00")


def test_an_item_not_in_the_queue_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite")
    with pytest.raises(NotInQueue, match="is not in the 'link_usefulness' queue"):
        store.save(Q, item_key("link", "s", 1, 9), "ann", value=1)
    with pytest.raises(ValueError, match="labeller"):
        store.save(Q, I1, "<ann>", value=1)
    assert store.events() == []


def test_next_undo_and_skip(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite")
    assert store.next_item(Q, "ann", 1) == I1
    store.save(Q, I1, "ann", value=1)
    store.save(Q, I2, "ann", value=None)  # a skip
    assert store.next_item(Q, "ann", 1) == I3
    assert store.labels(Q) == {I1: {"ann": store.events(Q)[0]}}
    undone = store.undo(Q, "ann")
    assert undone is not None and undone.action == "skip"
    assert store.next_item(Q, "ann", 1) == I2
    assert store.undo(Q, "ann").item == I1  # type: ignore[union-attr]
    assert store.labels(Q) == {} and store.undo(Q, "ann") is None
    assert len(store.events(Q, live=False)) == 2, "undo marks, never deletes"


def test_each_item_to_k_people(tmp_path: Path) -> None:
    store = _store(tmp_path / "l.sqlite", per_item=2)
    store.save(Q, I1, "ann", value=1)
    assert store.next_item(Q, "bob", 2) == I1
    store.save(Q, I1, "bob", value=2)
    assert store.next_item(Q, "carol", 2) == I2


def test_the_queue_is_stored_once_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    _store(path)
    again = LabelStore(path)
    # another order of the same items: the stored order holds
    assert again.ensure_queue(Q, ITEMS[::-1], per_item=1) == [I1, I2, I3]
    with pytest.raises(ConfigError, match="other items than this run"):
        again.ensure_queue(Q, [(I1, None)], per_item=1)
    with pytest.raises(ConfigError, match="--per-item 1"):
        again.ensure_queue(Q, ITEMS, per_item=2)


def _writer(path: str, who: str, n: int) -> None:
    store = LabelStore(path)
    for i in range(n):
        store.save(Q, ITEMS[i % 3][0], f"{who}{i}", value=i % 4)


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
