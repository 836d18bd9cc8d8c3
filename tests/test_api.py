"""The Python API: ``genir_eval``'s exports, and the worked example of the runner's docstring
(which the README copies) run as written, with its results checked."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import genir_eval
import genir_eval.runner

ROOT = Path(__file__).resolve().parents[1]

EXPORTS = (
    "load_sessions",
    "write_jsonl",
    "run_scenario",
    "load_run",
    "compare_runs",
    "assert_run",
    "load_scenario",
    "make_judge",
    "judge_sessions",
    "urge_table",
)


def example_code() -> str:
    """The indented code block after the first ``::`` of the runner's docstring."""
    doc = genir_eval.runner.__doc__ or ""
    block = doc.split("::\n", 1)[1]
    lines = []
    for line in block.splitlines()[1:]:  # [0] is the blank line after "::"
        if line and not line.startswith("    "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """The example run from a copy of the repository's layout: its relative paths
    (fixtures/, scenarios/, runs/, the scenario's ../.genir-cache) land in a temporary folder."""
    root = tmp_path_factory.mktemp("api")
    shutil.copytree(ROOT / "fixtures", root / "fixtures")
    (root / "scenarios").mkdir()
    shutil.copy(ROOT / "scenarios" / "demo-offline.toml", root / "scenarios")
    (root / "runs").mkdir()
    namespace: dict[str, Any] = {"__name__": "example"}
    printed = io.StringIO()
    here = os.getcwd()
    elsewhere = tmp_path_factory.mktemp("elsewhere")  # run from another folder than the repo
    os.chdir(elsewhere)  # contextlib.chdir is 3.11+
    os.environ["GENIR_EVAL_REPO"] = str(root)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(example_code(), "runner-docstring-example", "exec"), namespace)
    finally:
        os.chdir(here)
        del os.environ["GENIR_EVAL_REPO"]
    assert not any(elsewhere.iterdir())  # nothing written where it ran
    return root, namespace, printed.getvalue()


def test_the_curated_exports() -> None:
    for name in EXPORTS:
        assert name in genir_eval.__all__ and callable(getattr(genir_eval, name)), name
    with pytest.raises(AttributeError):
        genir_eval.no_such_name  # noqa: B018


def test_importing_the_records_stays_cheap() -> None:
    code = (
        "import sys, genir_eval.records, genir_eval; "
        "print(sorted(m for m in ('scipy', 'numpy', 'genir_eval.runner', 'genir_eval.judges',"
        " 'genir_eval.llm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_example_loads_and_writes_sessions(example: tuple[Path, dict[str, Any], str]) -> None:
    root, ns, _ = example
    sessions = ns["sessions"]
    assert len(sessions) == 8  # fixtures/demo_sessions.csv: 8 sessions
    back = genir_eval.load_sessions(root / "runs" / "demo_sessions.jsonl").sessions
    assert [s.session_id for s in back] == [s.session_id for s in sessions]


def test_example_run_and_its_meta_evaluation(example: tuple[Path, dict[str, Any], str]) -> None:
    root, ns, printed = example
    run = ns["run"]
    assert run.directory == root / "runs" / "demo"
    assert run.report_path.is_file()
    meta = json.loads((root / "runs" / "demo" / "meta.json").read_text())
    headline = meta["correlations"]["session"]["sdcg_urge"]
    assert ns["headline"] == headline and headline["n"] == 7
    # 7 sessions with ratings: below decide.MIN_N (10), no interval, as the pages say
    assert headline["ci95"] == {"pearson": None, "spearman": None, "kendall": None}
    assert printed.splitlines()[0].split()[2] == "None"
    dna = ns["dna"]
    assert dna == meta["judges"]["link_usefulness.dna"]["link_usefulness"]
    assert dna["n"] == 29 and dna["missing"] == 0  # the fixtures' 29 expert-labelled links
    assert 0.5 <= dna["pairwise_auc"] <= 1.0  # the offline baseline beats chance
    first = printed.splitlines()[0].split()
    assert float(first[0]) == pytest.approx(run.mean("sdcg_urge"), abs=1e-12)


def test_example_comparison(example: tuple[Path, dict[str, Any], str]) -> None:
    _, ns, _ = example
    comparison = ns["comparison"]
    before, after = ns["before"], ns["after"]
    assert comparison.metric == "sdcg_urge" and comparison.n == 7  # sessions with a score
    # after's sdcg_urge is before's sdcg_urge@link_usefulness.true, session by session
    assert after.scores("sdcg_urge") == before.scores("sdcg_urge@link_usefulness.true")
    expected = sum(d.delta for d in comparison.deltas) / comparison.n
    assert comparison.mean_delta == pytest.approx(expected, abs=1e-12)
    assert all(d.delta < 0 for d in comparison.worse())


def test_example_single_judge(example: tuple[Path, dict[str, Any], str]) -> None:
    _, ns, _ = example
    labels, session = ns["labels"], ns["sessions"][0]
    cited = [(t.index, link_id) for t in session.turns for link_id in t.cited_link_ids]
    assert [(lb.key.turn, lb.key.item) for lb in labels] == [(t, f"link:{i}") for t, i in cited]
    assert all(lb.value in (0, 1, 2, 3) and lb.key.judge == "link_usefulness.true" for lb in labels)
    assert all(lb.raw and lb.prompt_hash for lb in labels)  # the evidence is kept


def test_example_urge_table(example: tuple[Path, dict[str, Any], str]) -> None:
    _, ns, _ = example
    row = ns["table"]["session_level"]["sdcg_urge"]
    # the expert labels' sDCG: the same figure as the run's gold:sdcg_urge
    gold = ns["run"].meta["correlations"]["session"]["gold:sdcg_urge"]
    assert row["n"] == gold["n"] == 8
    assert row["spearman"] == pytest.approx(gold["spearman"], abs=1e-12)
