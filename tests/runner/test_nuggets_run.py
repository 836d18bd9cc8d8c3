"""Nugget evaluation end to end, offline: the demo scenario's run and its nugget file, people's
edits used as given, a regression gate on nugget recall, a bad nugget file refused before any
call (exit 2), and the URGE sample, a Markdown product log and CrowdRAG topics (pooled)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.ingest import read_jsonl
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.records import Session
from genir_eval.report import load_run
from genir_eval.runner.compare import compare_runs, gate
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.runner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo-nuggets.toml"
OFFLINE = Overrides(cache="none", journal="none")
SHARED = ROOT.parent / "shared"
MEASURES = [
    "nugget_recall",
    "nugget_recall(partial=0)",
    "vital_nugget_recall",
    "vital_nugget_recall(partial=0)",
]


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]


def _scenario(path: Path, fmt: str | None, out: Path, **options: object) -> object:
    return parse_scenario(
        {
            "version": 1,
            "name": "nuggets-test",
            "input": {"path": str(path), **({"format": fmt} if fmt else {})},
            "engine": {"cache_mode": "off", "journal": False, "max_missing": 1.0},
            "judges": [{"name": "nuggets", "options": options}],
            "output": {"dir": str(out), "report": False},
        },
        base_dir=out.parent,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nuggets") / "demo"
    run_scenario(SCENARIO, out_dir=out, overrides=OFFLINE)
    return out


def test_demo_run_scores_and_writes_its_nuggets(demo: Path) -> None:
    run = load_run(demo)
    for name in MEASURES:
        assert name in run.score_names("session")
    rows = _rows(demo / "nuggets.jsonl")
    assert {r["qid"] for r in rows} == {
        "cite-espresso",
        "cite-python",
        "cite-solar#1",
        "cite-solar#2",
    }
    assert {r["importance"] for r in rows} <= {"vital", "okay"}
    assert all(str(r["origin"]).startswith("made by nuggets (offline/offline)") for r in rows)
    evidence = _rows(demo / "evidence.jsonl")
    reasons = [j["reason"] for row in evidence for j in row.get("judgments", [])]
    assert any(str(r).startswith("vital:") and "covered [vital]" in str(r) for r in reasons)
    # the system's scores with 95% intervals over queries, in meta.json and the report
    block = json.loads((demo / "meta.json").read_text())["judges"]["nuggets"]["nuggets"]
    system = block["systems"]["run"]
    assert system["answers"] == 4
    lo, hi = system["ci95"]["nugget_recall"]
    assert lo < system["nugget_recall"] < hi  # four queries that differ: a real width
    assert "Coverage of the nuggets per system" in (demo / "report.html").read_text(
        encoding="utf-8"
    )
    # the strict score never exceeds the one counting partial support half
    scores = run.scores("nugget_recall")
    strict = run.scores("nugget_recall(partial=0)")
    assert all((strict[s] or 0) <= (scores[s] or 0) for s in scores)


def test_edited_nuggets_are_used_as_given(demo: Path, tmp_path: Path) -> None:
    rows = _rows(demo / "nuggets.jsonl")
    espresso = [r for r in rows if r["qid"] == "cite-espresso"]
    # people keep one nugget of the espresso query, rewritten and made okay, and drop the rest
    edited = [
        {
            **espresso[0],
            "nugget_id": "human-1",
            "text": "The Eiffel Tower is in Paris",
            "importance": "okay",
            "origin": "human",
        }
    ]
    others = [r for r in rows if r["qid"] != "cite-espresso"]
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*edited, *others]), encoding="utf-8")
    out = tmp_path / "again"
    document = _scenario(
        ROOT / "fixtures" / "citation_sessions.jsonl", "jsonl", out, nuggets=str(path)
    )
    run = run_scenario(document, overrides=OFFLINE)  # type: ignore[arg-type]
    written = _rows(out / "nuggets.jsonl")
    assert [r for r in written if r["qid"] == "cite-espresso"] == edited
    turn = [r for r in _rows(out / "evidence.jsonl") if r["session_id"] == "cite-espresso"][0]
    [judgment] = [j for j in turn["judgments"] if j["item"] == "nuggets"]
    assert [n["id"] for n in judgment["value"]["nuggets"]] == ["human-1"]
    # an answer about espresso does not state where the Eiffel Tower is; no vital nugget left
    assert run.scores("nugget_recall")["cite-espresso"] == 0.0
    assert run.scores("vital_nugget_recall")["cite-espresso"] is None


def test_a_regression_gate_on_nugget_recall(demo: Path, tmp_path: Path) -> None:
    sessions = read_jsonl(ROOT / "fixtures" / "citation_sessions.jsonl").sessions

    def emptied(session: Session) -> Session:
        turn = replace(session.turns[0], response_text="I cannot help with that.", statements=())
        return replace(session, turns=(turn, *session.turns[1:]))

    worse = tmp_path / "worse"
    nuggets = str(demo / "nuggets.jsonl")
    document = _scenario(
        ROOT / "fixtures" / "citation_sessions.jsonl", "jsonl", worse, nuggets=nuggets
    )
    run_scenario(document, overrides=OFFLINE, sessions=[emptied(s) for s in sessions])  # type: ignore[arg-type]
    comparison = compare_runs(demo, worse, metric="nugget_recall")
    assert comparison.higher_is_better and comparison.mean_delta < 0
    assert not gate(comparison, max_drop=0.05, alpha=None).passed


def _stray_scenario(demo: Path, tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "stray.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        SCENARIO.read_text(encoding="utf-8")
        .replace('path = "../fixtures/', f'path = "{ROOT}/fixtures/')
        .replace('pool = "run"', f'nuggets = "{path}"'),
        encoding="utf-8",
    )
    return scenario


def test_a_collection_file_serves_the_queries_the_input_has(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 49.1: a collection's file covering queries the input does not have is used for
    # those it has, and the unused count said in one line (it was refused)
    rows = _rows(demo / "nuggets.jsonl")
    stray = [{**rows[0], "qid": f"other-topic-{i}", "nugget_id": "n1"} for i in range(3)]
    scenario = _stray_scenario(demo, tmp_path, [*rows, *stray])
    code = main(["run", str(scenario), "--out", str(tmp_path / "out"), "--cache", "none"])
    err = capsys.readouterr().err
    assert code == 0, err
    said = [line for line in err.splitlines() if "queries used" in line]
    assert len(said) == 1
    assert "4 of its 7 queries used; 3 not in the run's input" in said[0]
    assert "'other-topic-0'" in said[0]
    run = load_run(tmp_path / "out")
    assert {r["qid"] for r in _rows(tmp_path / "out" / "nuggets.jsonl")} == {r["qid"] for r in rows}
    assert run.info["status"]["ok"]


def test_a_nugget_file_sharing_no_query_with_the_logs_exits_2(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _rows(demo / "nuggets.jsonl")
    stray = {**rows[0], "qid": "no-such-query", "nugget_id": "n1"}
    scenario = _stray_scenario(demo, tmp_path, [stray])
    code = main(["run", str(scenario), "--out", str(tmp_path / "out"), "--cache", "none"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{tmp_path / 'stray.jsonl'}, line 1, column 'qid'" in err
    assert "no-such-query" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "journal.sqlite").exists()  # refused before any call


def test_markdown_product_log(tmp_path: Path) -> None:
    out = tmp_path / "md"
    run = run_scenario(_scenario(ROOT / "fixtures" / "product_logs.md", "markdown", out))  # type: ignore[arg-type]
    values = [v for v in run.scores("nugget_recall", level="turn").values() if v is not None]
    assert values and all(0.0 <= v <= 1.0 for v in values)
    rows = _rows(out / "nuggets.jsonl")
    assert rows and all("by title only" in str(r["origin"]) for r in rows)


@pytest.mark.skipif(
    not (SHARED / "urge" / "urge_sample_dev.csv").is_file(), reason="no URGE sample"
)
def test_urge_sample(tmp_path: Path) -> None:
    out = tmp_path / "urge"
    run = run_scenario(_scenario(SHARED / "urge" / "urge_sample_dev.csv", "urge", out))  # type: ignore[arg-type]
    scored = [v for v in run.scores("nugget_recall").values() if v is not None]
    assert len(scored) == 12


@pytest.mark.skipif(not (SHARED / "crowdrag").is_dir(), reason="no CrowdRAG sample")
def test_crowdrag_topics_pool_the_six_answers(tmp_path: Path) -> None:
    folder = tmp_path / "crowdrag"
    convert_crowdrag(SHARED / "crowdrag", folder)
    answers = read_jsonl(folder / "answers.jsonl").sessions
    topics = sorted({s.meta["topic"] for s in answers})[:2]
    subset = [s for s in answers if s.meta["topic"] in topics]
    out = tmp_path / "run"
    path = tmp_path / "answers.jsonl"
    path.write_text(
        "".join(
            line
            for line in (folder / "answers.jsonl").read_text(encoding="utf-8").splitlines(True)
            if json.loads(line)["meta"]["topic"] in topics
        ),
        encoding="utf-8",
    )
    run = run_scenario(_scenario(path, "jsonl", out, max_nuggets=20))  # type: ignore[arg-type]
    rows = _rows(out / "nuggets.jsonl")
    assert {r["qid"] for r in rows} == set(topics)
    assert all("of 6 answer(s)" in str(r["origin"]) for r in rows)
    scores = run.scores("nugget_recall")
    assert len([s for s in subset if scores[s.session_id] is not None]) == 12


@pytest.mark.skipif(not (SHARED / "crowdrag").is_dir(), reason="no CrowdRAG sample")
def test_one_system_s_log_pools_the_other_systems_logs(tmp_path: Path) -> None:
    folder = tmp_path / "crowdrag"
    convert_crowdrag(SHARED / "crowdrag", folder)
    systems = sorted((folder / "systems").glob("*.jsonl"))
    first = read_jsonl(systems[0]).sessions[:1]
    log = tmp_path / "one.jsonl"
    log.write_text((systems[0]).read_text(encoding="utf-8").splitlines(True)[0], encoding="utf-8")
    out = tmp_path / "run"
    others = ",".join(str(p) for p in systems[1:])
    run_scenario(_scenario(log, "jsonl", out, pool_logs=others, max_nuggets=10))  # type: ignore[arg-type]
    rows = _rows(out / "nuggets.jsonl")
    assert {r["qid"] for r in rows} == {first[0].session_id}
    assert all("of 6 answer(s)" in str(r["origin"]) for r in rows)


@pytest.mark.skipif(not (SHARED / "crowdrag").is_dir(), reason="no CrowdRAG sample")
def test_arena_shows_nugget_scores_beside_the_ranking(tmp_path: Path) -> None:
    from genir_eval.runner.arena import ArenaSettings, System, run_arena

    folder = tmp_path / "crowdrag"
    convert_crowdrag(SHARED / "crowdrag", folder)
    systems = []
    for path in sorted((folder / "systems").glob("*.jsonl"))[:3]:
        cut = tmp_path / path.name
        cut.write_text("".join(path.read_text(encoding="utf-8").splitlines(True)[:2]))
        systems.append(System(path.stem, cut))
    out = tmp_path / "arena"
    document = run_arena(
        ArenaSettings(systems=tuple(systems), out=out, nuggets={"max_nuggets": 10}),
        overrides=OFFLINE,
    )
    table = document["nuggets"]["systems"]
    assert list(table) == [s.name for s in systems]
    for row in table.values():
        assert row["answers"] == 2 and row["missing"] == 0
        assert 0.0 <= row["nugget_recall"] <= 1.0
        assert row["nugget_recall(partial=0)"] <= row["nugget_recall"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Nugget scores (TREC 2024 RAG), beside the ranking" in page


def test_a_second_run_into_the_folder_asks_nothing_again(tmp_path: Path) -> None:
    out = tmp_path / "resumed"
    document = parse_scenario(
        {
            "version": 1,
            "name": "nuggets-resume",
            "input": {"path": str(ROOT / "fixtures" / "citation_sessions.jsonl")},
            "engine": {"cache_mode": "off"},
            "judges": [{"name": "nuggets"}],
            "output": {"dir": str(out), "report": False},
        },
        base_dir=tmp_path,
    )
    first = run_scenario(document)
    again = run_scenario(document)
    assert first.info["provider_calls"] > 0
    assert again.info["provider_calls"] == 0  # creation and assignment read from the journal
    assert again.scores("nugget_recall") == first.scores("nugget_recall")
    assert _rows(out / "nuggets.jsonl")  # written again, from the journal's nuggets


def test_run_json_lists_the_nugget_file_and_a_later_run_removes_it(tmp_path: Path) -> None:
    """The nugget file is a file of the run like its tables: listed in ``run.json`` with its
    SHA-256, so an edit in place is refused when the run is read back; a later run into the
    same folder without a nugget judge removes it rather than leaving it unlisted."""
    import hashlib

    from genir_eval.errors import InputError

    out = tmp_path / "run"
    run_scenario(SCENARIO, out_dir=out, overrides=OFFLINE)
    listed = json.loads((out / "run.json").read_text(encoding="utf-8"))["files"]
    nuggets = out / "nuggets.jsonl"
    assert listed["nuggets.jsonl"] == hashlib.sha256(nuggets.read_bytes()).hexdigest()
    load_run(out)  # as written: read back
    nuggets.write_text(nuggets.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="nuggets.jsonl"):
        load_run(out)
    # a later run into the folder whose judges write no nugget file removes the earlier one
    again = parse_scenario(
        {
            "version": 1,
            "name": "no-nuggets",
            "input": {"path": str(ROOT / "fixtures" / "citation_sessions.jsonl")},
            "engine": {"cache_mode": "off", "journal": False},
            "judges": [{"name": "citation_support"}],
            "output": {"dir": str(out), "report": False},
        },
        base_dir=tmp_path,
    )
    run_scenario(again, out_dir=out, overrides=OFFLINE)
    assert not nuggets.exists()
    assert "nuggets.jsonl" not in json.loads((out / "run.json").read_text())["files"]
    load_run(out)
