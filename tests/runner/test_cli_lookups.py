"""The smaller commands of issue 45: ``genir-eval judges NAME`` (one judge's card),
``run --sessions ID,ID`` and ``--limit N`` (a subset of the input), and ``genir-eval failures
RUN`` (the missing judgments grouped by cause, the judges each hit, a hint)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from genir_eval.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_one_judges_card_states_its_kind_evidence_scale_and_options() -> None:
    code, out, _ = _cli("judges", "satisfaction.urs")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "satisfaction.urs  [satisfaction]"
    assert lines[1].startswith("  asks: URGE's task-type-aware user-satisfaction rubric")
    assert "  its scores rest on rated satisfaction:" in out
    assert "  its own score: 1-10, " in out  # the judge's scale, not the users' 1-5
    assert "  prompt: genir_eval/prompts/satisfaction_dimensions.{en,zh}.txt" in out
    assert "logprobs" in out and "temperature" in out
    code, out, _ = _cli("judges", "link_usefulness.dna", "--json")
    card = json.loads(out)
    assert (card["kind"], card["evidence"], card["scale"]) == (
        "link_usefulness",
        "link usefulness",
        "0-3",
    )


def test_an_unknown_judge_name_is_one_line_with_the_closest() -> None:
    code, out, err = _cli("judges", "satisfaction.ur")
    assert code == 2 and out == ""
    assert err == (
        "genir-eval: error: no judge named 'satisfaction.ur' (did you mean "
        "'satisfaction.urs'?); `genir-eval judges` lists them\n"
    )


@pytest.fixture(scope="module")
def citations_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lookups") / "citations"
    code, _, err = _cli(
        "run", str(ROOT / "scenarios" / "demo-citations.toml"), "--out", str(out), "--quiet",
        "--cache", "none",
    )  # fmt: skip
    assert code == 0, err
    return out


@pytest.mark.slow
def test_failures_groups_the_missing_by_cause(citations_run: Path) -> None:
    code, out, _ = _cli("failures", str(citations_run))
    assert code == 0
    # demo-citations leaves one link without source text on purpose (its scenario says so)
    assert out.splitlines() == [
        f"{citations_run}: 1 judgment missing",
        "missing per judge (max_missing 10.0% of each judge's labels):",
        "  citation_support: 1 of 17 (5.9%)",
        "  link_usefulness.dna: 0 of 8 (0.0%)",
        "1 x other at offline/offline: judges hit citation_support",
        "    most frequent reason: no source text for link [2]; set allow_title_only=true to "
        "judge it from title and url",
        "    e.g. sessions: cite-solar",
        "    hint: see the reason and failures.jsonl",
    ]
    code, out, _ = _cli("failures", str(citations_run), "--json")
    report = json.loads(out)
    assert report["ok"] is True and report["missing"] == 1
    assert [c["judges"] for c in report["causes"]] == [["citation_support"]]


@pytest.mark.slow
def test_run_judges_the_sessions_named_and_the_first_n(tmp_path: Path) -> None:
    scenario = str(ROOT / "scenarios" / "demo-offline.toml")
    code, _, err = _cli(
        "run", scenario, "--out", str(tmp_path / "two"), "--quiet", "--cache", "none",
        "--sessions", "urge-3,urge-1",
    )  # fmt: skip
    assert code == 0, err
    rows = (tmp_path / "two" / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(r)["session_id"] for r in rows] == ["urge-1", "urge-3"]  # input order
    code, _, err = _cli(
        "run", scenario, "--out", str(tmp_path / "first"), "--quiet", "--cache", "none",
        "--limit", "3",
    )  # fmt: skip
    assert code == 0, err
    rows = (tmp_path / "first" / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(r)["session_id"] for r in rows] == ["urge-0", "urge-1", "urge-2"]
    code, _, err = _cli(
        "run", scenario, "--out", str(tmp_path / "none"), "--sessions", "urge-1,urge-99"
    )
    assert code == 2
    assert err == (
        "genir-eval: error: --sessions: the input holds no session 'urge-99' (8 sessions in it)\n"
    )
    assert not (tmp_path / "none").exists()
