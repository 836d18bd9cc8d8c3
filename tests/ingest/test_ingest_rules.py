"""The rules every reader shares: the same defect fails the same way in CSV, JSONL, Markdown.

Each case plants one defect of a class (phantom citation, a link id twice, gold for what
the turn lacks, an empty response, numbers that are not ASCII or too long, nesting, bad
bytes, empty files) and states what the reader must do: a located error whose message holds
the given words, or a complete load. Expected messages are the readers' own wording.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_helpers import (
    ANCHOR,
    SUFFIX,
    assert_located_failure,
    html_of,
    jsonl_object,
    markdown_session,
    render,
    run_parse,
    urge_csv,
    urge_row,
    url,
)

from genir_eval.errors import InputError
from genir_eval.ingest import iter_sessions, load_sessions, parse_response_html, read_jsonl

TWO_TURNS = (
    [("q one", [("Claim one", (1,)), (". Claim two", (2,)), (".", ())])],
    [("q two", [("Plain answer.", ())])],
)
SESSION = [("q one", [("Claim one", (1,)), (". Claim two", (2,)), (".", ())]), TWO_TURNS[1][0]]


def write(tmp_path: Path, fmt: str, text: str | bytes, name: str = "log") -> Path:
    path = tmp_path / f"{name}{SUFFIX[fmt]}"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, **kwargs) -> InputError:
    with pytest.raises(InputError) as caught:
        load_sessions(path, **kwargs)
    return caught.value


# -- the HTML path never drops content -----------------------------------------------------

DEEP = 300


def _cited(n: int) -> str:
    return ANCHOR.format(n=n, url=url(n))


# (HTML, links expected, words of the last statement): each parses completely, its last
# statement being the text after the deep part, closed by citation [2].
HTML_LIMITS = [
    pytest.param(
        f"<p>First claim{_cited(1)}.</p>"
        + "<div>" * DEEP
        + "deep"
        + "</div>" * DEEP
        + f"<p>Second claim{_cited(2)}.</p>",
        "Second claim.",
        id="second cited paragraph after a block nested 300 deep",
    ),
    pytest.param(
        f"<p>a{_cited(1)}</p>" + "<div>" * 5000 + "mid" + "</div>" * 5000 + f"<p>b{_cited(2)}</p>",
        "mid\nb",
        id="5,000 nested blocks (beyond lxml's lifted limit of 2,048)",
    ),
    pytest.param(
        f"<p>a{_cited(1)}</p>" + "<b>" * 20_000 + f"x <p>b{_cited(2)}</p>",
        "x b",
        id="20,000 unclosed tags",
    ),
    pytest.param(
        f"<p>a{_cited(1)}</p><p>" + "x " * 5_500_000 + f"y{_cited(2)}</p>",
        "x x",
        id="a text run over 10 MB",
    ),
]


@pytest.mark.parametrize(("html", "last_words"), HTML_LIMITS)
def test_html_beyond_lxml_limits_parses_completely(html, last_words):
    parsed = parse_response_html(html)
    assert [lk.id for lk in parsed.links] == [1, 2]
    assert [s.citations for s in parsed.statements] == [(1,), (2,)]
    assert last_words in parsed.statements[1].text


def test_deep_block_keeps_both_links_through_the_csv_reader(tmp_path):
    html = (
        f"<p>First claim{_cited(1)}.</p>"
        + "<div>" * DEEP
        + "deep"
        + "</div>" * DEEP
        + f"<p>Second claim{_cited(2)}.</p>"
    )
    row = urge_row(
        [("q", [("x", ())])],
        response_html=json.dumps([html]),
        link_usefulness=json.dumps([{"1": 3, "2": 1}]),
    )
    (session,) = load_sessions(write(tmp_path, "urge", urge_csv([row]))).sessions
    assert [lk.id for lk in session.turns[0].links] == [1, 2]
    assert session.gold.link_usefulness == ({1: 3, 2: 1},)


# -- one defect, three formats, one message ------------------------------------------------


def _jsonl(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False) + "\n"


def _full_jsonl(**changes) -> dict:
    data = jsonl_object("s-1", SESSION)
    turn = data["turns"][0]
    turn["response_text"] = "Claim one. Claim two."
    turn["statements"] = [
        {"text": "Claim one.", "citations": [1]},
        {"text": "Claim two.", "citations": [2]},
    ]
    data.update(changes)
    return data


def test_phantom_citation_is_refused_in_jsonl(tmp_path):
    data = _full_jsonl()
    data["turns"][0]["statements"][1]["citations"] = [7]
    error = error_of(write(tmp_path, "jsonl", _jsonl(data)))
    assert (error.line, error.column) == (1, "turns[0].statements[1].citations")
    assert error.message == "turn 1: statement 2 cites [7], which is not among the turn's links"


def test_one_link_id_with_two_urls_is_refused(tmp_path):
    data = _full_jsonl()
    data["turns"][0]["links"].append({"id": 2, "url": "https://other.example", "title": "x"})
    error = error_of(write(tmp_path, "jsonl", _jsonl(data)))
    assert error.column == "turns[0].links[2].id"
    assert "link [2] is listed twice" in error.message and "https://other.example" in error.message
    md = markdown_session("s", SESSION).replace(
        "[2] Source 2 -", "[2] https://other.example\n[2] Source 2 -"
    )
    assert "source [2] is listed twice" in error_of(write(tmp_path, "markdown", md)).message
    two_urls = html_of([("a", (1,))]) + ANCHOR.format(n=1, url="https://other.example")
    row = urge_row(SESSION[:1], response_html=json.dumps([two_urls]))
    error = error_of(write(tmp_path, "urge", urge_csv([row])))
    assert (error.row, error.column) == (1, "response_html")
    assert "citation [1] points to two urls" in error.message


def test_gold_for_a_link_the_turn_lacks_same_message_in_csv_and_jsonl(tmp_path):
    message = "turn 1: gold link usefulness for [9], which is not among the turn's links"
    data = _full_jsonl()
    data["gold"]["link_usefulness"][0]["9"] = 1
    error = error_of(write(tmp_path, "jsonl", _jsonl(data)))
    assert (error.column, error.message) == ("gold.link_usefulness[0]", message)
    row = urge_row(SESSION, link_usefulness=json.dumps([{"1": 2, "2": 2, "9": 1}, {}]))
    error = error_of(write(tmp_path, "urge", urge_csv([row])))
    assert (error.row, error.column) == (1, "link_usefulness")
    assert error.message == f"session urge-0: {message}"


def test_gold_citation_list_longer_than_the_statements(tmp_path):
    message = "turn 2: gold citation usefulness has 2 entries for 1 statement(s)"
    data = _full_jsonl()
    data["gold"]["citation_usefulness"] = [[[2], [2]], [[1], [1]]]
    error = error_of(write(tmp_path, "jsonl", _jsonl(data)))
    assert (error.column, error.message) == ("gold.citation_usefulness[1]", message)
    row = urge_row(SESSION, citation_usefulness="[[[2], [2]], [[1], [1]]]")
    error = error_of(write(tmp_path, "urge", urge_csv([row])))
    assert error.column == "citation_usefulness" and error.message.endswith(message)


@pytest.mark.parametrize("fmt", ["urge", "jsonl", "markdown"])
def test_empty_response_same_message_everywhere(tmp_path, fmt):
    empty = [("q one", [("   ", ())])]
    error = error_of(write(tmp_path, fmt, render(fmt, [empty])))
    assert error.message.endswith("turn 1: the response holds no text")


@pytest.mark.parametrize("fmt", ["urge", "jsonl", "markdown"])
@pytest.mark.parametrize("content", ["", "\n\n  \n", "\ufeff"])
def test_empty_files_same_error_everywhere(tmp_path, fmt, content, capsys):
    path = write(tmp_path, fmt, content)
    assert error_of(path).message == "the file holds no sessions"
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl", "--format", fmt)
    assert_located_failure(code, err, path)
    assert written == []


def test_header_only_csv_holds_no_sessions(tmp_path):
    assert error_of(write(tmp_path, "urge", urge_csv([]))).message == "the file holds no sessions"


# -- markers in JSONL response_text -------------------------------------------------------


def test_jsonl_markers_without_statements_become_statements(tmp_path):
    (session,) = load_sessions(write(tmp_path, "jsonl", render("jsonl", [SESSION]))).sessions
    turn = session.turns[0]
    assert turn.response_text == "Claim one. Claim two."
    assert [(s.text, s.citations) for s in turn.statements] == [
        ("Claim one.", (1,)),
        ("Claim two.", (2,)),
    ]
    markdown = load_sessions(write(tmp_path, "markdown", render("markdown", [SESSION]))).sessions
    assert markdown[0].turns[0].statements == turn.statements


@pytest.mark.parametrize(
    ("change", "column", "words"),
    [
        ({"links": []}, "turns[0].links", "cites [1] but the turn has no links"),
        (
            {"segments": [{"text": "C", "start": 0, "end": 1}]},
            "turns[0].segments",
            "derived from the markers only without segments",
        ),
        (
            {"response_text": "Claim one[1]. Claim three[3]."},
            "turns[0].response_text",
            "cites [3], which is not among the turn's links",
        ),
    ],
)
def test_jsonl_markers_that_cannot_become_statements_are_refused(tmp_path, change, column, words):
    data = jsonl_object("s-1", SESSION)
    data["turns"][0].update(change)
    error = error_of(write(tmp_path, "jsonl", _jsonl(data)))
    assert error.column == column and words in error.message


def test_markers_in_code_are_text_in_markdown_and_jsonl(tmp_path):
    answer = (
        "Use `items[1]` to get the second item [1].\n\n```python\nfirst = items[0]\n"
        "rest = items[1:]  # [2]\n```\n\nDone [2]."
    )
    md = f"# Session: c\n## Query: index a list\n{answer}\n\nSources:\n[1] A - {url(1)}\n[2] B - {url(2)}\n"
    (session,) = load_sessions(write(tmp_path, "markdown", md)).sessions
    turn = session.turns[0]
    assert "`items[1]`" in turn.response_text
    assert "rest = items[1:]  # [2]" in turn.response_text
    assert [s.citations for s in turn.statements] == [(1,), (2,)]
    data = jsonl_object("c", [("index a list", [(answer, ())])])
    data["turns"][0]["links"] = [
        {"id": 1, "url": url(1), "title": "A"},
        {"id": 2, "url": url(2), "title": "B"},
    ]
    (from_jsonl,) = load_sessions(write(tmp_path, "jsonl", _jsonl(data))).sessions
    assert from_jsonl.turns[0].statements == turn.statements
    assert from_jsonl.turns[0].response_text == turn.response_text


def test_a_lone_backtick_does_not_hide_later_paragraphs_citations(tmp_path):
    md = (
        "## Query: q\nA stray ` backtick [1].\n\nNext paragraph [2] and a ` second one.\n"
        f"Sources:\n[1] A - {url(1)}\n[2] B - {url(2)}\n"
    )
    (session,) = load_sessions(write(tmp_path, "markdown", md)).sessions
    assert [s.citations for s in session.turns[0].statements] == [(1,), (2,), ()]


def test_sources_line_inside_a_code_block_is_answer_text(tmp_path):
    md = (
        "## Query: q\nSee the config [1].\n```\nSources:\n[9] not a source\n```\n"
        f"Sources:\n[1] A - {url(1)}\n"
    )
    (session,) = load_sessions(write(tmp_path, "markdown", md)).sessions
    assert "[9] not a source" in session.turns[0].response_text
    assert [lk.id for lk in session.turns[0].links] == [1]


# -- keys and numbers ----------------------------------------------------------------------


def test_duplicate_turn_keys_in_conversation_are_refused(tmp_path):
    conversation = '{"回合1": {"用户": "a", "AI助手": "-"}, "回合1": {"用户": "b", "AI助手": "-"}}'
    row = urge_row(SESSION[:1], conversation=conversation)
    error = error_of(write(tmp_path, "urge", urge_csv([row])))
    assert (error.row, error.column) == (1, "conversation")
    assert "appears twice" in error.message
    numbered_twice = json.dumps(
        {"回合1": {"用户": "a"}, "回合01": {"用户": "b"}}, ensure_ascii=False
    )
    row = urge_row(SESSION, conversation=numbered_twice)
    assert "both number turn 1" in error_of(write(tmp_path, "urge", urge_csv([row]))).message


def test_duplicate_keys_in_a_jsonl_object_are_refused(tmp_path):
    line = _jsonl(_full_jsonl()).replace(
        '"session_id": "s-1"', '"session_id": "s-1", "session_id": "s-2"'
    )
    error = error_of(write(tmp_path, "jsonl", line))
    assert "'session_id' appears twice" in error.message


def test_duplicated_csv_column_is_refused(tmp_path):
    from genir_eval.ingest import URGE_COLUMNS

    text = urge_csv([urge_row(SESSION)], header=(*URGE_COLUMNS, "task_type"))
    error = error_of(write(tmp_path, "urge", text))
    assert (error.line, error.column) == (1, "task_type")
    assert "names column 'task_type' 2 times" in error.message


# (format, text with the defect, words of the message); "²" and "٣" pass str.isdigit.
NUMBER_CASES = [
    (
        "urge",
        urge_csv([urge_row(SESSION, link_usefulness='[{"²": 1}, {}]')]),
        "'²' is not a citation",
    ),
    (
        "urge",
        urge_csv([urge_row(SESSION, useful_text_user_self='{"²": ["x"]}')]),
        "not a turn number",
    ),
    ("urge", urge_csv([urge_row(SESSION, useful_text_user_self='{"1": {"٣": "x"}}')]), "unit keys"),
    (
        "urge",
        urge_csv([urge_row(SESSION, link_usefulness=f'[{{"{"9" * 5000}": 1}}, {{}}]')]),
        "not a citation number",
    ),
    (
        "urge",
        urge_csv([urge_row(SESSION, **{"session-level satisfaction": "9" * 5000})]),
        "cannot read the cell",
    ),
    (
        "urge",
        urge_csv(
            [
                urge_row(
                    SESSION[:1],
                    link_usefulness="",
                    response_html=json.dumps(
                        [
                            html_of([("a", ())]).replace(
                                "<p>", f"<p>x{ANCHOR.format(n='9' * 5000, url=url(1))}"
                            )
                        ]
                    ),
                )
            ]
        ),
        "is not a citation number",
    ),
    (
        "jsonl",
        _jsonl(_full_jsonl()).replace('{"1": 2, "2": 2}', '{"²": 2}'),
        "is not a citation number",
    ),
    ("jsonl", _jsonl(_full_jsonl()).replace('"id": 1,', f'"id": {"9" * 5000},'), "not valid JSON"),
    (
        "jsonl",
        _jsonl(_full_jsonl()).replace('"id": 1,', f'"id": {"9" * 40},'),
        "is not a citation number",
    ),
    (
        "markdown",
        markdown_session("s", SESSION).replace("[1] Source", "[²] Source"),
        "'²' is not a citation number",
    ),
    (
        "markdown",
        markdown_session("s", SESSION).replace("Claim one[1]", f"Claim one[{'9' * 5000}]"),
        "is not a citation number",
    ),
    (
        "markdown",
        markdown_session("s", SESSION).replace("[1] Source", f"[{'9' * 5000}] Source"),
        "is not a citation number",
    ),
]


@pytest.mark.parametrize(("fmt", "text", "words"), NUMBER_CASES)
def test_numbers_that_are_not_citation_numbers(tmp_path, capsys, fmt, text, words):
    path = write(tmp_path, fmt, text)
    error = error_of(path)
    assert words in error.message and (error.line or error.row)
    assert len(str(error)) < 400
    code, err, _ = run_parse(capsys, path, tmp_path / "o.jsonl")
    assert_located_failure(code, err, path)
    code, err, _ = run_parse(capsys, path, tmp_path / "o.jsonl", "--skip-invalid")
    # every case is one session whose one bad number makes it invalid: skipped and listed,
    # nothing written, and the run says so
    assert code == 0, err
    assert err[0].startswith(f"genir-eval: skipped: {path}") and words in err[0], err
    assert err[-1].startswith("parsed 0 sessions") and "1 skipped" in err[-1], err


# -- nesting and bytes ---------------------------------------------------------------------

NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("jsonl", '{"session_id": "x", "turns": ' + NESTED + "}\n"),
        ("jsonl", '{"session_id": "x", "meta": ' + "[" * 500 + "]" * 500 + ', "turns": []}\n'),
        ("urge", urge_csv([urge_row(SESSION, citation_usefulness=NESTED)])),
        (
            "urge",
            urge_csv(
                [
                    urge_row(
                        SESSION, dis_sat_reason="{'choices': " + "(" * 50_000 + ")" * 50_000 + "}"
                    )
                ]
            ),
        ),
    ],
)
def test_deep_nesting_is_a_located_error(tmp_path, capsys, fmt, text):
    path = write(tmp_path, fmt, text)
    error = error_of(path)
    assert error.line == 1 or error.row == 1
    code, err, _ = run_parse(capsys, path, tmp_path / "o.jsonl")
    assert_located_failure(code, err, path)


@pytest.mark.parametrize("fmt", ["urge", "jsonl", "markdown"])
def test_bytes_that_are_not_utf8_name_their_line_and_skip_only_their_session(tmp_path, fmt):
    text = render(fmt, [SESSION, SESSION, SESSION]).encode("utf-8")
    lines = text.split(b"\n")
    # Corrupt a line of the second session: its first line after the first session's.
    first_len = len(render(fmt, [SESSION]).encode("utf-8").split(b"\n")) - 1
    target = first_len + 1 if fmt != "urge" else 2
    lines[target] = lines[target] + b" \xff\xfe"
    path = write(tmp_path, fmt, b"\n".join(lines))
    error = error_of(path)
    assert error.line == target + 1 and "not UTF-8" in error.message
    stream = iter_sessions(path, skip_invalid=True)
    kept = list(stream)
    assert len(kept) == 2 and len(stream.skipped) == 1
    assert stream.skipped[0].line == target + 1


def test_unpaired_surrogate_is_refused(tmp_path):
    line = _jsonl(_full_jsonl()).replace("q one", "q \\ud800 one")
    error = error_of(write(tmp_path, "jsonl", line))
    assert error.column == "turns[0].query" and "surrogate" in error.message
    line = json.dumps(_full_jsonl(meta={"note": "\ud800"}))  # ASCII: the escape \\ud800
    error = error_of(write(tmp_path, "jsonl", line))
    assert error.column == "meta" and "surrogate" in error.message


def test_strict_json_numbers_and_wide_integers_in_meta(tmp_path, capsys):
    line = _jsonl(_full_jsonl()).replace('"session_satisfaction": 4', '"session_satisfaction": NaN')
    assert "NaN is not a JSON number" in error_of(write(tmp_path, "jsonl", line)).message
    wide = _full_jsonl(meta={"trace": 2**80, "nested": [[{"a": 1.5}]]})
    path = write(tmp_path, "jsonl", _jsonl(wide))
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert code == 0, err
    assert json.loads(written[0])["meta"] == {"trace": 2**80, "nested": [[{"a": 1.5}]]}


# -- skip-invalid skips exactly the bad session --------------------------------------------


@pytest.mark.parametrize("fmt", ["urge", "jsonl", "markdown"])
def test_skip_invalid_skips_exactly_the_bad_session(tmp_path, capsys, fmt):
    good = render(fmt, [SESSION])
    if fmt == "urge":
        bad_row = urge_row(SESSION, link_usefulness='[{"²": 1}, {}]')
        text = urge_csv([urge_row(SESSION), bad_row, urge_row(SESSION)])
    elif fmt == "jsonl":
        bad = _jsonl(_full_jsonl(session_id="bad")).replace('{"1": 2, "2": 2}', '{"²": 2}')
        text = good + bad + good.replace("s-1", "s-3")
    else:
        bad = markdown_session("bad", SESSION).replace("Claim one[1]", "Claim one[7]")
        text = good + bad + good.replace("s-1", "s-3")
    path = write(tmp_path, fmt, text)
    out = tmp_path / "out.jsonl"
    code, err, written = run_parse(capsys, path, out, "--skip-invalid")
    assert code == 0
    assert len(written) == 2
    skipped = [line for line in err if line.startswith("genir-eval: skipped:")]
    assert len(skipped) == 1 and str(path) in skipped[0]
    assert "2 sessions" in err[-1] and "1 skipped" in err[-1]
    assert read_jsonl(out).sessions == load_sessions(path, skip_invalid=True).sessions


def test_failed_parse_leaves_no_output_and_keeps_an_old_one(tmp_path, capsys):
    path = write(tmp_path, "jsonl", render("jsonl", [SESSION]) + "not json\n")
    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")
    code, err, written = run_parse(capsys, path, out)
    assert_located_failure(code, err, path)
    assert "line 2" in err[0]
    assert written == ["old"]
    assert [p.name for p in tmp_path.iterdir()] == sorted(["log.jsonl", "out.jsonl"]) or set(
        p.name for p in tmp_path.iterdir()
    ) == {"log.jsonl", "out.jsonl"}


# -- streaming ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["urge", "jsonl", "markdown"])
def test_sessions_come_one_at_a_time_before_a_later_error(tmp_path, fmt):
    good = render(fmt, [SESSION, SESSION])
    broken = {"urge": "not,a,row\n", "jsonl": "{oops\n", "markdown": "# Session: z\nstray\n"}
    path = write(tmp_path, fmt, good + broken[fmt])
    stream = iter_sessions(path)
    first, second = next(stream), next(stream)
    assert stream.count == 2 and first.turns == second.turns
    with pytest.raises(InputError) as caught:
        next(stream)
    # the broken part starts on the line after the good ones (its 2nd line in Markdown)
    assert caught.value.line == len(good.splitlines()) + (2 if fmt == "markdown" else 1)
    with pytest.raises(StopIteration):
        next(stream)
