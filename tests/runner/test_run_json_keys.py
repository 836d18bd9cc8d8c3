"""A run folder's ``run.json`` with a key deleted is refused like one with the key edited
(genir_eval/rundir/verify.py): a judge's ``missing`` count is checked against the run's own
failures, and a count that is not there is no count.

The run is ``scenarios/demo-citations.toml`` offline, whose citation judge has 1 label
missing (1 of 17) and whose link judge has none; each test deletes one judge's key from a
copy and reads the folder back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.rundir.folder import load_run

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo-citations.toml"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("keys") / "run"
    assert main(["run", str(SCENARIO), "--out", str(out), "--cache-mode", "off", "--quiet"]) == 0
    return out


def _without(made: Path, tmp_path: Path, judge: str, key: str) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(made, copy)
    info = json.loads((copy / "run.json").read_text(encoding="utf-8"))
    entry = next(j for j in info["judges"] if j["id"] == judge)
    del entry[key]
    (copy / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return copy


def test_the_run_is_what_the_tests_claim(made: Path) -> None:
    info = json.loads((made / "run.json").read_text(encoding="utf-8"))
    missing = {j["id"]: j["missing"] for j in info["judges"]}
    assert missing["citation_support"] == 1 and missing["link_usefulness.dna"] == 0
    load_run(made)  # as written, it reads back


@pytest.mark.parametrize(
    ("judge", "failures"), [("citation_support", 1), ("link_usefulness.dna", 0)]
)
def test_a_judge_without_its_missing_count_is_refused(
    made: Path, tmp_path: Path, judge: str, failures: int
) -> None:
    copy = _without(made, tmp_path, judge, "missing")
    with pytest.raises(InputError) as raised:
        load_run(copy)
    message = str(raised.value)
    assert f"judge {judge}: run.json says None labels missing" in message
    assert f"the run's failures list {failures}" in message


def test_compare_refuses_such_a_folder_with_one_line(
    made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _without(made, tmp_path, "citation_support", "missing")
    capsys.readouterr()
    code = main(["compare", str(made), str(copy), "--metric", "citation_precision"])
    err = capsys.readouterr().err
    assert code == 2
    assert "says None labels missing" in err and "Traceback" not in err
