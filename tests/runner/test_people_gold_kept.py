"""``run --labels STORE`` never silently drops the input's own gold: a store nobody has
labelled yet keeps every rating of the input (and says so), and people's labels of one kind
(link usefulness) replace that kind only, the users' satisfaction ratings stay."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.runner.label.queue import open_workspace

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo-offline.toml"


def _run(out: Path, *args: str) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["run", str(SCENARIO), "--out", str(out), "--cache", "none", *args])
    assert code == 0, stderr.getvalue()
    return stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("people") / "first"
    _run(out, "--quiet")
    return out


def _session_correlations(out: Path) -> dict[str, object]:
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    return (meta.get("correlations") or {}).get("session") or {}


def test_an_empty_store_keeps_the_inputs_gold_and_says_so(first: Path, tmp_path: Path) -> None:
    store = tmp_path / "labels.sqlite"
    open_workspace(first, store=store)  # the store `genir-eval label` makes, unlabelled
    out, err = _run(tmp_path / "again", "--labels", str(store))
    assert f"gold from people's labels: 0 items in {store} (nobody has labelled yet)" in err
    assert "the input's own gold is kept" in err
    # the users' ratings of the demo sessions (8 of them) still meet the headline
    assert "no users' ratings" not in out
    assert "headline sdcg_urge vs the users' session satisfaction" in out
    assert _session_correlations(tmp_path / "again") == _session_correlations(first)


def test_people_labels_replace_only_their_kind(first: Path, tmp_path: Path) -> None:
    store = tmp_path / "labels.sqlite"
    space = open_workspace(first, store=store)
    queue = space.queues["link_usefulness"]
    for i, item in enumerate(queue.items[:5]):
        space.store.save(queue.name, item.key, "ann", value=i % 4)
    out, err = _run(tmp_path / "links", "--labels", str(store))
    assert "5 items in" in err and "in place of the input's link usefulness" in err
    meta = json.loads((tmp_path / "links" / "meta.json").read_text(encoding="utf-8"))
    # the judges meet the 5 people's link labels, not the input's 29 expert labels ...
    assert meta["judges"]["link_usefulness.dna"]["link_usefulness"]["n"] == 5
    # ... and the users' session ratings are still there
    assert _session_correlations(tmp_path / "links")
