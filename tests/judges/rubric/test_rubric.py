from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import bread_session, judge_session

from genir_eval.errors import ConfigError, InputError
from genir_eval.judges.base import Label
from genir_eval.judges.offline.rubric import offline_questions
from genir_eval.judges.parsing import ReplyError
from genir_eval.judges.registry import make_judge
from genir_eval.judges.rubric.bank import read_rubric_file, rubric_path
from genir_eval.judges.rubric.grading import (
    _grades_parser,
    _questions_parser,
    passage_label,
    turn_passages,
)
from genir_eval.llm import EngineConfig, open_engine
from genir_eval.llm.engine import Engine
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.testing.fake_llm_server import FakeLLMServer, FakeRequest


def _by_item(labels: list[Label]) -> dict[str, Label]:
    return {lb.key.item: lb for lb in labels}


@pytest.mark.parametrize(
    ("grades", "rule", "m", "expected"),
    [
        # Computed by hand: "count" is the m-th highest grade.
        ([5, 1, 0], "max", 1, 5),
        ([5, 4, 2], "count", 2, 4),
        ([5, 4, 2], "count", 3, 2),
        ([5], "count", 2, 0),
        ([], "max", 1, 0),
    ],
)
def test_passage_label(grades: list[int], rule: str, m: int, expected: int) -> None:
    assert passage_label(grades, rule, m) == expected


def test_passages_are_statements_then_links() -> None:
    ids = [p.id for p in turn_passages(bread_session().turns[0])]
    assert ids == ["stmt:1", "stmt:2", "link:1", "link:2"]


def test_parsers() -> None:
    assert _questions_parser(2)('{"questions": ["a?", "b?", "c?"]}') == ["a?", "b?"]
    with pytest.raises(ReplyError):
        _questions_parser(2)('{"questions": []}')
    parse = _grades_parser(["q1", "q2"])
    ok = parse(
        '{"grades": [{"question": "q1", "grade": 5, "answer": "x"}, {"question": "2", "grade": "0"}]}'
    )
    assert ok == {"grades": {"q1": 5, "q2": 0}, "answers": {"q1": "x", "q2": ""}}
    for bad in (
        '{"grades": [{"question": "q1", "grade": 6}, {"question": "q2", "grade": 0}]}',
        '{"grades": [{"question": "q1", "grade": 5}]}',  # q2 has no grade
        '{"grades": [{"question": "q9", "grade": 1}]}',
    ):
        with pytest.raises(ReplyError):
            parse(bad)


def test_offline_questions_template_the_key_phrases() -> None:
    qs = offline_questions("how to bake sourdough bread", "starter", 3, "en")
    assert qs[0] == "how to bake sourdough bread"
    assert qs[1:] == [
        "What does a good answer say about bake?",
        "What does a good answer say about sourdough?",
    ]
    zh = offline_questions("服务器的用途", None, 10, "zh")
    assert zh == [
        "服务器的用途",
        "关于“服务器”，好的回答应给出什么信息？",
        "关于“用途”，好的回答应给出什么信息？",
    ]


def test_offline_rubric_grades_on_topic_passages_higher() -> None:
    labels = _by_item(judge_session("rubric", bread_session()))
    assert labels["link:1"].value > labels["link:2"].value
    assert labels["stmt:1"].value > labels["stmt:2"].value
    assert labels["link:1"].extra["relevant"] is True
    coverage = labels["coverage"]
    assert 0.0 < coverage.value <= 1.0
    assert coverage.extra["questions"][0]["text"] == "how to bake sourdough bread"


