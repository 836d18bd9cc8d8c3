"""URGE CSV loading: cell reading, gold labels, and located errors on broken rows.

The CSVs here are tiny invented sessions written into ``tmp_path``; expected values are
those of the rows as written.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest import URGE_COLUMNS, load_sessions, load_urge
from genir_eval.ingest.urge import parse_cell

ANCHOR = (
    '<span><a class="citation ml-xs inline" aria-label="{title}" href="{url}">'
    '<span><div class="inline-flex">{n}</div></span></a></span>'
)


def page(*parts: str | int) -> str:
    """Response HTML: strings are text spans, ints are citation anchors."""
    body = "".join(
        ANCHOR.format(n=p, url=f"https://s{p}.example", title=f"Source {p}")
        if isinstance(p, int)
        else f"<span>{p}</span>"
        for p in parts
    )
    return f'<div dir="auto"><div class="prose">{body}</div></div>'


def good_row(**overrides: Any) -> dict[str, str]:
    row = {
        "conversation": json.dumps(
            {
                "回合1": {"用户": "what is a server?", "AI助手": "A server serves. It hosts."},
                "回合2": {"用户": "cost?", "AI助手": "About 5 dollars."},
            }
        ),
        "search intent": "learn about servers",
        "task_type": "Factual QA",
        "session-level satisfaction": "4",
        "query-level satisfaction": "[4, 3]",
        "link_usefulness": repr(['{"1": 3, "2": 1}', "{}"]),
        "citation_usefulness": "[[[3, 1], [1]], [[2]]]",
        "useful_text_user_self": json.dumps({"1": {"1": "It hosts.", "0": "A server serves."}}),
        "useful_text_external_annotation": json.dumps({"2": ["About 5 dollars."]}),
        "dis_sat_reason": "{'choices': ['3'], 'additional': 'too short'}",
        "response_html": json.dumps(
            [page("A server serves", 1, 2, ". It hosts", 2, "."), page("About 5 dollars.")]
        ),
    }
    row.update(overrides)
    return row


def write_csv(path: Path, rows: list[dict[str, str]], columns: tuple[str, ...] = URGE_COLUMNS):
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_good_row_loads_with_its_gold(tmp_path):
    result = load_urge(write_csv(tmp_path / "s.csv", [good_row()]))
    assert result.skipped == []
    (session,) = result.sessions
    assert (session.session_id, session.source, session.language) == ("urge-0", "urge", "en")
    assert (session.task_type, session.intent) == ("Factual QA", "learn about servers")
    turn = session.turns[0]
    assert turn.response_text == "A server serves. It hosts."
    assert [(s.citations, s.text) for s in turn.statements] == [
        ((1, 2), "A server serves."),
        ((2,), "It hosts."),
    ]
    gold = session.gold
    assert gold is not None
    assert gold.session_satisfaction == 4
    assert gold.query_satisfaction == (4, 3)
    assert gold.link_usefulness == ({1: 3, 2: 1}, {})
    assert gold.citation_usefulness == (((3, 1), (1,)), ((2,),))
    assert gold.useful_spans_user == (("A server serves.", "It hosts."), ())  # key order
    assert gold.useful_spans_external == ((), ("About 5 dollars.",))
    assert gold.dissatisfaction is not None
    assert gold.dissatisfaction.choices == ("3",)
    assert gold.dissatisfaction.additional == "too short"


def test_empty_dissatisfaction_is_none(tmp_path):
    result = load_urge(write_csv(tmp_path / "s.csv", [good_row(dis_sat_reason="")]))
    gold = result.sessions[0].gold
    assert gold is not None and gold.dissatisfaction is None


# (cell text, value): JSON first, then a Python literal; never evaluated as code.
CELL_CASES = [
    ('{"1": 3}', {"1": 3}),
    ("{'choices': ['2'], 'additional': ''}", {"choices": ["2"], "additional": ""}),
    ("['{\"1\": 3}', '{}']", ['{"1": 3}', "{}"]),
    ("[[[3, 2], []]]", [[[3, 2], []]]),
]


@pytest.mark.parametrize(("text", "value"), CELL_CASES)
def test_parse_cell(text, value):
    assert parse_cell(text) == value


@pytest.mark.parametrize("text", ["__import__('os').getcwd()", "{not json", "[1, 2"])
def test_parse_cell_refuses_code_and_garbage(text):
    with pytest.raises(ValueError, match="neither JSON nor a Python literal"):
        parse_cell(text)


# (column, broken cell, words the message must hold); each breaks the one row of a file.
BROKEN_CASES = [
    ("conversation", '{"回合1": {"用户": "q"', "cannot read the cell"),
    ("response_html", json.dumps([page("only one turn")]), "1 response(s) of HTML for 2 turn(s)"),
    ("session-level satisfaction", "7", "not a number from 1 to 5"),
    ("query-level satisfaction", "[4, 0]", "turn 2: satisfaction 0"),
    ("link_usefulness", repr(['{"1": 3, "2": 1}']), "expected a list of 2 turn(s), found 1"),
    ("link_usefulness", repr(['{"1": 5}', "{}"]), "turn 1: link usefulness 5"),
    ("citation_usefulness", "[[[3]], [[2]], [[1]]]", "expected a list of 2 turn(s), found 3"),
    ("response_html", json.dumps([page("fine"), "<div><span> </span></div>"]), "turn 2:"),
    ("useful_text_user_self", json.dumps({"3": {"0": "x"}}), "not a turn number from 1 to 2"),
    ("conversation", "", "the cell is empty"),
]


@pytest.mark.parametrize(("column", "cell", "message"), BROKEN_CASES)
def test_broken_row_names_file_row_session_and_column(tmp_path, column, cell, message):
    path = write_csv(tmp_path / "broken.csv", [good_row(), good_row(**{column: cell})])
    with pytest.raises(InputError) as caught:
        load_urge(path)
    error = caught.value
    assert (error.path, error.row, error.column) == (str(path), 2, column)
    assert "session urge-1" in error.message and message in error.message
    assert error.line is not None and error.line >= 3  # header, row 1, then row 2
    assert str(path) in str(error) and "row 2" in str(error) and repr(column) in str(error)


def test_html_with_no_text_is_named(tmp_path):
    row = good_row(response_html=json.dumps([page("ok"), "<div></div>"]))
    with pytest.raises(InputError, match="turn 2: the response holds no text"):
        load_urge(write_csv(tmp_path / "s.csv", [row]))


def test_skip_invalid_keeps_the_other_rows(tmp_path):
    rows = [good_row(), good_row(**{"session-level satisfaction": "9"}), good_row()]
    result = load_urge(write_csv(tmp_path / "s.csv", rows), skip_invalid=True)
    assert [s.session_id for s in result.sessions] == ["urge-0", "urge-2"]
    (error,) = result.skipped
    assert (error.row, error.column) == (2, "session-level satisfaction")
    assert "urge-1" in error.message


@pytest.mark.parametrize("missing", ["conversation", "response_html", "search intent"])
def test_missing_column_is_named(tmp_path, missing):
    columns = tuple(c for c in URGE_COLUMNS if c != missing)
    path = write_csv(tmp_path / "s.csv", [good_row()], columns)
    with pytest.raises(InputError) as caught:
        load_urge(path, skip_invalid=True)  # a file-level error is never skipped
    assert caught.value.column == missing and caught.value.path == str(path)


def test_short_row_is_an_error_not_a_silent_gap(tmp_path):
    path = tmp_path / "s.csv"
    write_csv(path, [good_row()])
    with path.open("a", encoding="utf-8") as stream:
        stream.write('"{}",intent only\n')
    result = load_urge(path, skip_invalid=True)
    assert len(result.sessions) == 1
    (error,) = result.skipped
    assert error.row == 2 and "2 cells for 11 columns" in error.message


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        load_sessions(path)
