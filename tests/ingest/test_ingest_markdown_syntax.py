"""Brackets that Markdown itself uses are text, not citations; a field given twice is an error.

Before, ``https://x.example/a[1]b`` lost its ``[1]`` to a citation (the url changed), an
HTML comment or attribute cited a source the reader never sees, ``[text][1]`` and
``[1]: https://...`` (reference links) cited source 1, a second ``task_type:`` line or a
second ``feedback:`` line silently replaced the first, and a session id could carry a line
break or a terminal escape into every summary. Each class is checked on Markdown answers
and on JSONL ``response_text`` with markers (the two share the marker grammar).
"""

from __future__ import annotations

import json

import pytest
from hostile_helpers import assert_located_failure, run_parse

from genir_eval.ingest import load_sessions
from genir_eval.ingest.markers import find_markers

SOURCES = "Sources:\n[1] One - https://a.example/1\n[2] Two - https://a.example/2\n"


def _markdown(tmp_path, answer: str, head: str = "# Session: s1\n") -> object:
    path = tmp_path / "log.md"
    path.write_text(f"{head}## Query: q?\n{answer}\n\n{SOURCES}", encoding="utf-8")
    return path


# (answer, response text read, citations of each statement): brackets that are text
AS_TEXT = [
    ("Alpha https://x.example/a[1]b. Beta [2].", "Alpha https://x.example/a[1]b. Beta.", [[2]]),
    ("Alpha <https://x.example/[1]>. Beta [2].", "Alpha <https://x.example/[1]>. Beta.", [[2]]),
    ("Alpha <!-- [1] -->. Beta [2].", "Alpha <!-- [1] -->. Beta.", [[2]]),
    ("Alpha <!-- [1]\nstill hidden [1] -->. Beta [2].", None, [[2]]),
    (
        'Alpha <span title="[1]">x</span>. Beta [2].',
        'Alpha <span title="[1]">x</span>. Beta.',
        [[2]],
    ),
    ("Alpha [text][1]. Beta [2].", "Alpha [text][1]. Beta.", [[2]]),
    (
        "Alpha [2].\n\n[1]: https://x.example/page",
        "Alpha.\n\n[1]: https://x.example/page",
        [[2], []],
    ),
    ("Alpha [2].\n   [1]: https://x.example/page", None, [[2], []]),
]

# (answer, citations of each statement): markers that still cite
AS_CITATIONS = [
    ("Alpha https://x.example/page [1]. Beta [2].", [[1], [2]]),
    ("Alpha https://x.example/page[1]. Beta [2].", [[1], [2]]),
    ("Alpha [1][2]. Beta [2].", [[1, 2], [2]]),
    ("Alpha [1]: see it. Beta [2].", [[1], [2]]),
    ("<p>Alpha [1].</p> Beta [2].", [[1], [2]]),
    ("Alpha [1] <b>Beta</b> [2].", [[1], [2]]),
]


def _cited(session) -> list[list[int]]:
    return [list(s.citations) for s in session.turns[0].statements]


@pytest.mark.parametrize(("answer", "text", "citations"), AS_TEXT)
def test_markdown_syntax_brackets_are_text(tmp_path, answer, text, citations):
    (session,) = load_sessions(_markdown(tmp_path, answer)).sessions
    if text is not None:
        assert session.turns[0].response_text == text
    assert _cited(session) == citations
    assert "[1]" in session.turns[0].response_text


@pytest.mark.parametrize(("answer", "citations"), AS_CITATIONS)
def test_markers_beside_markdown_syntax_still_cite(tmp_path, answer, citations):
    (session,) = load_sessions(_markdown(tmp_path, answer)).sessions
    assert _cited(session) == citations


@pytest.mark.parametrize(
    "answer", [a for a, _, _ in AS_TEXT] + [a for a, _ in AS_CITATIONS], ids=str
)
def test_jsonl_markers_follow_the_same_grammar(tmp_path, answer):
    md = load_sessions(_markdown(tmp_path, answer)).sessions[0]
    line = {
        "session_id": "s1",
        "turns": [
            {
                "index": 1,
                "query": "q?",
                "response_text": answer,
                "links": [{"id": n, "url": f"https://a.example/{n}", "title": "t"} for n in (1, 2)],
            }
        ],
    }
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (js,) = load_sessions(path).sessions
    assert js.turns[0].response_text == md.turns[0].response_text
    assert _cited(js) == _cited(md)


