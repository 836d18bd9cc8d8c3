"""Source texts at their edges: long ones, blank ones, empty side files and a quote left open.

Before, a CSV source text over 131,072 characters was refused as "not valid CSV" with no
row; an empty side file was accepted (attaching nothing, without a word); a log link with
``"text": ""`` hid the side file's text for its url; a text of whitespace (or invisible
characters) counted as "has a source text" and was then judged missing; and a quoted cell
left open at the end of a CSV (a side file, or an URGE file) was read as a cell running to
the end of the file. Each class is checked here over many cases.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from hostile_helpers import run_parse

from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions, parse_markdown, read_jsonl, read_source_texts
from genir_eval.ingest.sources import attach_source_texts
from genir_eval.judges import make_judge
from genir_eval.judges.base import Label
from genir_eval.llm import offline_engine
from genir_eval.records import Link, Session, is_blank

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SESSIONS = FIXTURES / "citation_sessions.jsonl"
URGE = Path(__file__).resolve().parents[3] / "shared" / "urge" / "urge_sample_dev.csv"
URL = "https://coffee.example/caffeine"

# --- long texts: past the csv module's default cell limit of 131,072 characters -------------

_PIECES = {
    "ascii": "word ",
    "cjk": "咖啡因含量",
    "quotes and commas": 'a "quoted", text, ',
    "lines": "line one\nline two\r\n",
}
LONG = [
    pytest.param(suffix, piece, length, id=f"{suffix}-{name}-{length}")
    for suffix in (".csv", ".jsonl")
    for name, piece in _PIECES.items()
    for length in (131_071, 131_072, 131_073, 400_000, 2_000_000)
]


def _side_file(path: Path, rows: list[tuple[str, str]]) -> None:
    if path.suffix == ".jsonl":
        path.write_text(
            "".join(json.dumps({"url": u, "text": t}, ensure_ascii=False) + "\n" for u, t in rows),
            encoding="utf-8",
        )
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["url", "text"])
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")


@pytest.mark.parametrize(("suffix", "piece", "length"), LONG)
def test_a_long_source_text_is_read_whole(
    tmp_path: Path, suffix: str, piece: str, length: int
) -> None:
    text = (piece * (length // len(piece) + 1))[:length] + "end"
    side = tmp_path / f"sources{suffix}"
    _side_file(side, [("https://short.example/a", "a short one"), (URL, text)])
    texts = read_source_texts(side)
    assert len(texts[URL]) == len(text) and texts[URL] == text
    assert texts["https://short.example/a"] == "a short one"


def test_a_long_source_text_reaches_the_link(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = "Espresso holds caffeine. " * 20_000  # 500,000 characters
    side = tmp_path / "sources.csv"
    _side_file(side, [(URL, text)])
    log = _log_with_link_text(tmp_path, None)
    code, err, written = run_parse(capsys, log, tmp_path / "out.jsonl", "--sources", str(side))
    assert code == 0, err
    first = json.loads(written[0])
    assert first["turns"][0]["links"][0]["text"] == text


# --- empty side files -----------------------------------------------------------------------

EMPTY = [
    pytest.param(name, content, id=f"{name}:{content!r}")
    for name in ("s.csv", "s.jsonl", "s.ndjson", "s.txt", "s")
    for content in ("", "\n", "\n\n  \n", "\r\n", "\ufeff", "\ufeff\n")
] + [
    pytest.param(name, content, id=f"{name}:{content!r}")
    for name in ("s.csv", "s.txt")
    for content in (
        "url,text\n",
        "url,text",
        "url,text\n\n\n",
        "url,text,title\n",
        "\ufeffurl,text\r\n",
    )
]


@pytest.mark.parametrize(("name", "content"), EMPTY)
def test_an_empty_side_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, name: str, content: str
) -> None:
    side = tmp_path / name
    side.write_text(content, encoding="utf-8", newline="")
    with pytest.raises(InputError, match="holds no source texts"):
        read_source_texts(side)
    code, err, written = run_parse(capsys, SESSIONS, tmp_path / "out.jsonl", "--sources", str(side))
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"genir-eval: error: {side}: the file holds no source texts")
    assert written == []


# --- blank texts: in a side file refused, in a log no text at all -----------------------------

BLANKS = ["", " ", "\t\n", "\u3000", "\u00a0", "\u200b", "\ufeff", " \u2060 ", "\u200b\u200d\n"]
NOT_BLANK = ["a", " . ", "\u200bx", "0", "\u00a0-"]


@pytest.mark.parametrize("text", BLANKS, ids=repr)
def test_blank_is_blank(text: str) -> None:
    assert is_blank(text) and not Link(1, URL, "t", text).has_text


@pytest.mark.parametrize("text", NOT_BLANK, ids=repr)
def test_not_blank_is_text(text: str) -> None:
    assert not is_blank(text) and Link(1, URL, "t", text).has_text


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize("text", [b for b in BLANKS if b], ids=repr)
def test_a_blank_text_in_a_side_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, suffix: str, text: str
) -> None:
    side = tmp_path / f"s{suffix}"
    _side_file(side, [("https://ok.example/", "fine"), (URL, text)])
    code, err, _ = run_parse(capsys, SESSIONS, tmp_path / "out.jsonl", "--sources", str(side))
    where = "row 3" if suffix == ".csv" else "line 2"
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"genir-eval: error: {side}, {where}, column 'text'"), err[0]


def _log_with_link_text(tmp_path: Path, text: str | None) -> Path:
    """The citation fixture with the first link of the first session given ``text``."""
    lines = SESSIONS.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    link = first["turns"][0]["links"][0]
    assert link["url"] == URL
    if text is None:
        del link["text"]
    else:
        link["text"] = text
    lines[0] = json.dumps(first, ensure_ascii=False)
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


@pytest.mark.parametrize("text", BLANKS, ids=repr)
def test_a_blank_text_in_the_log_takes_the_side_files(tmp_path: Path, text: str) -> None:
    log = _log_with_link_text(tmp_path, text)
    side = tmp_path / "s.csv"
    _side_file(side, [(URL, "A single shot holds 63 mg of caffeine.")])
    session = load_sessions(log, sources=side).sessions[0]
    link = session.turns[0].links[0]
    assert link.text == "A single shot holds 63 mg of caffeine."
    sessions, attached = attach_source_texts(read_jsonl(log).sessions, read_source_texts(side))
    assert attached == 1 and sessions[0].turns[0].links[0].has_text


@pytest.mark.parametrize("text", BLANKS, ids=repr)
def test_a_blank_text_in_the_log_is_no_source_text(
    tmp_path: Path, capsys: pytest.CaptureFixture, text: str
) -> None:
    """Counted as no text by parse, and judged missing for that reason (not as a text)."""
    (tmp_path / "without").mkdir()
    base = _log_with_link_text(tmp_path / "without", None)
    log = _log_with_link_text(tmp_path, text)
    code, err, _ = run_parse(capsys, log, tmp_path / "out.jsonl")
    assert code == 0, err
    code_none, err_none, _ = run_parse(capsys, base, tmp_path / "out2.jsonl")
    counts = [line for line in err if "have a source text" in line]
    counts_none = [line for line in err_none if "have a source text" in line]
    assert counts and counts == counts_none  # the blank text is counted as the absent one
    labels = _judged(read_jsonl(log).sessions[:1])
    first = [lb for lb in labels if lb.key.turn == 1 and lb.key.item.endswith(":1")]
    assert first and all(lb.value is None for lb in first)
    assert all((lb.missing_reason or "").startswith("no source text for link [1]") for lb in first)


def _judged(sessions: list[Session]) -> list[Label]:
    """The offline citation_support judge's labels for ``sessions``."""

    async def go() -> list[Label]:
        engine = offline_engine(quiet=True)
        judge = make_judge("citation_support")
        try:
            return [label for session in sessions for label in await judge(session, engine)]
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("text", ["\u200b", "\ufeff\u2060"], ids=repr)
def test_a_markdown_source_block_of_invisible_characters_is_no_text(text: str) -> None:
    md = f"## Query: q\nA claim [1].\n\nSources:\n[1] https://a.example/p\n    {text}\n"
    link = parse_markdown(md).sessions[0].turns[0].links[0]
    assert link.text is None and not link.has_text


