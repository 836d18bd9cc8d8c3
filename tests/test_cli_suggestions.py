"""A mistyped name is answered with the name meant: never the typo itself, a name it begins
(or that begins it) before a look-alike (`sdcg` -> `sdcg_urge`, not `rsdcg_urge`), and, when
the typo sits elsewhere in the scenario (a measure left out of `aggregate.measures`), the key
to fix rather than the correct name blamed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from genir_eval.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "scenarios" / "demo-offline.toml"


def _scenario(tmp_path: Path, old: str, new: str) -> Path:
    text = DEMO.read_text(encoding="utf-8")
    assert old in text
    text = text.replace(old, new, 1).replace("../fixtures/", f"{ROOT / 'fixtures'}/")
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_measure_left_out_names_aggregate_measures_not_a_look_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `sdcg` typed for `sdcg_urge` in the measures: the combined score naming sdcg_urge is
    # refused, and the message points at the measures, offering neither the typo nor rsdcg
    scenario = _scenario(tmp_path, 'measures = ["sdcg_urge"', 'measures = ["sdcg"')
    err = _error(capsys, ["run", str(scenario), "--out", str(tmp_path / "run")])
    assert "'sdcg_urge' is not a score of this scenario: aggregate.measures does not list" in err
    assert "did you mean" not in err


def test_a_mistyped_link_judge_is_given_the_judge_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _scenario(
        tmp_path, 'link_judges = ["link_usefulness.dna"', 'link_judges = ["link_usefulnes.dna"'
    )
    err = _error(capsys, ["run", str(scenario), "--out", str(tmp_path / "run")])
    assert "'link_usefulnes.dna' is not a judge of this scenario (did you mean " in err
    assert re.search(r"did you mean 'link_usefulness\.dna'\?", err)


def test_a_judge_name_in_the_wrong_case_is_given_its_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _scenario(tmp_path, 'name = "spans"', 'name = "Spans"')
    err = _error(capsys, ["run", str(scenario), "--out", str(tmp_path / "run")])
    assert "unknown judge 'Spans' (did you mean 'spans'?)" in err


def test_compare_metric_sdcg_suggests_sdcg_urge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main(["run", str(DEMO), "--out", str(run), "--cache", "none", "--quiet"]) == 0
    capsys.readouterr()
    err = _error(capsys, ["compare", str(run), str(run), "--metric", "sdcg"])
    assert "no score 'sdcg' at session level (did you mean 'sdcg_urge'?)" in err
