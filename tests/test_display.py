"""How text from data is shown (genir_eval/figures.py): on a terminal every control and
bidirectional character escaped, in Markdown no HTML and no code span a name can leave.
Expected strings are written out by hand from the rules (CommonMark 0.31 6.1 for code
spans: a span ends at the first backquote run as long as its opening one)."""

from __future__ import annotations

import re

import pytest

from genir_eval.figures import code_span, markdown_text, shown, terminal_safe

UNSAFE = [
    "\x1b",
    "\x07",
    "\r",
    "\n",
    "\t",
    "\x00",
    "\x7f",
    "\x85",
    "\x9b",
    "\u2028",
    "\u2029",
    "\u200e",
    "\u200f",
    "\u061c",
    *[chr(c) for c in range(0x202A, 0x202F)],
    *[chr(c) for c in range(0x2066, 0x206A)],
]


@pytest.mark.parametrize("char", UNSAFE, ids=lambda c: f"U+{ord(c):04X}")
def test_every_unsafe_character_is_shown_escaped(char: str) -> None:
    out = shown(f"a{char}b")
    assert char not in out and out.startswith("a\\") and out.endswith("b")
    assert out.isascii() and out.isprintable()


def test_shown_writes_pythons_escapes() -> None:
    assert shown("evil\x1b]0;owned\x07") == "evil\\x1b]0;owned\\x07"
    assert shown("\u202egnp.exe") == "\\u202egnp.exe"
    assert shown("line\nbreak") == "line\\nbreak"
    assert shown("中文 é ✓") == "中文 é ✓"


def test_terminal_safe_keeps_lines_and_tabs_and_json() -> None:
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("x\x1by") == "x\\u001by"
    # inside a JSON string the escape is the same character: the document is unchanged
    import json

    document = json.dumps({"k": "a\u202eb"}, ensure_ascii=False)
    assert json.loads(terminal_safe(document)) == {"k": "a\u202eb"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain", "`plain`"),
        ("a`b", "``a`b``"),
        ("a``b`c", "```a``b`c```"),
        ("`x", "`` `x ``"),
        ("x`", "`` x` ``"),
        ("a|b", "`a\\|b`"),
        ("<b>x</b>", "`<b>x</b>`"),
    ],
)
def test_a_code_span_no_name_can_leave(name: str, expected: str) -> None:
    assert code_span(name) == expected


@pytest.mark.parametrize("name", ["a`b", "``", "x```y`", "a`</code><script>x</script>`"])
def test_the_fence_is_longer_than_every_backquote_run(name: str) -> None:
    span = code_span(name, in_table=False)
    fence = re.match("`+", span).group()  # type: ignore[union-attr]
    inner = span[len(fence) : -len(fence)]
    assert span.endswith(fence)
    assert all(len(run) < len(fence) for run in re.findall("`+", inner))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert\\(1\\)&lt;/script&gt;"),
        ("*bold* _it_", "\\*bold\\* \\_it\\_"),
        ("[link](http://x)", "\\[link\\]\\(http://x\\)"),
        ("a|b", "a\\|b"),
        ("a`b", "a\\`b"),
        ("e\x1b[2J", "e\\\\x1b\\[2J"),
    ],
)
def test_markdown_text_is_literal(text: str, expected: str) -> None:
    assert markdown_text(text) == expected


def test_the_command_lines_streams_escape_on_a_pipe_too(capsys) -> None:
    # what a command prints reaches a pipe (a CI log, less -R) escaped, not only a terminal
    from genir_eval.cli import _guarded_streams

    with _guarded_streams():
        print("name\x1b]0;owned\x07 \u202eevil\tcol\nnext")
    out = capsys.readouterr().out
    assert out == "name\\u001b]0;owned\\u0007 \\u202eevil\tcol\nnext\n"
