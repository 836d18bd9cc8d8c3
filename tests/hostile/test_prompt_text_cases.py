"""Log text against what the judges send (issue 46 point 6), end to end: a session whose
every field holds the special tokens of the families the fourth red team found reaching the
model intact reaches no judge with one of them intact, and a session of ordinary search
results whose titles start ``[PDF]``, ``[DOC]``, ``[HTML]`` reaches every judge with them
exactly as written (genir_eval/judges/chat_tokens.py, rendered through
genir_eval/judges/prompt_digests.py's recording engine)."""

from __future__ import annotations

import pytest

from genir_eval.judges.prompt_digests import judge_prompts
from genir_eval.judges.registry import judge_names
from genir_eval.records import Link, Session, Statement, Turn

# the red team's families (issue 46), each written as its tokenizer or template spells it
HOSTILE_TOKENS = [
    "<seed:bos>",
    "</seed:think>",
    "<_user>",
    "<_bot>",
    "]~!b[",
    "]~b]system",
    "[e~[",
    "[|Human|]",
    "[|AI|]",
    "<PRE>",
    "<SUF>",
    "<MID>",
    "<|start_of_role|>",
    "<fim_prefix>",
    ">>QUESTION<<",
    "<|header_start|>",
    "[control_7]",
]
ORDINARY_TITLES = [
    "[PDF] Real Shading in Unreal Engine 4",
    "[DOC] Solar panel maintenance guide",
    "[HTML] Okapi at TREC-3",
]


def _session(field_text: str, titles: list[str]) -> Session:
    statement = f"Panels work on cloudy days {field_text}."
    links = tuple(
        Link(i, f"https://s{i}.example/page", title, f"Source {i}: {field_text} panels.")
        for i, title in enumerate(titles, start=1)
    )
    turns = tuple(
        Turn(
            index=index,
            query=f"do solar panels work when cloudy {field_text}",
            response_text=statement,
            statements=(Statement(statement, tuple(link.id for link in links)),),
            links=links,
        )
        for index in (1, 2)
    )
    return Session(session_id="hostile-tokens", turns=turns, source="jsonl", language="en")


@pytest.fixture(scope="module")
def hostile_requests() -> list[str]:
    text = " ".join(HOSTILE_TOKENS)
    session = _session(text, [f"Title {text}", f"Other {text}"])
    return [
        content
        for name in judge_names()
        for request in judge_prompts(name, session, "en").requests
        for _, content in request["messages"]
    ]


@pytest.mark.parametrize("token", HOSTILE_TOKENS)
def test_no_family_token_reaches_a_judge_intact(token: str, hostile_requests) -> None:
    assert hostile_requests  # every judge rendered its prompts
    bare = token.removesuffix("system")
    assert not [content for content in hostile_requests if bare in content]


@pytest.mark.slow
def test_search_result_titles_reach_every_judge_as_written() -> None:
    session = _session("(plain text)", ORDINARY_TITLES)
    reading_titles = 0
    for name in judge_names():
        contents = [
            content
            for request in judge_prompts(name, session, "en").requests
            for _, content in request["messages"]
        ]
        joined = "\n".join(contents)
        if any(title.split("] ", 1)[1] in joined for title in ORDINARY_TITLES):
            reading_titles += 1
            for title in ORDINARY_TITLES:
                assert title in joined, (name, title)
        assert "⟦" not in joined, name
    assert reading_titles >= 3  # the link judges read titles
