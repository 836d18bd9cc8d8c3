"""Nugget sets as real evaluations publish them, end to end offline (issue 49): answers filed
by ``meta.topic`` (one without its query), a graded file with people's labels as gold (kappa,
F1, per grade, PPI) in ``meta.json`` and the summary, a query without vital nuggets said as
such and never under grounding; the arena's nugget options checked up front (issue 46.5)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions, read_jsonl
from genir_eval.records import EVIDENCE_KINDS, NUGGETS
from genir_eval.report import load_run
from genir_eval.report.card import part_scores
from genir_eval.report.scores import missing_reasons
from genir_eval.report.summary import format_summary
from genir_eval.runner.run import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "nuggets"
OFFLINE = Overrides(cache="none", journal="none")


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nugget-sets") / "graded"
    run_scenario(ROOT / "scenarios" / "nuggets-graded.toml", out_dir=out, overrides=OFFLINE)
    return out


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]


def test_an_answer_without_its_query_is_assigned_by_its_topic(graded: Path) -> None:
    # issue 49.3: an empty query was refused even with the nuggets given
    sessions = load_sessions(FIXTURES / "answers.jsonl").sessions
    gamma = next(s for s in sessions if s.session_id == "tides/gamma")
    assert gamma.turns[0].query == "" and gamma.meta["topic"] == "tides"
    labels = {
        row["session_id"]: row for row in _rows(graded / "evidence.jsonl") if row.get("turn") == 1
    }
    judged = [j for j in labels["tides/gamma"]["judgments"] if j.get("item") == "nuggets"]
    assert judged and judged[0]["value"]["qid"] == "tides"
    # without a topic the query is still required
    bad = next(r for r in _rows(FIXTURES / "answers.jsonl") if r["session_id"] == "tides/gamma")
    bad.pop("meta")
    path = ROOT / "build-test-no-topic.jsonl"
    try:
        path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match="the query is empty"):
            read_jsonl(path)
    finally:
        path.unlink(missing_ok=True)


def _kappa(a: list[int], b: list[int]) -> float:
    """Cohen's kappa written out for two binary raters (Cohen 1960), apart from meta.stats."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (observed - expected) / (1 - expected)


def test_people_s_nugget_labels_meet_the_judge(graded: Path) -> None:
    # issue 49.6: per-(nugget, answer) labels as gold, with kappa, F1, per grade and PPI
    meta = json.loads((graded / "meta.json").read_text(encoding="utf-8"))
    people = meta["judges"]["nuggets"]["nuggets"]["people"]
    gold = {
        s.session_id: s.gold.nugget_assignments[0]  # type: ignore[union-attr,index]
        for s in load_sessions(FIXTURES / "answers.jsonl").sessions
    }
    judged: dict[tuple[str, str], str] = {}
    grade: dict[tuple[str, str], float] = {}
    for row in _rows(graded / "evidence.jsonl"):
        for j in row.get("judgments", []):
            if j.get("item") == "nuggets" and j.get("value"):
                for n in j["value"]["nuggets"]:
                    judged[(str(row["session_id"]), n["id"])] = n["assignment"]
                    grade[(str(row["session_id"]), n["id"])] = n["grade"]
    keys = sorted(judged)
    assert len(keys) == people["n"] == 52  # 13 answers x 4 nuggets, every one labelled
    yes = {"support", "partial_support"}
    a = [int(judged[k] in yes) for k in keys]
    b = [int(gold[k[0]][k[1]] in yes) for k in keys]
    assert people["kappa"] == pytest.approx(_kappa(a, b), abs=1e-12)
    tp = sum(x and y for x, y in zip(a, b, strict=True))
    assert people["f1"] == pytest.approx(2 * tp / (sum(a) + sum(b)), abs=1e-12)
    assert people["queries"] == 6
    lo, hi = people["ci95"]["kappa"]
    assert lo <= people["kappa"] <= hi and hi - lo > 0  # resampled over six queries
    counts = Counter(f"{grade[k]:g}" for k in keys)
    assert {g: block["n"] for g, block in people["by_importance"].items()} == dict(counts)
    # people labelled every turn: their own mean recall is the estimate (by hand below)
    gains = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    per_turn = [sum(gains[v] for v in labels.values()) / 4 for labels in gold.values()]
    assert people["ppi"]["gold_mean"]["estimate"] == pytest.approx(sum(per_turn) / 13)
    summary = load_run(graded)
    assert summary.meta is not None


def test_the_summary_gives_the_comparison_with_people(graded: Path) -> None:
    out = format_summary(load_run(graded))
    assert "nugget assignments vs people's labels" in out
    assert "importance 4:" in out and "over 52 (nugget, answer) pairs of 6 queries" in out