def test_find_markers_skips_a_marker_inside_a_url_only_when_the_url_goes_on():
    text = "a https://x.example/p[1]q b https://x.example/p[2] c"
    assert [m.ids for m in find_markers(text)] == [("2",)]


# (file text, line named, words): a repeated field is an error of its line
REPEATED = [
    ("# Session: s1\ntask_type: a\ntask_type: b\n## Query: q\nA.\n", 3, "task_type is given twice"),
    ("# Session: s1\nintent: a\nINTENT: b\n## Query: q\nA.\n", 3, "intent is given twice"),
    (
        "# Session: s1\nlanguage: en\nlanguage: en\n## Query: q\nA.\n",
        3,
        "language is given twice (first on line 2)",
    ),
    (
        "# Session: s1\n## Query: q\nfeedback: up\nfeedback: down\nA.\n",
        4,
        "a second feedback line for this turn (the first is on line 3)",
    ),
    (
        "# Session: s1\n## Query: q\nfeedback: up\nfeedback: too slow\nA.\n",
        4,
        "a second feedback line",
    ),
]


@pytest.mark.parametrize(("text", "line", "words"), REPEATED)
def test_a_field_given_twice_is_a_located_error(tmp_path, capsys, text, line, words):
    path = tmp_path / "log.md"
    path.write_text(text, encoding="utf-8")
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert f"line {line}: {words}" in err[0], err[0]
    assert written == []


CONTROL_IDS = ["a\x1b[2Jb", "a\nb", "a\rb", "tab\there", "a\x00b", "a\x7fb", "a\x85b", "a\u2028b"]


@pytest.mark.parametrize("session_id", CONTROL_IDS, ids=repr)
def test_a_session_id_with_a_control_character_is_refused_in_jsonl(tmp_path, capsys, session_id):
    path = tmp_path / "log.jsonl"
    line = {"session_id": session_id, "turns": [{"index": 1, "query": "q", "response_text": "A."}]}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code, err, _ = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert "line 1, column 'session_id'" in err[0] and "holds a control character" in err[0]
    assert "\x1b" not in err[0] and "\x00" not in err[0]


@pytest.mark.parametrize("session_id", ["a\x1b[2Jb", "tab\there", "a\x7fb", "a\x85b"], ids=repr)
def test_a_session_id_with_a_control_character_is_refused_in_markdown(tmp_path, capsys, session_id):
    path = _markdown(tmp_path, "Alpha [1].", head=f"# Session: {session_id}\n")
    code, err, _ = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert "line 1" in err[0] and "holds a control character" in err[0]


# the bidirectional controls: an RLO (U+202E) in an id printed on a terminal reverses the rest
# of the line; each is refused like the other controls, and the error shows it escaped
BIDI_IDS = [
    f"order{char}txt.exe"
    for char in (
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",
        "\u200e",
        "\u200f",
        "\u061c",
    )
]


@pytest.mark.parametrize("session_id", BIDI_IDS, ids=ascii)
@pytest.mark.parametrize("fmt", ["jsonl", "markdown"])
def test_a_session_id_with_a_bidi_control_is_refused(tmp_path, capsys, session_id, fmt):
    if fmt == "jsonl":
        path = tmp_path / "log.jsonl"
        line = {
            "session_id": session_id,
            "turns": [{"index": 1, "query": "q", "response_text": "A."}],
        }
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    else:
        path = _markdown(tmp_path, "Alpha [1].", head=f"# Session: {session_id}\n")
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert_located_failure(code, err, path)
    assert "line 1" in err[0] and "holds a control character" in err[0], err[0]
    bidi = session_id[len("order")]
    assert bidi not in err[0] and ascii(bidi)[1:-1] in err[0], err[0]
    assert written == []
