from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.rundir.folder import OUTPUT_VERSION, load_run, write_run


def test_every_file_carries_version(run_dir: Path) -> None:
    for name in ("links.jsonl", "turns.jsonl", "sessions.jsonl"):
        rows = [json.loads(line) for line in (run_dir / name).read_text().splitlines()]
        assert rows and all(r["version"] == OUTPUT_VERSION for r in rows)
        with (run_dir / name.replace(".jsonl", ".csv")).open(newline="") as handle:
            csv_rows = list(csv.DictReader(handle))
        assert len(csv_rows) == len(rows)
        assert all(r["version"] == str(OUTPUT_VERSION) for r in csv_rows)
    for name in ("meta.json", "run.json"):
        assert json.loads((run_dir / name).read_text())["version"] == OUTPUT_VERSION


def test_csv_flattens_labels_and_scores(run_dir: Path) -> None:
    with (run_dir / "links.csv").open(newline="") as handle:
        row = next(csv.DictReader(handle))
    assert row["label:link_usefulness.dna"] == "1.0"
    with (run_dir / "sessions.csv").open(newline="") as handle:
        row = next(csv.DictReader(handle))
    assert row["score:sdcg_urge"] == "0.0"


def test_round_trip(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert len(run.sessions) == 6 and len(run.turns) == 12 and len(run.links) == 24
    assert run.links[1].labels["link_usefulness.true"] is None
    assert run.links[1].missing["link_usefulness.true"] == "permanent: HTTP 400"
    assert run.score_names("session") == ["sdcg_urge", "satisfaction.urs"]
    # mean of 0.0, 0.1, ..., 0.5 (computed by hand), tolerance for float sums
    assert run.mean("sdcg_urge") == pytest.approx(0.25, abs=1e-12)
    assert run.scores("sdcg_urge", "turn")["s0#2"] == pytest.approx(0.1, abs=1e-12)
    assert run.meta is not None and run.meta["headline"] == "sdcg_urge"


def test_unknown_score_names_the_known_ones(run_dir: Path) -> None:
    run = load_run(run_dir)
    with pytest.raises(KeyError, match="known: sdcg_urge, satisfaction.urs"):
        run.scores("ndcg")


def test_nan_is_written_as_missing(tmp_path: Path) -> None:
    from genir_eval.rundir.folder import SessionRow

    write_run(
        tmp_path,
        links=[],
        turns=[],
        sessions=[SessionRow("a", scores={"m": float("nan")})],
        meta=None,
        info={"version": OUTPUT_VERSION},
    )
    assert load_run(tmp_path).sessions[0].scores["m"] is None


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no run.json"):
        load_run(tmp_path)


def test_unsupported_version(run_dir: Path) -> None:
    (run_dir / "run.json").write_text(json.dumps({"version": 99}))
    with pytest.raises(InputError, match="unsupported output version 99"):
        load_run(run_dir)


def test_stale_meta_is_removed(run_dir: Path) -> None:
    run = load_run(run_dir)
    write_run(
        run_dir, links=run.links, turns=run.turns, sessions=run.sessions, meta=None, info=run.info
    )
    assert not (run_dir / "meta.json").exists()
    assert load_run(run_dir).meta is None
