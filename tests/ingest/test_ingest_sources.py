"""Source texts: links[].text in JSONL, source blocks in Markdown, side files keyed by url."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.ingest import (
    attach_source_texts,
    load_sessions,
    parse_markdown,
    read_jsonl,
    read_source_texts,
)
from genir_eval.ingest.sources import normalise_url
from genir_eval.records import session_from_dict, session_to_dict

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

MD = """# Session: a
## Query: how much?
Plans start at 5 dollars [1]. It is fast [2]. Tested [3].

Sources:
[1] Pricing - https://a.example/p
    Plans start at 5 dollars a month.

    Bigger plans cost more.
[2] https://b.example/y "Speed"
```
# Benchmarks (a heading inside the fence is text)
## Query: not a turn either
```
[3] https://c.example/z
"""


def test_markdown_indented_and_fenced_source_blocks() -> None:
    session = parse_markdown(MD).sessions[0]
    assert len(session.turns) == 1
    links = {lk.id: lk for lk in session.turns[0].links}
    assert links[1].text == "Plans start at 5 dollars a month.\n\nBigger plans cost more."
    assert links[2].text == (
        "# Benchmarks (a heading inside the fence is text)\n## Query: not a turn either"
    )
    assert links[3].text is None
    assert [s.citations for s in session.turns[0].statements] == [(1,), (2,), (3,)]


def test_markdown_unclosed_fence_names_its_line() -> None:
    text = "## Query: q\nA [1].\n\nSources:\n[1] https://x.example\n~~~\nabc\n"
    with pytest.raises(InputError) as info:
        parse_markdown(text, path="log.md")
    assert info.value.line == 6 and info.value.path == "log.md"
    assert "not closed" in str(info.value)


def test_markdown_without_blocks_reads_as_before() -> None:
    text = "## Query: q\nA [1].\n\nSources:\n[1] T - https://x.example\n  - [2] https://y.example\n"
    links = parse_markdown(text).sessions[0].turns[0].links
    assert [(lk.id, lk.text) for lk in links] == [(1, None), (2, None)]


def test_jsonl_link_text_round_trips_and_old_files_stay_valid(tmp_path: Path) -> None:
    sessions = read_jsonl(FIXTURES / "citation_sessions.jsonl").sessions
    assert sessions[0].turns[0].links[0].text.startswith("A single shot of espresso")
    assert session_from_dict(session_to_dict(sessions[0])) == sessions[0]
    # a link without text writes no "text" key, as files written before the key existed
    plain = replace(sessions[0].turns[0].links[0], text=None)
    turn = replace(sessions[0].turns[0], links=(plain,))
    written = session_to_dict(replace(sessions[0], turns=(turn,)))
    assert "text" not in written["turns"][0]["links"][0]


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        (lambda d: d["turns"][0]["links"][0].__setitem__("text", 5), "turns[0].links[0].text"),
        (
            lambda d: d["gold"]["citation_support"][0][0].__setitem__("1", "mostly"),
            "gold.citation_support[0][0].1",
        ),
        (
            lambda d: d["gold"]["citation_support"][0][0].__setitem__("x", "full"),
            "gold.citation_support[0][0]",
        ),
        (lambda d: d["gold"]["citation_support"].append([]), "gold.citation_support"),
    ],
)
def test_jsonl_bad_source_fields_are_located(tmp_path: Path, patch, field: str) -> None:
    data = json.loads((FIXTURES / "citation_sessions.jsonl").read_text().splitlines()[0])
    patch(data)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_jsonl(path)
    assert info.value.line == 1 and info.value.column == field


def test_side_files_jsonl_and_csv(tmp_path: Path) -> None:
    texts = read_source_texts(FIXTURES / "citation_sources.csv")
    assert len(texts) == 7
    assert texts["https://docs.example/python2-sunset"].startswith("Python 2 reached")
    jsonl = tmp_path / "sources.jsonl"
    jsonl.write_text(
        '{"url": "https://a.example/x", "text": "one", "title": "ignored"}\n\n'
        '{"url": "https://a.example/x", "text": "one"}\n',
        encoding="utf-8",
    )
    assert read_source_texts(jsonl) == {"https://a.example/x": "one"}


@pytest.mark.parametrize(
    ("name", "content", "where", "message"),
    [
        ("s.csv", "url,body\nx,y\n", {"row": 1}, "no 'text' column"),
        ("s.csv", "url,text\nhttps://a,one\nhttps://a,two\n", {"row": 3}, "given twice"),
        ("s.csv", "url,text\n,one\n", {"row": 2, "column": "url"}, "url"),
        ("s.jsonl", '{"url": "https://a"}\n', {"line": 1, "column": "text"}, "text"),
        ("s.jsonl", "{not json\n", {"line": 1}, "not valid JSON"),
    ],
)
def test_side_file_errors_are_located(
    tmp_path: Path, name: str, content: str, where: dict, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_source_texts(path)
    for key, value in where.items():
        assert getattr(info.value, key) == value
    assert message in str(info.value) and str(path) in str(info.value)


def test_attach_by_url_keeps_log_text_and_normalises() -> None:
    sessions = read_jsonl(FIXTURES / "citation_sessions.jsonl").sessions
    stripped = [
        replace(
            s,
            turns=tuple(
                replace(t, links=tuple(replace(lk, text=None) for lk in t.links)) for t in s.turns
            ),
        )
        for s in sessions
    ]
    # the side file reproduces every text the log carried (the winter-tips page has none)
    attached, n = attach_source_texts(
        stripped, read_source_texts(FIXTURES / "citation_sources.csv")
    )
    assert attached == sessions and n == 7
    # a text already in the log wins; urls match after normalising host case, fragment, "/"
    texts = {"HTTPS://Coffee.example/caffeine/#top": "other"}
    again, n = attach_source_texts(sessions, texts)
    assert n == 0 and again == sessions
    assert normalise_url("HTTPS://Coffee.example/caffeine/#top") == normalise_url(
        "https://coffee.example/caffeine"
    )


def test_markdown_fixture_equals_the_jsonl_fixture_without_gold() -> None:
    from_md = load_sessions(FIXTURES / "citation_sessions.md").sessions
    from_jsonl = load_sessions(FIXTURES / "citation_sessions.jsonl").sessions
    assert [replace(s, gold=None) for s in from_jsonl] == from_md


def test_parse_cli_attaches_a_side_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out.jsonl"
    code = main(
        [
            "parse",
            str(FIXTURES / "demo_sessions.csv"),
            "-o",
            str(out),
            "--sources",
            str(_demo_side_file(tmp_path)),
        ]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "1 of 29 links have a source text" in err
    texts = [lk.get("text") for row in _rows(out) for t in row["turns"] for lk in t["links"]]
    assert texts.count("an invented passage") == 1


def _demo_side_file(tmp_path: Path) -> Path:
    first = load_sessions(FIXTURES / "demo_sessions.csv").sessions[0].turns[0].links[0].url
    path = tmp_path / "side.csv"
    path.write_text(f"url,text\n{first},an invented passage\n", encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_scenario_input_sources(tmp_path: Path) -> None:
    from genir_eval.errors import ConfigError
    from genir_eval.runner.scenario import parse_scenario

    doc = {
        "input": {"path": str(FIXTURES / "demo_sessions.csv"), "sources": "side.csv"},
        "judges": [{"name": "spans"}],
    }
    with pytest.raises(ConfigError, match="input.sources: no such file"):
        parse_scenario(doc, base_dir=tmp_path)
    side = _demo_side_file(tmp_path)
    scenario = parse_scenario(doc, base_dir=tmp_path)
    assert scenario.input.sources == side.resolve()
