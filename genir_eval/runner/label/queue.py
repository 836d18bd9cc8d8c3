"""A run folder made ready to label: its queues in calibration order, stored once in the
label store so every server on the store and every restart sees the same queue."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError, InputError
from genir_eval.kind_names import PAIRWISE
from genir_eval.rundir import load_run
from genir_eval.rundir.files import file_digest
from genir_eval.runner.label.agreement import people_label, queue_agreement
from genir_eval.runner.label.items import CHOICES, Choice, Item, run_items, run_sessions
from genir_eval.runner.label.pairs import ARENA_FILE, PAIRS_FILE, arena_items, is_arena
from genir_eval.runner.label.selection import (
    DEFAULT_WIDTH,
    SampleSize,
    calibration_order,
    ppi_sample_size,
    random_order,
)
from genir_eval.runner.label.store import STORE_FILE, LabelStore, StoreOwner

__all__ = ["Queue", "Workspace", "open_workspace", "store_owner"]

#: The tables a run's items are made from: their digests (run.json's) make the run's.
_ITEM_TABLES = ("links.jsonl", "citations.jsonl", "turns.jsonl", "sessions.jsonl")


@dataclass(frozen=True)
class Queue:
    """One kind of question over the run: its items in the order they are shown (the least
    certain and a random draw in turn) and how many people see each."""

    name: str
    items: tuple[Item, ...]
    per_item: int
    width_share: float
    by_key: Mapping[str, Item] = field(repr=False)
    #: the random stream's order: its labelled prefix is the PPI mean's sample
    permutation: tuple[str, ...] = field(default=(), repr=False)

    @property
    def choices(self) -> tuple[Choice, ...]:
        return CHOICES[self.name]

    def size(self, store: LabelStore) -> SampleSize:
        """The PPI sample size, from the people's labels once there are enough of them."""
        labels = store.labels(self.name)
        pairs = []
        for key, by in labels.items():
            item = self.by_key.get(key)
            person = people_label(self.name, by)
            if item is not None and item.expected is not None and person is not None:
                pairs.append((item.expected, person))
        judged = [i.expected for i in self.items if i.expected is not None]
        return ppi_sample_size(self.name, judged, pairs, width_share=self.width_share)


@dataclass
class Workspace:
    """What one server labels: the run folder, its store, its queues."""

    run_dir: Path
    store: LabelStore
    queues: dict[str, Queue]
    title: str

    def queue(self, name: str) -> Queue:
        try:
            return self.queues[name]
        except KeyError:
            raise LookupError(
                f"no queue named {name!r} (this run has {', '.join(self.queues) or 'none'})"
            ) from None

    def agreement(self) -> dict[str, Any]:
        return {
            "version": 1,
            "queues": [
                queue_agreement(
                    q.name,
                    q.items,
                    self.store.labels(q.name),
                    permutation=q.permutation,
                    skipped={e.item for e in self.store.events(q.name) if e.action == "skip"},
                )
                for q in self.queues.values()
            ],
        }


def _digest(parts: Mapping[str, Any]) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def store_owner(folder: str | Path) -> StoreOwner:
    """Whose a store over ``folder`` is: a run's digest is the SHA-256 of its logs' digest
    and its item tables' (``run.json`` keeps both), so a store made for one run is refused
    for another; an arena's, of its ``arena.json`` and ``pairs.jsonl``."""
    path = Path(folder)
    if is_arena(path):
        files = {name: file_digest(path / name) for name in (ARENA_FILE, PAIRS_FILE)}
        return StoreOwner(_digest({"arena": files}), None)
    run = load_run(path)
    given = run.info.get("input") or {}
    listed = run.info.get("files") or {}
    tables = {name: listed.get(name) for name in _ITEM_TABLES}
    logs = given.get("sha256")
    return StoreOwner(_digest({"input": logs, "files": tables}), logs)


def open_workspace(
    run_dir: str | Path,
    *,
    store: str | Path | None = None,
    per_item: int = 1,
    width_share: float = DEFAULT_WIDTH,
) -> Workspace:
    """Read the run folder ``run_dir`` (or an arena folder: its pairs) and its sessions,
    order its queues for calibration
    and open (or make) the store, ``RUN_DIR/labels.sqlite`` unless ``store`` is given."""
    if per_item < 1:
        raise ConfigError(f"--per-item: at least 1 labeller an item, got {per_item}")
    if not 0.0 < width_share <= 1.0:
        raise ConfigError(f"--width: a share of the scale in (0, 1], got {width_share}")
    folder = Path(run_dir)
    if is_arena(folder):
        found = {PAIRWISE: arena_items(folder)}
        directory, title = folder.resolve(), folder.resolve().name
    else:
        run = load_run(run_dir)
        found = run_items(run, run_sessions(run))
        directory = run.directory
        title = str((run.info.get("scenario") or {}).get("name") or run.directory.name)
    if not any(found.values()):
        raise InputError(
            f"{directory}: no item to label (the run's judges label links, citations or "
            "satisfaction; this run has none of them)"
        )
    owner = store_owner(folder)
    labels = LabelStore(
        Path(store) if store is not None else directory / STORE_FILE, create=True, owner=owner
    )
    queues = {}
    for name, items in found.items():
        ordered = calibration_order(items)
        keys = labels.ensure_queue(
            name, [(it.key, it.expected) for it in ordered], per_item=per_item
        )
        by_key = {it.key: it for it in ordered}
        queues[name] = Queue(
            name,
            tuple(by_key[k] for k in keys),
            per_item,
            width_share,
            by_key,
            permutation=tuple(random_order(keys)),
        )
    labels.claim(owner)  # its queues are this run's: the store is this run's from now on
    return Workspace(directory, labels, queues, title)
