"""Citation support end to end: the demo scenario's run, its tables, meta-evaluation, report,
and a regression gate on citation precision and on the unsupported-claim rate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli import main
from genir_eval.ingest import read_jsonl
from genir_eval.records import Session, Statement
from genir_eval.report import load_run
from genir_eval.runner.compare import compare_runs, gate
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.runner.scenario import load_scenario, score_names

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo-citations.toml"
OFFLINE = Overrides(cache="none", journal="none")


def _worse(sessions: list[Session]) -> list[Session]:
    """The fixture with the first statement of each session made unsupported (a number
    changed) and a planted script tag, as a regressed engine might answer."""
    out = []
    for session in sessions:
        turn = session.turns[0]
        first = turn.statements[0]
        changed = Statement(
            "<script>alert(1)</script> It was 4041 of them, no more.", first.citations
        )
        statements = (changed, *turn.statements[1:])
        out.append(
            replace(session, turns=(replace(turn, statements=statements), *session.turns[1:]))
        )
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("citation-runs")
    sessions = read_jsonl(ROOT / "fixtures" / "citation_sessions.jsonl").sessions
    run_scenario(SCENARIO, out_dir=base / "a", overrides=OFFLINE)
    run_scenario(SCENARIO, out_dir=base / "b", overrides=OFFLINE, sessions=_worse(sessions))
    return base / "a", base / "b"


def test_scenario_names_the_citation_scores() -> None:
    scenario = load_scenario(SCENARIO)
    kinds = {"citation_support": "citation_support", "link_usefulness.dna": "link_usefulness"}
    names = score_names(scenario.judges, scenario.aggregate, kinds)
    assert names[:2] == ["sdcg_urge", "citation_precision"]
    assert "gold:unsupported_claims" in names and "gold:citation_precision(partial=0)" in names
    assert (
        "sdcg_urge@citation_support" not in names
        and "citation_precision@link_usefulness.dna" not in names
    )


def test_run_writes_pairs_scores_and_gold_agreement(runs: tuple[Path, Path]) -> None:
    run = load_run(runs[0])
    assert len(run.citations) == 17  # every (statement, cited link) pair of the fixture
    no_text = [c for c in run.citations if c.missing_reason]
    assert len(no_text) == 1 and no_text[0].url == "https://energy.example/winter-tips"
    full = [c for c in run.citations if c.support == "full"]
    assert full and all(c.evidence and c.basis == "source_text" for c in full)
    sessions = {s.session_id: s for s in run.sessions}
    python = sessions["cite-python"].scores
    # gold by hand: precision (1+0+0+.5+1+0)/6, recall (1+0+0+.5+1)/5, unsupported 2/5
    assert python["gold:citation_precision"] == pytest.approx(2.5 / 6, abs=1e-9)
    assert python["gold:citation_recall"] == pytest.approx(0.5, abs=1e-9)
    assert python["gold:unsupported_claims"] == pytest.approx(0.4, abs=1e-9)
    assert python["gold:citation_precision(partial=0)"] == pytest.approx(2 / 6, abs=1e-9)
    turn = next(t for t in run.turns if t.session_id == "cite-solar" and t.turn == 2)
    # the judged pairs of turn 2: a full and a none; the no-text pair is left out
    assert turn.scores["gold:citation_precision"] == pytest.approx(0.5, abs=1e-9)
    assert turn.scores["citation_precision"] is not None
    block = run.meta["judges"]["citation_support"]["citation_support"]  # type: ignore[index]
    assert block["n"] == 16 and block["missing"] == 0 and 0 <= block["accuracy"] <= 1
    assert set(block["measures"]) == {
        "citation-precision(partial=0.5)",
        "citation-recall(partial=0.5)",
        "unsupported-claims",
    }
    assert "citation_precision" in run.meta["correlations"]["session"]  # type: ignore[index]
    assert (runs[0] / "citations.csv").is_file()


def test_report_shows_verdicts_escaped(runs: tuple[Path, Path]) -> None:
    page = (runs[1] / "report.html").read_text(encoding="utf-8")
    assert "<section id='citations'>" in page and "id='citation-sessions'" in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "class='support-full'" in page and "<q class='evidence'>" in page
    assert "no source text for link [2]" in page


def test_gate_on_citation_precision_and_unsupported_claims(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture
) -> None:
    a, b = runs
    precision = compare_runs(a, b, metric="citation_precision")
    assert precision.mean_delta is not None and precision.mean_delta < 0
    assert not gate(precision, max_drop=0.05, alpha=0).passed
    unsupported = compare_runs(a, b, metric="unsupported_claims")
    assert unsupported.mean_delta is not None and unsupported.mean_delta > 0
    assert not unsupported.higher_is_better and len(unsupported.worse()) == 3
    result = gate(unsupported, max_drop=0.05, alpha=0)
    assert not result.passed and "rose (lower is better)" in result.reasons[0]
    assert gate(compare_runs(b, a, metric="unsupported_claims"), max_drop=0.05).passed
    code = main(["compare", str(a), str(b), "--metric", "citation_precision", "--max-drop", "0.05"])
    assert code == 1
    assert "FAIL: citation_precision (session level): mean dropped" in capsys.readouterr().err
    # 3 sessions: no regression, but too few to call it a pass (exit 4)
    assert main(["compare", str(a), str(a), "--metric", "unsupported_claims"]) == 4
    assert (
        main(["compare", str(a), str(a), "--metric", "unsupported_claims", "--min-sessions", "3"])
        == 0
    )


def test_meta_command_reports_agreement_with_gold_support(
    capsys: pytest.CaptureFixture,
) -> None:
    fixture = ROOT / "fixtures" / "citation_sessions.jsonl"
    args = ["meta", str(fixture), "--judge", "citation_support", "--provider", "offline"]
    # one link of the fixtures has no source text on purpose: 1 of 17 labels missing
    assert main([*args, "--journal", "none", "--cache-mode", "off", "--max-missing", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "citation support: accuracy " in out and " n 16 missing 0" in out
    assert "citation-precision(partial=0.5): judge " in out


URGE = ROOT.parent / "shared" / "urge" / "urge_sample_dev.csv"


def _urge_with_sources(tmp_path: Path) -> Path:
    """A scenario over the URGE sample (gold link labels) with a side file giving every url
    a source text, into which the test writes judges and measures."""
    import csv

    from genir_eval.ingest import load_sessions

    urls = sorted({lk.url for s in load_sessions(URGE).sessions for t in s.turns for lk in t.links})
    with (tmp_path / "sources.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["url", "text"])
        writer.writerows([u, f"A page about {u}."] for u in urls)
    return tmp_path / "sources.csv"


_MEASURE_LISTS = [
    ["citation_precision"],
    ["citation_recall", "sdcg_urge"],
    ["unsupported_claims", "decreasing", "citation_precision(partial=0)"],
    ["sdcg_urge", "srbp_urge", "citation_recall(partial=1)"],
]


@pytest.mark.slow
@pytest.mark.parametrize("gold", [True, False], ids=["gold", "no gold"])
@pytest.mark.parametrize(
    "judges",
    [["citation_support"], ["citation_support", "link_usefulness.dna"], ["link_usefulness.dna"]],
    ids=["citation judge", "citation and link judges", "link judge"],
)
@pytest.mark.parametrize("measures", _MEASURE_LISTS, ids=["+".join(m) for m in _MEASURE_LISTS])
def test_citation_measures_named_beside_gold_link_labels(
    tmp_path: Path, measures: list[str], judges: list[str], gold: bool, shared: Any
) -> None:
    """Naming citation measures on input with gold link labels (the URGE sample with a side
    file of source texts) raised ValueError from zip() after all the judging: the gold link
    scores were named after every measure, citation ones included."""
    shared(URGE, "the URGE sample")
    sources = _urge_with_sources(tmp_path)
    judge_tables = "".join(f'[[judges]]\nname = "{name}"\n\n' for name in judges)
    scenario = tmp_path / "urge-citations.toml"
    scenario.write_text(
        f'version = 1\nname = "u"\n\n[input]\npath = "{URGE}"\nformat = "urge"\n'
        f'sources = "{sources}"\n\n[engine]\nmax_missing = 1\n\n{judge_tables}'
        f"[aggregate]\nmeasures = {measures!r}\ngold = {str(gold).lower()}\n\n"
        f'[output]\ndir = "{tmp_path / "run"}"\n'.replace("'", '"'),
        encoding="utf-8",
    )
    run = run_scenario(scenario, overrides=OFFLINE)
    names = set(run.score_names("session"))
    usefulness = [m for m in measures if not m.startswith(("citation", "unsupported"))]
    for measure in usefulness:
        assert (f"gold:{measure}" in names) == gold
    if "link_usefulness.dna" in judges:
        assert all(m in names for m in usefulness)
    if "citation_support" in judges:
        assert all(m in names for m in measures if m not in usefulness)
    assert not any(f"gold:{m}" in names for m in measures if m not in usefulness)
    assert run.info["status"]["ok"]
