"""A damaged source-text side file (``--sources``) is a located error, never a traceback or a
silent choice.

Before, a JSONL line nested too deeply raised a traceback; a repeated key, a repeated CSV
header column, extra cells in a row, two spellings of one url with different texts (the
normalised match picked one) and an empty text (attached to nothing) loaded silently; a
lone surrogate passed; a line that was not UTF-8 was reported without its line. Each case
goes through ``genir-eval parse --sources`` and must exit 2 with one line naming the side
file, its row or line and, where there is one, the column.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_helpers import assert_located_failure, run_parse

from genir_eval.ingest import read_source_texts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
URL = "https://energy.example/cloudy"

# (file name, content, place named, words)
CASES = [
    ("s.jsonl", '{"url": "x", "text": ' + "[" * 50_000 + "]" * 50_000 + "}\n", "line 1", "nested"),
    (
        "s.jsonl",
        f'{{"url": "{URL}", "text": "a", "text": "b"}}\n',
        "line 1",
        "key 'text' appears twice",
    ),
    ("s.jsonl", f'{{"url": "{URL}", "text": "a\\ud800"}}\n', "line 1, column 'text'", "surrogate"),
    ("s.jsonl", f'{{"url": "{URL}\\udc00", "text": "a"}}\n', "line 1, column 'url'", "surrogate"),
    ("s.jsonl", f'{{"url": "{URL}", "text": "  "}}\n', "line 1, column 'text'", "text is empty"),
    ("s.csv", f"url,text\n{URL},\n", "row 2, column 'text'", "the source's text is empty"),
    ("s.csv", "url,url,text\na,b,c\n", "row 1, column 'url'", "names column 'url' 2 times"),
    ("s.csv", "url,text,text\na,b,c\n", "row 1, column 'text'", "names column 'text' 2 times"),
    ("s.csv", f"url,text\n{URL},one,two\n", "row 2", "the row has 3 cells for 2 columns"),
    (
        "s.csv",
        f"url,text\n{URL},one\n{URL.upper().replace('/CLOUDY', '/cloudy')}/,two\n",
        "row 3, column 'url'",
        "is the page",
    ),
    ("s.csv", f"url,text\n{URL}#top,one\n{URL},two\n", "row 3, column 'url'", "#fragment"),
    ("s.csv", f"url,text\n{URL},caf\xe9\n".encode("latin-1"), "line 2", "byte 0xe9 at byte 34"),
    ("s.csv", "url,text\nok,fine\n".encode("utf-16"), "line 1", "not UTF-8 text: byte 0xff"),
]


@pytest.mark.parametrize(("name", "content", "place", "words"), CASES)
def test_a_damaged_side_file_is_a_located_error(tmp_path, capsys, name, content, place, words):
    side = tmp_path / name
    if isinstance(content, bytes):
        side.write_bytes(content)
    else:
        side.write_text(content, encoding="utf-8")
    sessions = FIXTURES / "citation_sessions.jsonl"
    code, err, written = run_parse(capsys, sessions, tmp_path / "out.jsonl", "--sources", str(side))
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"genir-eval: error: {side}, {place}"), err[0]
    assert words in err[0], err[0]
    assert written == []


def test_the_same_text_under_two_spellings_of_a_url_is_fine(tmp_path):
    side = tmp_path / "s.csv"
    side.write_text(f"url,text\n{URL},one\n{URL}/,one\n{URL}#x,one\n", encoding="utf-8")
    assert read_source_texts(side) == {URL: "one", f"{URL}/": "one", f"{URL}#x": "one"}


def test_a_markdown_session_file_given_as_sources_fails_located(tmp_path, capsys):
    sessions = FIXTURES / "citation_sessions.jsonl"
    code, err, _ = run_parse(
        capsys, sessions, tmp_path / "out.jsonl", "--sources", str(FIXTURES / "demo_sessions.md")
    )
    assert_located_failure(code, err, FIXTURES / "demo_sessions.md")
