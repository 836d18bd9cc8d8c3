"""A run judged window by window writes what a run of one window writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from genir_eval.rundir.folder import RunWriter, TurnRow, load_run
from genir_eval.runner import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scenarios" / "demo-offline.toml"
TABLES = ("links", "turns", "sessions")
OFFLINE = Overrides(cache="none", journal="none")


def _close(a: object, b: object, path: str = "") -> None:
    """Equal documents, floats within 1e-12 (the bootstrap's sums are reordered by chunk)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert list(a) == list(b), path
        for key in a:
            _close(a[key], b[key], f"{path}/{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, abs=1e-12), path
    else:
        assert a == b, path


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [DEMO, ROOT / "scenarios" / "urge-offline.toml"])
def test_windows_of_three_sessions_write_the_same_run(tmp_path: Path, scenario: Path) -> None:
    whole = run_scenario(scenario, out_dir=tmp_path / "whole", overrides=OFFLINE, window=10_000)
    windowed = run_scenario(scenario, out_dir=tmp_path / "windows", overrides=OFFLINE, window=3)
    for table in TABLES:
        for suffix in (".jsonl", ".csv"):
            name = table + suffix
            assert (whole.directory / name).read_bytes() == (
                windowed.directory / name
            ).read_bytes(), name
    _close(whole.meta, windowed.meta)
    assert whole.info["input"] == windowed.info["input"]
    assert whole.info["judges"] == windowed.info["judges"]
    # the combination's column is in the tables and its correlation in the meta-evaluation
    if scenario == DEMO:
        combined = "z(sdcg_urge+satisfaction.urs)"
        assert combined in windowed.score_names("session")
        assert combined in windowed.meta["correlations"]["session"]
    # nothing is left behind but the run's own files
    assert not list(windowed.directory.glob("*.part")) and not list(
        windowed.directory.glob("*.tmp")
    )


def test_columns_read_back_the_scores(tmp_path: Path) -> None:
    run = run_scenario(DEMO, out_dir=tmp_path / "run", overrides=OFFLINE, window=2)
    columns = load_run(run.directory).columns("session", ["sdcg_urge"])
    by_session = run.scores("sdcg_urge")
    expected = [math.nan if v is None else v for v in by_session.values()]
    np.testing.assert_array_equal(columns["sdcg_urge"], np.asarray(expected))
    gold = [row.gold_satisfaction for row in run.sessions]
    np.testing.assert_array_equal(
        columns["gold_satisfaction"], np.asarray([math.nan if g is None else g for g in gold])
    )
    rows = list(run.iter_rows("turns"))
    assert len(rows) == len(run.turns) == run.info["input"]["turns"]


def test_an_aborted_writer_leaves_no_run(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"version": 1}))  # an earlier, finished run
    writer = RunWriter(tmp_path)
    writer.add(turns=[TurnRow("s1", 1, scores={"m": 1.0})])
    writer.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_run_writer_writes_what_write_run_writes(tmp_path: Path) -> None:
    # the same rows through both writers; the streaming one adds "z" to every turn row at
    # finish (as a z-score combination is added once every row is in)
    from genir_eval.rundir.folder import LinkRow, SessionRow, write_run

    links = [LinkRow("s1", 1, 1, "https://a.example/x", "=cmd()", labels={"j": 2.0})]
    turns = [
        TurnRow("s1", 1, query="q", scores={"a": 1.0, "b": None}, gold_satisfaction=4.0),
        TurnRow("s2", 1, query="-q", scores={"a": 0.5, "c": 2.0}),
    ]
    z = [0.25, None]
    sessions = [SessionRow("s1", n_turns=1, scores={"a": 1.0}), SessionRow("s2", n_turns=1)]
    info = {"version": 1, "scenario": {"name": "t"}}
    amended = [
        TurnRow(
            t.session_id,
            t.turn,
            t.query,
            t.response_text,
            t.task_type,
            {**t.scores, "z": v},
            t.gold_satisfaction,
        )
        for t, v in zip(turns, z, strict=True)
    ]
    write_run(tmp_path / "a", links=links, turns=amended, sessions=sessions, meta=None, info=info)
    writer = RunWriter(tmp_path / "b")
    writer.add(links=links, turns=turns[:1])
    writer.add(turns=turns[1:], sessions=sessions)
    column = iter(z)

    def amend(table: str, row: dict) -> dict:
        if table == "turns":
            row["scores"]["z"] = next(column)
        return row

    writer.finish(meta=None, info=info, amend=amend, extra_scores={"turns": ["z"]})
    for name in ("links", "turns", "sessions"):
        for suffix in (".jsonl", ".csv"):
            a = (tmp_path / "a" / f"{name}{suffix}").read_bytes()
            assert a == (tmp_path / "b" / f"{name}{suffix}").read_bytes(), name + suffix
    assert json.loads((tmp_path / "a" / "run.json").read_text()) == json.loads(
        (tmp_path / "b" / "run.json").read_text()
    )
