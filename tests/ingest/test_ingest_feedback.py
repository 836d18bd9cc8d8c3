"""Users' feedback as products collect it: a thumb up or down and free text per turn, in the
canonical JSONL (``gold.thumbs``, ``gold.feedback_text``) and the Markdown format
(``feedback: up|down [- text]`` under a query)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions
from genir_eval.records import session_from_dict, session_to_dict

MARKDOWN = """\
# Session: s1
## Query: how do servers work?
feedback: up
Servers host websites [1].

Sources:
[1] Servers - https://a.example/x

## Query: and the price?
feedback: down - the prices are outdated
Small servers cost 5 dollars a month [1].

Sources:
[1] Pricing - https://b.example/y

## Query: thanks
Feedback: loved the detail
You are welcome.

## Query: bye
Goodbye.
feedback: up
"""


def test_markdown_feedback_lines(tmp_path: Path) -> None:
    path = tmp_path / "logs.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    (session,) = load_sessions(path).sessions
    assert session.gold is not None
    assert session.gold.thumbs == (1, 0, None, None)
    assert session.gold.feedback_text == (None, "the prices are outdated", "loved the detail", None)
    # a feedback line is only read right under the query: later, it is answer text
    assert session.turns[3].response_text.endswith("feedback: up")
    assert session.turns[1].response_text == "Small servers cost 5 dollars a month."


def test_markdown_without_feedback_has_no_gold(fixtures_dir: Path) -> None:
    sessions = load_sessions(fixtures_dir / "product_logs.md").sessions
    assert all(s.gold is None for s in sessions)


def _jsonl_line(gold: dict) -> str:
    turn = {
        "index": 1,
        "query": "q",
        "response_text": "An answer.",
        "statements": [{"text": "An answer.", "citations": []}],
    }
    return json.dumps(
        {"version": 1, "session_id": "s", "turns": [turn, {**turn, "index": 2}], "gold": gold}
    )


def test_jsonl_thumbs_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    gold = {"thumbs": ["up", False], "feedback_text": [None, "wrong"]}
    path.write_text(_jsonl_line(gold) + "\n", encoding="utf-8")
    (session,) = load_sessions(path).sessions
    assert session.gold is not None and session.gold.thumbs == (1, 0)
    assert session.gold.feedback_text == (None, "wrong")
    written = session_to_dict(session)
    assert written["gold"]["thumbs"] == ["up", "down"]
    assert session_from_dict(written) == session


@pytest.mark.parametrize(
    ("gold", "field"),
    [
        ({"thumbs": ["up", "sideways"]}, "gold.thumbs[1]"),
        ({"thumbs": [2, None]}, "gold.thumbs[0]"),
        ({"thumbs": ["up"]}, "gold.thumbs"),  # one entry per turn
        ({"thumbs": [[1], None]}, "gold.thumbs[0]"),
        ({"feedback_text": [None, 3]}, "gold.feedback_text[1]"),
    ],
)
def test_jsonl_bad_feedback_is_a_located_error(tmp_path: Path, gold: dict, field: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_jsonl_line(gold) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_sessions(path)
    assert raised.value.line == 1 and field in str(raised.value)


@pytest.mark.parametrize(
    ("line", "thumb", "comment"),
    [
        ("feedback: thumbs up", 1, None),
        ("feedback: Thumbs-down - too long", 0, "too long"),
        ("feedback: thumb up, great answer", 1, "great answer"),
        ("feedback: 👍🏽", 1, None),
        ("feedback: -1 wrong price", 0, "wrong price"),
        ("feedback: upgrade the docs", None, "upgrade the docs"),  # a word, not a thumb
    ],
)
def test_markdown_feedback_spellings(tmp_path: Path, line: str, thumb: int, comment: str) -> None:
    path = tmp_path / "logs.md"
    path.write_text(f"# Session: s1\n## Query: q?\n{line}\nAn answer.\n", encoding="utf-8")
    (session,) = load_sessions(path).sessions
    assert session.gold is not None
    assert session.gold.thumbs == (thumb,)
    assert session.gold.feedback_text == (comment,)


def test_markdown_feedback_that_is_no_thumb_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "logs.md"
    path.write_text(
        "# Session: s1\n## Query: q?\nfeedback: thumbs sideways\nA.\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        load_sessions(path)
    message = str(caught.value)
    assert "logs.md" in message and "line 3" in message and "is not a thumb" in message
