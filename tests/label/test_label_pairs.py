"""The pairwise queue over an arena folder: both answers side by side in a drawn order,
the label stored in the pair's own terms, exported as people's preferences."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from label_helpers import label_server

from genir_eval.cli import main
from genir_eval.ingest import read_preferences
from genir_eval.runner.label.queue import open_workspace
from genir_eval.runner.label.store import LabelStore


def _system(path: Path, n_lines: int) -> str:
    rows = []
    for sid, query in (("s1", "What is X?"), ("s2", "How does Y work"), ("s3", "why Z")):
        lines = [f"{path.stem} point {k} about {query}" for k in range(n_lines)]
        rows.append(
            {
                "version": 1,
                "session_id": sid,
                "language": "en",
                "turns": [
                    {
                        "index": 1,
                        "query": query,
                        "response_text": "\n".join(lines),
                        "statements": [{"text": line, "citations": []} for line in lines],
                    }
                ],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def arena(tmp_path: Path) -> Path:
    big, small = _system(tmp_path / "big.jsonl", 3), _system(tmp_path / "small.jsonl", 1)
    out = tmp_path / "arena"
    assert main(["arena", big, small, "--out", str(out), "--cache", "none", "--quiet"]) == 0
    return out


def test_pairs_are_shown_both_ways_and_stored_in_their_own_terms(
    arena: Path, tmp_path: Path
) -> None:
    space = open_workspace(arena, store=tmp_path / "l.sqlite")
    items = space.queues["pairwise"].items
    assert len(items) == 3
    sides = set()
    for item in items:
        query, left, right = item.panes
        assert query.heading == "Query" and (left.heading, right.heading) == (
            "Left answer",
            "Right answer",
        )
        left_is_a = left.text.startswith("big ")  # a is "big", the first system
        sides.add(left_is_a)
        values = {c.key: c.value for c in item.choices or ()}
        assert values == (
            {"1": 1.0, "2": 0.0, "t": 0.5} if left_is_a else {"1": 0.0, "2": 1.0, "t": 0.5}
        )
    assert sides == {True, False}, "the order is drawn per pair, not always a on the left"


def test_export_writes_preferences_the_reader_takes(arena: Path, tmp_path: Path) -> None:
    store = tmp_path / "l.sqlite"
    space = open_workspace(arena, store=store)
    first, second = space.queues["pairwise"].items[:2]
    space.store.save("pairwise", first.key, "ann", value=0.0)
    space.store.save("pairwise", second.key, "ann", value=0.5)
    out = tmp_path / "export"
    assert main(["label", "export", str(arena), "--store", str(store), "--out", str(out)]) == 0
    rows = read_preferences(out / "preferences.jsonl")
    assert [(r.session, r.system_a, r.system_b, r.winner) for r in rows] == [
        (first.session_id, "big", "small", "b"),
        (second.session_id, "big", "small", "tie"),
    ]


@pytest.mark.browser
def test_left_and_right_keys_in_the_browser(
    arena: Path, tmp_path: Path, browser: Callable[[], Any]
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    store = tmp_path / "l.sqlite"
    with label_server(arena, "--store", str(store)) as (url, _):
        driver = browser()
        driver.get(url + "label/pairwise?labeller=ann")
        key = driver.find_element("id", "item").get_attribute("data-item")
        left = driver.find_elements("css selector", ".log")[1].get_attribute("textContent")
        ActionChains(driver).send_keys("1").perform()  # the left answer is better
        import time

        deadline = time.monotonic() + 120
        while key not in LabelStore(store).labels("pairwise"):
            assert time.monotonic() < deadline, "the label was not saved"
            time.sleep(0.1)
        value = LabelStore(store).labels("pairwise")[key]["ann"].value
        assert value == (1.0 if left.startswith("big ") else 0.0)
