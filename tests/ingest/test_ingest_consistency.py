"""Gold and structure that disagree with the session they describe fail, located.

Each class below once loaded silently and lost or skewed something downstream: labels beyond
a statement's citations (never used), a useful span that is not in the response (a miss for
every judge), overlapping or out-of-order text units (judged twice), JSONL statements that
leave response text out (invisible to every metric), URGE dissatisfaction reasons that are
not URGE's (a typo'd key dropped them), a signed turn key read as a turn number. Each case is
run through ``genir-eval parse`` and must end in exit 2, one line naming the file, the row or
line, and the field, and the words given.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hostile_helpers import assert_located_failure, html_of, run_parse, urge_csv, urge_row

from genir_eval.ingest import load_sessions

# one turn, two cited statements and a trailing uncited one; a second turn citing nothing
TURNS = [
    ("q one", [("Claim one.", (1,)), (" Claim two.", (2,)), (" Coda.", ())]),
    ("q two", [("Plain answer.", ())]),
]


def _urge(tmp_path: Path, **overrides: str) -> Path:
    path = tmp_path / "log.csv"
    path.write_text(urge_csv([urge_row(TURNS, **overrides)]), encoding="utf-8")
    return path


def _jsonl_base() -> dict[str, Any]:
    return {
        "session_id": "s-1",
        "turns": [
            {
                "index": 1,
                "query": "q one",
                "response_text": "Claim one. Claim two. Coda.",
                "statements": [
                    {"text": "Claim one.", "citations": [1]},
                    {"text": " Claim two.", "citations": [2]},
                    {"text": " Coda.", "citations": []},
                ],
                "links": [
                    {"id": 1, "url": "https://s1.example/page", "title": "S1"},
                    {"id": 2, "url": "https://s2.example/page", "title": "S2"},
                ],
                "segments": [
                    {"text": "Claim one.", "start": 0, "end": 10},
                    {"text": "Claim two.", "start": 11, "end": 21},
                    {"text": "Coda.", "start": 22, "end": 27},
                ],
            },
            {"index": 2, "query": "q two", "response_text": "Plain answer."},
        ],
        "gold": {
            "citation_usefulness": [[[3], [1], []], [[2]]],
            "useful_spans_user": [["Claim one."], []],
        },
    }


def _jsonl(tmp_path: Path, change: Any) -> Path:
    data = copy.deepcopy(_jsonl_base())
    change(data)
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(_jsonl_base()) + "\n" + json.dumps(data) + "\n", encoding="utf-8")
    return path


def _set(dotted: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        data["session_id"] = "s-2"
        target = data
        keys = dotted.split(".")
        for key in keys[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        last = keys[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def test_the_consistent_sessions_load(tmp_path):
    (urge,) = load_sessions(
        _urge(
            tmp_path,
            citation_usefulness="[[[3], [1], []], [[2]]]",
            useful_text_user_self=json.dumps({"1": {"0": "Claim two."}}),
            dis_sat_reason=str({"choices": ["2", 3], "additional": None}),
        )
    ).sessions
    assert urge.gold.citation_usefulness == (((3,), (1,), ()), ((2,),))
    assert urge.gold.useful_spans_user == (("Claim two.",), ())
    assert urge.gold.dissatisfaction.choices == ("2", "3")
    (tmp_path / "j").mkdir()
    first, second = load_sessions(_jsonl(tmp_path / "j", _set("session_id", "s-2"))).sessions
    assert first.turns[0].segments[1].text == "Claim two."
    assert second.gold.useful_spans_user == (("Claim one.",), ())


# (column, cell, words of the message): every defect of a class, URGE CSV
URGE_CASES = [
    # citation usefulness: one label per citation of each statement
    ("citation_usefulness", "[[[3, 3], [1], []], [[2]]]", "statement 1 has 2 label(s) for its 1"),
    ("citation_usefulness", "[[[], [1], []], [[2]]]", "statement 1 has 0 label(s) for its 1"),
    (
        "citation_usefulness",
        "[[[3], [1], [2]], [[2]]]",
        "statement 3 has 1 label(s) for a statement citing nothing in a turn that cites",
    ),
    ("citation_usefulness", "[[[3], [1], []], [[2, 1]]]", "at most one response-level value"),
    # useful spans: non-blank pieces of the turn's response
    ("useful_text_user_self", json.dumps({"1": ["Claim three."]}), "'Claim three.' is not in"),
    ("useful_text_user_self", json.dumps({"2": {"0": "Claim one."}}), "is not in the turn's"),
    ("useful_text_external_annotation", json.dumps({"1": ["  "]}), "useful span 1 is empty"),
    ("useful_text_external_annotation", json.dumps({"1": ["Claim one.", ""]}), "span 2 is empty"),
    # dissatisfaction: URGE's reasons 0-7, its two keys, text
    ("dis_sat_reason", str({"choices": ["9"]}), "choice '9' is not one of URGE's reasons 0-7"),
    ("dis_sat_reason", str({"choices": [-1]}), "choice -1 is not one"),
    ("dis_sat_reason", str({"choices": [True]}), "choice True is not one"),
    ("dis_sat_reason", str({"choices": [None]}), "choice None is not one"),
    ("dis_sat_reason", str({"choices": [2.0]}), "choice 2.0 is not one"),
    ("dis_sat_reason", str({"choices": ["1", 1]}), "choice '1' is listed twice"),
    ("dis_sat_reason", str({"choice": ["1"]}), "unknown key 'choice'"),
    ("dis_sat_reason", str({"choices": ["1"], "note": "x"}), "unknown key 'note'"),
    ("dis_sat_reason", str({"choices": ["1"], "additional": 5}), "'additional' is 5, not text"),
    ("dis_sat_reason", str({"choices": "1"}), "'choices' is not a list"),
    # conversation: a signed turn key is no turn number; the assistant text is text
    (
        "conversation",
        json.dumps({"回合-1": {"用户": "q one"}, "回合2": {"用户": "q two"}}, ensure_ascii=False),
        "turn key '回合-1' carries no turn number",
    ),
    (
        "conversation",
        json.dumps({"回合+1": {"用户": "q one"}, "回合2": {"用户": "q two"}}, ensure_ascii=False),
        "turn key '回合+1' carries no turn number",
    ),
    (
        "conversation",
        json.dumps(
            {"回合1": {"用户": "q", "AI助手": 7}, "回合2": {"用户": "q"}}, ensure_ascii=False
        ),
        "'AI助手' is 7, not text",
    ),
    (
        "conversation",
        json.dumps(
            {"回合1": {"用户": "q", "AI助手": ["a"]}, "回合2": {"用户": "q"}}, ensure_ascii=False
        ),
        "'AI助手' is ['a'], not text",
    ),
    # an expression is never evaluated, and the message does not show a memory address
    ("conversation", "__import__('os').getcwd()", "an expression, which is never evaluated"),
    ("session-level satisfaction", "2 + 2", "an expression, which is never evaluated"),
]


@pytest.mark.parametrize(("column", "cell", "words"), URGE_CASES)
def test_urge_cell_inconsistent_with_its_session_is_a_located_error(
    tmp_path, capsys, column, cell, words
):
    path = _urge(tmp_path, **{column: cell})
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert f"row 1, line 2, column {column!r}" in err[0], err[0]
    assert words in err[0], err[0]
    assert " at 0x" not in err[0]
    assert written == []


# (change, field named, words): every defect of a class, canonical JSONL (line 2)
JSONL_CASES = [
    (
        _set("gold.citation_usefulness", [[[3], [1, 1], []], [[2]]]),
        "gold.citation_usefulness[0][1]",
        "statement 2 has 2 label(s) for its 1 citation(s)",
    ),
    (
        _set("gold.citation_usefulness", [[[3], [1], []], [[2, 2]]]),
        "gold.citation_usefulness[1][0]",
        "has 2 label(s) for a statement citing nothing",
    ),
    (
        _set("gold.useful_spans_user", [["Claim two."], ["Claim two."]]),
        "gold.useful_spans_user[1][0]",
        "turn 2: useful span 1 'Claim two.' is not in the turn's response",
    ),
    (_set("gold.useful_spans_external", [[""], []]), "gold.useful_spans_external[0][0]", "empty"),
    # segments: in text order, apart, holding text
    (
        _set("turns.0.segments.1", {"text": "Claim one.", "start": 0, "end": 10}),
        "turns[0].segments[1].start",
        "overlap or precede the segment before it",
    ),
    (
        _set("turns.0.segments.1", {"text": "one. Claim", "start": 6, "end": 16}),
        "turns[0].segments[1].start",
        "overlap or precede",
    ),
    (
        _set(
            "turns.0.segments",
            [
                {"text": "Claim two.", "start": 11, "end": 21},
                {"text": "Claim one.", "start": 0, "end": 10},
            ],
        ),
        "turns[0].segments[1].start",
        "segments are in text order and do not overlap",
    ),
    (
        _set("turns.0.segments.1", {"text": " ", "start": 10, "end": 11}),
        "turns[0].segments[1].text",
        "the segment holds no text",
    ),
    (
        _set("turns.0.segments.1", {"text": "", "start": 11, "end": 11}),
        "turns[0].segments[1].text",
        "the segment holds no text",
    ),
    # statements: the response cut in order, nothing left out
    (
        _set("turns.0.statements.1.text", " Claim nine."),
        "turns[0].statements[1].text",
        "statement 2 ' Claim nine.' is not in response_text after statement 1",
    ),
    (
        _set(
            "turns.0.statements",
            [
                {"text": " Claim two.", "citations": [2]},
                {"text": "Claim one.", "citations": [1]},
                {"text": " Coda.", "citations": []},
            ],
        ),
        "turns[0].statements[0].text",
        "response_text holds 'Claim one.' before statement 1",
    ),
    (
        _set("turns.0.statements.2.text", " Co"),
        "turns[0].statements",
        "response_text holds 'da.' after statement 3",
    ),
    (
        _set("turns.0.statements.1.text", " "),
        "turns[0].statements[1].text",
        "statement 2 is empty",
    ),
    (
        _set(
            "turns.0.statements",
            [{"text": "Claim one.", "citations": [1]}, {"text": " Coda.", "citations": []}],
        ),
        "turns[0].statements[1].text",
        "response_text holds 'Claim two.' after statement 1, in no statement",
    ),
    (
        _set("turns.0.response_text", "Claim one. Claim two. Coda. 42"),
        "turns[0].statements",
        "response_text holds '42' after statement 3",
    ),
]


@pytest.mark.parametrize(("change", "field", "words"), JSONL_CASES)
def test_jsonl_line_inconsistent_with_its_session_is_a_located_error(
    tmp_path, capsys, change, field, words
):
    path = _jsonl(tmp_path, change)
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert f"line 2, column {field!r}" in err[0], err[0]
    assert words in err[0], err[0]
    assert written == []
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl", "--skip-invalid")
    assert code == 0 and len(written) == 1, err
    assert err[0].startswith(f"genir-eval: skipped: {path}, line 2"), err


def test_urge_rows_of_other_sessions_still_load_with_skip_invalid(tmp_path, capsys):
    good = urge_row(TURNS, citation_usefulness="[[[3], [1], []], [[2]]]")
    bad = urge_row(TURNS, citation_usefulness="[[[3], [1], [3]], [[2]]]")
    path = tmp_path / "log.csv"
    path.write_text(urge_csv([good, bad, good]), encoding="utf-8")
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl", "--skip-invalid")
    assert code == 0, err
    assert [json.loads(line)["session_id"] for line in written] == ["urge-0", "urge-2"]
    assert err[0].startswith(f"genir-eval: skipped: {path}, row 2, line 3"), err


def test_html_of_the_consistent_turn_makes_the_statements_the_cases_assume():
    from genir_eval.ingest import parse_response_html

    parsed = parse_response_html(html_of(TURNS[0][1]))
    assert [(s.text.strip(), s.citations) for s in parsed.statements] == [
        ("Claim one.", (1,)),
        ("Claim two.", (2,)),
        ("Coda.", ()),
    ]


@pytest.mark.parametrize(
    ("response", "pieces"),
    [
        # markers kept in the response, dropped from the statements
        ("Claim one [1]. Claim two [2]. Coda.", ["Claim one.", " Claim two.", " Coda."]),
        # markers in the middle of a sentence, and on both sides
        ("Claim [1] one. Claim two [2].", ["Claim one.", " Claim two [2]."]),
        # statements without their closing punctuation, list numbering and bullets between
        ("1. Claim one.\n2. Claim two!\n- Coda", ["Claim one", "Claim two", "Coda"]),
    ],
)
def test_jsonl_statements_may_leave_out_markers_punctuation_and_list_numbers(
    tmp_path, response, pieces
):
    line = _jsonl_base()
    turn = line["turns"][0]
    turn["response_text"] = response
    turn["statements"] = [
        {"text": piece, "citations": [1] if i == 0 else []} for i, piece in enumerate(pieces)
    ]
    turn.pop("segments", None)
    line.pop("gold", None)
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    (session,) = load_sessions(path).sessions
    assert [s.text for s in session.turns[0].statements] == pieces
