"""People's nugget labels (issue 49): a run of the nugget judge offers a queue of (nugget,
answer) items, the nugget beside the answer with support / partial / not; the labels become
``gold.nugget_assignments`` (``label export``, ``run --labels``) and the run compares the
judge's assignments with them and estimates nugget recall by PPI from the labelled sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.ingest import load_sessions, write_jsonl
from genir_eval.runner.label.gold import open_people_gold, with_people_gold
from genir_eval.runner.label.items import NUGGET_QUEUE, nugget_key, nugget_where
from genir_eval.runner.label.queue import open_workspace
from genir_eval.runner.run import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "nuggets"
OFFLINE = Overrides(cache="none", journal="none")


@pytest.fixture(scope="module")
def nugget_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("label-nuggets") / "run"
    run_scenario(ROOT / "scenarios" / "nuggets-graded.toml", out_dir=out, overrides=OFFLINE)
    return out


def test_the_nugget_queue_shows_each_nugget_beside_the_answer(
    nugget_run: Path, tmp_path: Path
) -> None:
    space = open_workspace(nugget_run, store=tmp_path / "labels.sqlite")
    queue = space.queues[NUGGET_QUEUE]
    assert len(queue.items) == 52  # 13 answers x 4 nuggets
    assert [c.key for c in queue.choices] == ["n", "p", "y"]  # s stays skip
    item = queue.by_key[nugget_key("heat-pumps/alpha", 1, "g1")]
    nugget, answer = item.panes
    assert nugget.heading == "Nugget g1 (vital, grade 4)"
    assert nugget.text.startswith("A heat pump moves heat rather than generating it")
    assert "Refrigerant picks up warmth" in answer.text
    assert set(item.judged) == {"nuggets"} and item.judged["nuggets"] in (0.0, 0.5, 1.0)


def test_a_colon_in_an_id_keeps_its_place() -> None:
    key = nugget_key("sys:a/topic:1", 2, "n:3")
    assert nugget_where(key) == ("sys:a/topic:1", 2, "n:3")


def test_people_s_nugget_labels_become_gold_and_meet_the_judge(
    nugget_run: Path, tmp_path: Path
) -> None:
    store = tmp_path / "labels.sqlite"
    space = open_workspace(nugget_run, store=store)
    queue = space.queues[NUGGET_QUEUE]
    # label the items of the first six answers with the fixture's own labels
    given = {
        s.session_id: s.gold.nugget_assignments[0]  # type: ignore[union-attr,index]
        for s in load_sessions(FIXTURES / "answers.jsonl").sessions
    }
    value = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    chosen = sorted(given)[:6]
    labelled = 0
    for item in queue.items:
        sid, _, nugget_id = nugget_where(item.key)
        if sid in chosen:
            space.store.save(NUGGET_QUEUE, item.key, "ann", value=value[given[sid][nugget_id]])
            labelled += 1
    assert labelled == 24
    gold = open_people_gold(store, FIXTURES / "answers.jsonl")
    assert len(gold) == 24
    sessions = list(with_people_gold(load_sessions(FIXTURES / "answers.jsonl").sessions, gold))
    for session in sessions:
        got = session.gold.nugget_assignments if session.gold else None
        if session.session_id in chosen:
            assert got == (given[session.session_id],)
        else:
            assert got is None
    # the run with the people's labels as its gold: the comparison and the PPI mean
    gold_file = tmp_path / "gold.jsonl"
    write_jsonl(sessions, gold_file)
    scenario = (ROOT / "scenarios" / "nuggets-graded.toml").read_text(encoding="utf-8")
    scenario = scenario.replace('"../fixtures/nuggets/answers.jsonl"', json.dumps(str(gold_file)))
    scenario = scenario.replace(
        '"../fixtures/nuggets/graded.jsonl"', json.dumps(str(FIXTURES / "graded.jsonl"))
    )
    file = tmp_path / "s.toml"
    file.write_text(scenario, encoding="utf-8")
    out = tmp_path / "with-people"
    run_scenario(file, out_dir=out, overrides=OFFLINE)
    people = json.loads((out / "meta.json").read_text())["judges"]["nuggets"]["nuggets"]["people"]
    assert people["n"] == 24
    ppi = people["ppi"]
    assert (ppi["n_labelled"], ppi["n_unlabelled"]) == (6, 7)
    assert (
        ppi["ppi"] is not None
        and ppi["ppi"]["ci"][0] <= ppi["ppi"]["estimate"] <= ppi["ppi"]["ci"][1]
    )
