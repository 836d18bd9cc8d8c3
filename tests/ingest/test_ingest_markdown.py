"""The Markdown log format: the demo file, the grammar's corners, located errors."""

from __future__ import annotations

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions, parse_markdown


def test_demo_file(fixtures_dir):
    result = load_sessions(fixtures_dir / "demo_sessions.md")
    assert result.skipped == []
    ids = [s.session_id for s in result.sessions]
    assert ids == ["md-servers", "md-recipe", "demo_sessions-3"]  # the 3rd has no id
    servers = result.sessions[0]
    assert (servers.source, servers.language, servers.task_type) == ("markdown", "en", "Factual QA")
    first, second = servers.turns
    assert first.query == "how do servers work?"
    assert first.response_text.startswith(
        "Servers are computers that provide data or services to other computers over a network. A"
    )
    assert [s.citations for s in first.statements] == [(1, 2), (1,), (2,)]
    assert [(lk.id, lk.title) for lk in first.links] == [
        (1, "What is a web server? - MDN"),
        (2, "Server (computing) - Wikipedia"),
    ]
    assert [s.citations for s in second.statements] == [(1,), (1, 2)]
    assert [(lk.title, lk.url) for lk in second.links] == [
        ("Droplet pricing - DigitalOcean", "https://www.digitalocean.com/pricing/droplets"),
        ("", "https://aws.amazon.com/ec2/pricing/"),
    ]
    recipe = result.sessions[1].turns[0]
    assert [s.citations for s in recipe.statements] == [(1,), (2,), ()]
    haiku = result.sessions[2].turns[0]
    assert len(haiku.statements) == 1 and haiku.links == ()
    assert [s.text for s in haiku.segments] == [
        "Soft rain on the roof,",
        "the kettle hums in the dark,",
        "the street smells of stone.",
    ]


def test_file_without_headers_is_one_session():
    text = "## Query: a?\nAnswer one [1].\nSources:\n[1] https://x.example\n## Query: b?\nTwo.\n"
    (session,) = parse_markdown(text, name="log").sessions
    assert session.session_id == "log-1"
    assert [t.index for t in session.turns] == [1, 2]
    assert session.turns[0].response_text == "Answer one."


# (text, line the error names, words of the message); lines counted by hand.
ERROR_CASES = [
    ("## Query: q\nSee [2].\nSources:\n[1] https://a.example\n", 2, "citation [2] has no entry"),
    ("## Query: q\nA [1].\nSources:\n[1] just a title\n", 4, "has no url"),
    ("## Query: q\nA [1].\nSources:\n[1] https://a.example\n[1] https://b.example\n", 5, "twice"),
    ("## Query: q\nA.\nSources:\nstray text\n", 4, "expected a source line"),
    ("# Session: s\nsome preamble\n## Query: q\nA.\n", 2, "expected '## Query: ...'"),
    ("# Session: s\ntask_type: Leisure\n", 1, "no '## Query:' turn"),
    ("## Query:\nA.\n", 1, "the query is empty"),
    ("## Query: q\n\n## Query: r\nB.\n", 1, "turn 1: the response holds no text"),
    ("# Session: s\n## Query: q\nA.\n# Session: s\n## Query: q\nB.\n", 4, "duplicate session id"),
]


@pytest.mark.parametrize(("text", "line", "message"), ERROR_CASES)
def test_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "log.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_sessions(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert message in caught.value.message


def test_skip_invalid_keeps_good_sessions():
    text = "# Session: a\n## Query: q\nA [9].\n# Session: b\n## Query: q\nB.\n"
    result = parse_markdown(text, skip_invalid=True)
    assert [s.session_id for s in result.sessions] == ["b"]
    assert [e.line for e in result.skipped] == [3]


def test_session_fields_and_citation_lists():
    text = (
        "# Session: x\nlanguage: zh\nintent: test\n## Query: q\n"
        "Claim [1, 2] and more [2].\n**Sources:**\n- [1] A - https://a.example\n"
        '- [2] https://b.example "B"\n'
    )
    (session,) = parse_markdown(text).sessions
    assert (session.language, session.intent, session.task_type) == ("zh", "test", None)
    turn = session.turns[0]
    assert turn.response_text == "Claim and more."
    assert [(s.citations, s.text) for s in turn.statements] == [
        ((1, 2), "Claim"),
        ((2,), "and more."),
    ]