# --- a quoted cell left open at the end of a CSV -------------------------------------------

OPEN_QUOTES = [
    pytest.param(content, row, id=f"{row}:{content!r}")
    for content, row in [
        ('url,text\nhttps://a.example/x,"some text\n', 2),
        ('url,text\nhttps://a.example/x,"some text', 2),
        ('url,text\r\nhttps://a.example/x,"some text\r\n', 2),
        ('url,text\nhttps://a.example/x,fine\nhttps://b.example/y,"more\n\nlines\n', 3),
        ('url,text\nhttps://a.example/x,fine\n"https://b.example/y,more\n', 3),
        ('url,text\nhttps://a.example/x,"a ""quoted"" word\n', 2),
        ('url,text\nhttps://a.example/x,"closed" after\n', 2),
        ('"url,text\nhttps://a.example/x,fine\n', 1),
        ('url,"text\nhttps://a.example/x,fine\n', 1),
    ]
]


@pytest.mark.parametrize(("content", "row"), OPEN_QUOTES)
def test_a_quote_left_open_in_a_side_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str, row: int
) -> None:
    side = tmp_path / "s.csv"
    side.write_text(content, encoding="utf-8", newline="")
    code, err, written = run_parse(capsys, SESSIONS, tmp_path / "out.jsonl", "--sources", str(side))
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"genir-eval: error: {side}, row {row}"), err[0]
    assert "not valid CSV" in err[0] and written == []


def _urge_cut(tmp_path: Path, how: str) -> Path:
    data = URGE.read_text(encoding="utf-8").rstrip("\r\n")
    assert data.endswith('"')
    if how == "last quote dropped":
        data = data[:-1] + "\n"
    elif how == "last quote dropped, no line break":
        data = data[:-1]
    elif how == "file cut inside the last cell":
        data = data[: len(data) - 2_000]
    elif how == "text after a closing quote":
        data = data + "tail\n"
    path = tmp_path / "urge.csv"
    path.write_text(data, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "how",
    [
        "last quote dropped",
        "last quote dropped, no line break",
        "file cut inside the last cell",
        "text after a closing quote",
    ],
)
def test_a_quote_left_open_in_an_urge_file_is_an_error_of_its_row(
    tmp_path: Path, capsys: pytest.CaptureFixture, how: str, shared
) -> None:
    shared(URGE, "the URGE sample")
    path = _urge_cut(tmp_path, how)
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl")
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"genir-eval: error: {path}, row 12"), err[0]
    assert "urge-11" in err[0] and "malformed CSV" in err[0]
    # the rows before it are fine: --skip-invalid keeps them and lists the broken one
    code, err, written = run_parse(capsys, path, tmp_path / "out.jsonl", "--skip-invalid")
    assert code == 0 and len(written) == 11, err
    assert any("urge-11" in line for line in err)