def test_a_query_without_vital_nuggets_is_said_as_such(tmp_path: Path) -> None:
    # issue 49.5: "no citations" for a query without vital nuggets, nugget recall under
    # grounding
    path = tmp_path / "okay-only.jsonl"
    rows = _rows(FIXTURES / "graded.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    # vital from grade 4: the tides topic has none (its grades are 4, 3, 3, 1: one vital);
    # vital from 5: no query has a vital nugget
    scenario = (ROOT / "scenarios" / "nuggets-graded.toml").read_text(encoding="utf-8")
    scenario = scenario.replace('"../fixtures/nuggets/graded.jsonl"', json.dumps(str(path)))
    scenario = scenario.replace("vital_grade = 3", "vital_grade = 5").replace(
        'path = "../fixtures/', f'path = "{ROOT}/fixtures/'
    )
    file = tmp_path / "s.toml"
    file.write_text(scenario, encoding="utf-8")
    run_scenario(file, out_dir=out, overrides=OFFLINE)
    run = load_run(out)
    reasons = missing_reasons(run, "session")
    assert dict(reasons["vital_nugget_recall"]) == {"the query has no vital nuggets": 13}
    assert "no citations" not in str(reasons)
    names = run.score_names("session")
    parts = part_scores(run, names)
    nugget_scores = [name for name in names if "nugget" in name]
    assert nugget_scores and set(nugget_scores) <= set(parts[NUGGETS])
    assert not any("nugget" in n for kind, got in parts.items() if kind != NUGGETS for n in got)
    summary = format_summary(run)
    assert "grounding" not in summary.lower()
    # the nugget scores sit under the nuggets' own heading, never under citation support
    assert EVIDENCE_KINDS[NUGGETS].title in summary
    support = EVIDENCE_KINDS["citation support"].title
    assert "nugget" not in (
        summary.split(support, 1)[1].split("\n\n")[0] if support in summary else ""
    )
    assert "the query has no vital nuggets" in summary


def test_meta_keys_read_are_documented() -> None:
    # issue 49.4: meta.topic, the only way to file several systems' answers under one query
    guide = (ROOT / "docs" / "guide" / "inputs.md").read_text(encoding="utf-8")
    assert "`meta.topic`" in guide and "`meta.system`" in guide
    assert "are accepted and ignored" not in guide.split("`meta`")[0]


def _arena_system(path: Path, system: str) -> str:
    rows = [
        {**r, "session_id": r["meta"]["topic"]}  # type: ignore[index]
        for r in _rows(FIXTURES / "answers.jsonl")
        if r["meta"]["system"] == system  # type: ignore[index]
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_a_nugget_option_without_nuggets_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = (_arena_system(tmp_path / f"{s}.jsonl", s) for s in ("alpha", "beta"))
    out = tmp_path / "arena"
    argv = ["arena", a, b, "--out", str(out), "--cache", "none", "--quiet"]
    assert main([*argv, "--nugget-option", "max_nuggets=5"]) == 2
    assert "--nugget-option max_nuggets=5: nugget options are read only with --nuggets" in (
        capsys.readouterr().err
    )
    assert not (out / "pairs.jsonl").exists()


def test_a_bad_nugget_option_is_refused_before_any_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = (_arena_system(tmp_path / f"{s}.jsonl", s) for s in ("alpha", "beta"))
    out = tmp_path / "arena"
    missing = tmp_path / "no-such-nuggets.jsonl"
    argv = ["arena", a, b, "--out", str(out), "--cache", "none", "--quiet", "--nuggets"]
    assert main([*argv, "--nugget-option", f"nuggets={missing}"]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "Traceback" not in err
    assert not (out / "pairs.jsonl").exists() and not (out / "arena.json").exists()
    # with the file given, the arena scores the systems' coverage of it
    graded = FIXTURES / "graded.jsonl"
    assert main([*argv, "--nugget-option", f"nuggets={graded}"]) == 0
    document = json.loads((out / "arena.json").read_text(encoding="utf-8"))
    assert set(document["nuggets"]["systems"]) == {"alpha", "beta"}


def test_a_run_s_nugget_file_given_back_loads(tmp_path: Path) -> None:
    # issue 46.5: "version": 2 in an entry made the run's own nuggets.jsonl unreadable
    source = tmp_path / "nuggetizer.jsonl"
    rows = _rows(FIXTURES / "nuggetizer.jsonl")
    rows[0]["nuggets"][0]["version"] = 2  # type: ignore[index]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scenario = (ROOT / "scenarios" / "nuggets-nuggetizer.toml").read_text(encoding="utf-8")
    scenario = scenario.replace('"../fixtures/nuggets/nuggetizer.jsonl"', json.dumps(str(source)))
    scenario = scenario.replace('path = "../fixtures/', f'path = "{ROOT}/fixtures/')
    first = tmp_path / "first.toml"
    first.write_text(scenario, encoding="utf-8")
    run_scenario(first, out_dir=tmp_path / "one", overrides=OFFLINE)
    again = tmp_path / "again.toml"
    again.write_text(
        scenario.replace(
            json.dumps(str(source)), json.dumps(str(tmp_path / "one" / "nuggets.jsonl"))
        ),
        encoding="utf-8",
    )
    run_scenario(again, out_dir=tmp_path / "two", overrides=OFFLINE)
    one, two = (_rows(tmp_path / d / "nuggets.jsonl") for d in ("one", "two"))
    assert [r["text"] for r in one] == [r["text"] for r in two]
    assert load_run(tmp_path / "two").info["status"]["ok"]


def test_a_run_s_graded_nugget_file_reads_back_as_the_run_split_it(tmp_path: Path) -> None:
    from genir_eval.judges.nuggets import read_nugget_file

    scenario = (ROOT / "scenarios" / "nuggets-graded.toml").read_text(encoding="utf-8")
    scenario = scenario.replace("vital_grade = 3", "vital_grade = 4").replace(
        '"../fixtures/', f'"{ROOT}/fixtures/'
    )
    file = tmp_path / "s.toml"
    file.write_text(scenario, encoding="utf-8")
    run_scenario(file, out_dir=tmp_path / "run", overrides=OFFLINE)
    back = read_nugget_file(tmp_path / "run" / "nuggets.jsonl")
    split = {(n.grade, n.importance) for s in back.values() for n in s.nuggets}
    # vital from grade 4 as the run said, not from the middle of the grades (2.5)
    assert split == {(4, "vital"), (3, "okay"), (2, "okay"), (1, "okay")}
    rows = _rows(tmp_path / "run" / "nuggets.jsonl")
    assert {r["vital_grade"] for r in rows} == {4.0}
    assert {r["importance"] for r in rows} == {1, 2, 3, 4}  # the grades kept as given