def test_rubric_file_is_saved_edited_and_regraded(tmp_path: Path) -> None:
    first = _by_item(judge_session("rubric", bread_session(), rubric_dir=str(tmp_path)))
    path = rubric_path(tmp_path, "s1")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1 and data["rubrics"][0]["turn"] == 1
    # A person replaces the bank with one question about the stock market.
    data["rubrics"][0]["questions"] = [
        {"id": "stocks", "text": "What did stock prices do on Monday?"}
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    again = _by_item(
        judge_session("rubric", bread_session(), rubric_dir=str(tmp_path), mode="grade")
    )
    assert again["link:2"].value > again["link:1"].value
    assert list(again["link:2"].extra["grades"]) == ["stocks"]
    # Grading requests carry the bank's digest: edited questions are new judgments.
    assert again["link:1"].key.prompt_version != first["link:1"].key.prompt_version


def test_grade_only_without_a_file_is_missing(tmp_path: Path) -> None:
    labels = judge_session("rubric", bread_session(), rubric_dir=str(tmp_path), mode="grade")
    assert all(lb.value is None and "no rubric file" in (lb.missing_reason or "") for lb in labels)
    with pytest.raises(ConfigError):
        make_judge("rubric", mode="grade")


def test_rubric_file_validation(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"version": 2, "rubrics": []}', encoding="utf-8")
    with pytest.raises(InputError, match="version"):
        read_rubric_file(path)
    path.write_text(
        '{"version": 1, "rubrics": [{"turn": 1, "questions": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]}]}',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="twice"):
        read_rubric_file(path)
    path.write_text(
        '{"version": 1, "rubrics": [{"turn": 1, "questions": ["plain?"]}]}', encoding="utf-8"
    )
    assert read_rubric_file(path).rubrics[0].questions[0].id == "q1"


def test_rubric_path_is_safe_for_odd_session_ids(tmp_path: Path) -> None:
    assert rubric_path(tmp_path, "abc-1").name == "abc-1.json"
    odd = rubric_path(tmp_path, "../a b/c")
    assert odd.parent == tmp_path and "/" not in odd.name and " " not in odd.name


def test_direct_baselines_offline() -> None:
    thomas = _by_item(judge_session("rubric-thomas", bread_session()))
    assert set(thomas) == {"link:1", "link:2"}
    assert thomas["link:1"].value == 2 and thomas["link:2"].value == 0
    yesno = _by_item(judge_session("rubric-yesno", bread_session()))
    assert yesno["link:1"].value == 1 and yesno["link:1"].extra["relevant"] is True
    assert yesno["link:2"].value == 0


# --- scripted replies over the local fake server -------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    steps: list[str] = []

    def reply(request: FakeRequest) -> str:
        text = request.last_user_text
        if "Your previous reply could not be used" in text:
            steps.append("repair")
            return '{"grades": [{"question": "q1", "grade": 3, "answer": "fixed"}]}'
        if "Write 10 concise" in text or "Write 1 concise" in text:
            steps.append("generate")
            return '{"questions": ["What starter does sourdough need?"]}'
        if "Thomas" in text or "integer scale of 0 to 2" in text:
            steps.append("thomas")
            return '{"M": 2, "T": 1, "O": 7}' if "Market" in text else '{"M": 2, "T": 2, "O": 2}'
        steps.append("grade")
        if "Market report" in text:
            return "grade: high"  # malformed: no JSON, repaired once
        return '{"grades": [{"question": "q1", "grade": 5, "answer": "flour and water"}]}'

    fake = FakeLLMServer(reply=reply).start()
    fake.steps = steps  # type: ignore[attr-defined]
    yield fake
    fake.stop()


def _engine(server: FakeLLMServer) -> Any:
    def make() -> Engine:
        provider = OpenAIProvider(
            model="m", base_url=server.openai_base_url, api_key=server.api_key
        )
        return open_engine(EngineConfig(max_attempts=1), provider, quiet=True)

    return make


def test_rubric_call_sequence_and_repair(server: FakeLLMServer) -> None:
    labels = _by_item(judge_session("rubric", bread_session(), _engine(server), n=1))
    steps = server.steps  # type: ignore[attr-defined]
    assert steps[0] == "generate" and steps.count("grade") == 4 and steps.count("repair") == 1
    assert labels["link:1"].value == 5
    assert labels["link:1"].extra["answers"] == {"q1": "flour and water"}
    assert labels["link:2"].value == 3  # from the repaired reply
    assert labels["coverage"].value == 1.0  # stmt:1 answers q1 at grade 5 >= 4


def test_thomas_out_of_range_grade_is_missing(server: FakeLLMServer) -> None:
    labels = _by_item(judge_session("rubric-thomas", bread_session(), _engine(server)))
    assert labels["link:1"].value == 2
    assert labels["link:2"].value is None
    assert "out of range" in (labels["link:2"].missing_reason or "")
