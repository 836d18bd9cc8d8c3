"""Which nuggets a query keeps and how an answer's coverage is worded
(genir_eval/judges/nuggets/judge.py, replies.py), through the real protocol (the local fake
OpenAI server).

As the nuggetizer does (TREC 2024 RAG), the nuggets are ordered vital first (each group in
the order made) before the cut at ``max_nuggets``: of three facts made in turn where the last
two are vital, the query's nuggets are the second and third (n1, n2), then the first (n3).
An answer covers a nugget it supports fully or partly; only ``not_support`` is missed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from judge_helpers import run_judge

from genir_eval.judges.nuggets.replies import coverage_reason
from genir_eval.records import Link, Session, Statement, Turn
from genir_eval.testing.fake_llm_server import FakeLLMServer, FakeRequest

Script = Callable[[FakeRequest], str]
FACTS = ["fact one", "fact two", "fact three"]
VITAL = {"f2", "f3"}  # the importance step's ids of the facts as made
ASSIGNED = {"n1": "support", "n2": "partial_support", "n3": "not_support"}


def _session() -> Session:
    links = tuple(
        Link(i, f"https://docs.example/{i}", f"page {i}", f"Source {i} says backups run daily.")
        for i in range(1, 4)
    )
    answer = "Backups run daily [1][2][3]."
    turn = Turn(1, "how often are backups made", answer, (Statement(answer, (1, 2, 3)),), links)
    return Session("s1", (turn,), language="en")


def _reply(request: FakeRequest) -> str:
    text = request.last_user_text
    if "The nuggets found so far" in text:
        found = re.findall(r"^- (.+)$", text.split("The next sources:")[0], re.MULTILINE)
        facts = [f for f in found if f.startswith("fact")]
        return json.dumps({"nuggets": [*facts, FACTS[len(facts)]]})
    ids = re.findall(r"<<<BEGIN NUGGET (\w+)>>>", text)
    if "vital or okay" in text:
        return json.dumps({"importance": {i: "vital" if i in VITAL else "okay" for i in ids}})
    return json.dumps(
        {"assignments": {i: {"assignment": ASSIGNED[i], "reason": f"on {i}"} for i in ids}}
    )


def test_vital_nuggets_come_first_before_the_cut(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    server = fake_server(_reply)
    _, [label] = run_judge(server, "nuggets", [_session()], create_batch=1)
    nuggets = label.value["nuggets"]
    assert [(n["id"], n["text"], n["importance"]) for n in nuggets] == [
        ("n1", "fact two", "vital"),
        ("n2", "fact three", "vital"),
        ("n3", "fact one", "okay"),
    ]
    assert [n["assignment"] for n in nuggets] == ["support", "partial_support", "not_support"]
    reason = label.extra["reason"].splitlines()
    assert reason == [
        "vital: 1 supported, 1 partly, of 2; okay: 0 supported, 0 partly, of 1",
        "covered [vital] n1 support: fact two (on n1)",
        "covered [vital] n2 partial_support: fact three (on n2)",
        "missed [okay] n3 not_support: fact one (on n3)",
    ]


def _nugget(nid: str, importance: str, assignment: str) -> dict[str, str]:
    return {"id": nid, "text": f"t{nid}", "importance": importance, "assignment": assignment}


def test_a_partly_supported_nugget_is_covered_not_missed() -> None:
    text = coverage_reason(
        [
            _nugget("n1", "okay", "partial_support"),
            _nugget("n2", "vital", "not_support"),
            _nugget("n3", "vital", "partial_support"),
            _nugget("n4", "okay", "support"),
        ]
    )
    assert text.splitlines() == [
        "vital: 0 supported, 1 partly, of 2; okay: 1 supported, 1 partly, of 2",
        "covered [vital] n3 partial_support: tn3",
        "covered [okay] n1 partial_support: tn1",
        "covered [okay] n4 support: tn4",
        "missed [vital] n2 not_support: tn2",
    ]
