"""People's labels as gold: ``meta --labels`` and ``run --labels`` read the store directly,
``label export`` writes sessions every reader takes, ``label agreement`` prints the figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from genir_eval.ingest import load_sessions
from genir_eval.runner.label.keys import parse_item_key
from genir_eval.runner.label.queue import open_workspace


def _genir(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "genir_eval", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )


def _labelled(run: Path, store: Path) -> dict[str, list[tuple[str, float]]]:
    """Label the first three items of every queue (values cycling over the scale)."""
    space = open_workspace(run, store=store)
    given: dict[str, list[tuple[str, float]]] = {}
    for queue in space.queues.values():
        for i, item in enumerate(queue.items[:3]):
            value = queue.choices[i % len(queue.choices)].value
            space.store.save(queue.name, item.key, "ann", value=value)
            given.setdefault(queue.name, []).append((item.key, value))
    return given


@pytest.mark.slow
def test_meta_and_run_read_the_labels_as_gold(hostile_run: Path, tmp_path: Path) -> None:
    store = tmp_path / "labels.sqlite"
    given = _labelled(hostile_run, store)
    folder = hostile_run.parent
    done = _genir(
        "meta", "sessions.jsonl", "--judge", "link_usefulness.dna", "--labels", str(store),
        "--json", "--bootstrap", "50", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["link_usefulness"]["n"] == len(given["link_usefulness"]) == 3
    assert "gold from people's labels: 12 items" in done.stderr
    out = tmp_path / "run"
    done = _genir("run", "hostile.toml", "--labels", str(store), "--out", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    links = meta["judges"]["link_usefulness.dna"]["link_usefulness"]
    assert links["n"] == 3
    # the report shows the judge against the people's labels
    assert "link_usefulness.dna" in (out / "report.html").read_text(encoding="utf-8")


def test_export_writes_gold_the_readers_take(hostile_run: Path, tmp_path: Path) -> None:
    store = tmp_path / "labels.sqlite"
    given = _labelled(hostile_run, store)
    out = tmp_path / "export"
    done = _genir(
        "label", "export", str(hostile_run), "--store", str(store), "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sessions = {s.session_id: s for s in load_sessions(out / "sessions-gold.jsonl").sessions}
    for key, value in given["link_usefulness"]:
        _, (sid, turn, link) = parse_item_key(key)
        gold = sessions[sid].gold
        assert gold is not None and gold.link_usefulness is not None
        assert gold.link_usefulness[int(turn) - 1][int(link)] == value
    words = {0: "none", 1: "partial", 2: "full"}
    for key, value in given["citation_support"]:
        _, (sid, turn, statement, link) = parse_item_key(key)
        support = sessions[sid].gold.citation_support  # type: ignore[union-attr]
        assert support is not None
        assert support[int(turn) - 1][int(statement) - 1][int(link)] == words[int(value)]
    rows = (out / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == sum(len(v) for v in given.values())
    done = _genir("label", "agreement", str(hostile_run), "--store", str(store), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "link_usefulness: 3 of 12 items labelled by people" in done.stdout
    assert "PPI mean" in done.stdout


def test_a_store_that_is_not_there_is_one_line(hostile_run: Path, tmp_path: Path) -> None:
    done = _genir(
        "meta", "sessions.jsonl", "--judge", "link_usefulness.dna", "--labels",
        str(tmp_path / "nowhere"), cwd=hostile_run.parent,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no label store here" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_link_labels_alone_give_the_run_a_meta_evaluation(
    hostile_run: Path, tmp_path: Path
) -> None:
    # people labelled links only: no satisfaction, yet the judges meet their labels
    space = open_workspace(hostile_run, store=tmp_path / "labels.sqlite")
    queue = space.queues["link_usefulness"]
    for i, item in enumerate(queue.items[:4]):
        space.store.save(queue.name, item.key, "ann", value=i % 4)
    out = tmp_path / "run"
    done = _genir(
        "run", "hostile.toml", "--labels", str(tmp_path / "labels.sqlite"), "--out", str(out),
        cwd=hostile_run.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert meta["correlations"] == {}
    assert meta["judges"]["link_usefulness.dna"]["link_usefulness"]["n"] == 4
