"""Response HTML structures Perplexity renders beyond the few the URGE sample happens to show.

Each case is a small invented fragment shaped like Perplexity's markup (tables, code, KaTeX,
quotes, nested lists, headings, entities...). Expected values are worked out by hand from the
rules in :mod:`genir_eval.ingest.html` (text content; a line break where two blocks would
fuse; table cells run together, as in URGE's ``conversation`` column; math keeps its MathML,
TeX annotation and HTML renderings) and :mod:`genir_eval.ingest.response` (a statement is the
run closed by a group of adjacent citations, taking the punctuation right after the group;
text after the last group is its own statement when it holds a letter or digit). Segments
follow :mod:`genir_eval.ingest.segments`. Tolerance: exact. A property test then composes
these blocks at random and checks the invariants that must hold for any of them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genir_eval.errors import InputError
from genir_eval.ingest import URGE_COLUMNS, load_urge, parse_response_html
from genir_eval.ingest.response import ParsedResponse


def cite(n: int, *, url: str | None = "", title: str | None = "") -> str:
    """A citation anchor as Perplexity renders it; ``None`` leaves the attribute out."""
    attrs = 'target="_blank" rel="nofollow noopener" class="citation ml-xs inline"'
    if title is not None:
        attrs += f' aria-label="{title or f"Source {n}"}"'
    if url is not None:
        attrs += f' href="{url or f"https://s{n}.example/page"}"'
    return (
        f'<span><a {attrs} data-state="closed"><span class="relative">'
        f'<div class="inline-flex">{n}</div></span></a></span>'
    )


def link(n: int) -> tuple[int, str, str]:
    return (n, f"https://s{n}.example/page", f"Source {n}")


KATEX_O_N = (
    '<span class="math math-inline"><span class="katex"><span class="katex-mathml">'
    '<math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><mi>O</mi>'
    '<mo stretchy="false">(</mo><mi>n</mi><mo stretchy="false">)</mo></mrow>'
    '<annotation encoding="application/x-tex">O(n)</annotation></semantics></math></span>'
    '<span class="katex-html" aria-hidden="true"><span class="base">'
    '<span class="strut" style="height:1em;"></span><span class="mord mathnormal">O</span>'
    '<span class="mopen">(</span><span class="mord mathnormal">n</span>'
    '<span class="mclose">)</span></span></span></span></span>'
)
KATEX_DISPLAY_X2 = (
    '<div class="math math-display"><span class="katex-display"><span class="katex">'
    '<span class="katex-mathml"><math display="block"><semantics><mrow><msup><mi>x</mi>'
    '<mn>2</mn></msup></mrow><annotation encoding="application/x-tex">x^2</annotation>'
    '</semantics></math></span><span class="katex-html" aria-hidden="true">'
    '<span class="base"><span class="mord"><span class="mord mathnormal">x</span>'
    '<span class="msupsub"><span class="mord mtight">2</span></span></span></span></span>'
    "</span></span></div>"
)

# (name, html, response text, [(statement text, citation ids)], links, segment texts)
CASES: list[tuple[str, str, str, list[tuple[str, tuple[int, ...]]], list[Any], list[str]]] = [
    (
        # Cells run together (URGE's conversation text does); a citation in a cell closes
        # the run before it like anywhere else.
        "table with thead/tbody and citations in cells",
        "<span>Prices:</span><div class='w-full overflow-x-auto'><table><thead><tr><th>Item</th>"
        f"<th>Price</th></tr></thead><tbody><tr><td>Tea{cite(1)}</td><td>3 yuan</td></tr>"
        f"<tr><td>Rice</td><td>5 yuan{cite(2)}</td></tr></tbody></table></div><span>Done.</span>",
        "Prices:\nItemPriceTea3 yuanRice5 yuan\nDone.",
        [("Prices:\nItemPriceTea", (1,)), ("3 yuanRice5 yuan", (2,)), ("Done.", ())],
        [link(1), link(2)],
        ["Prices:", "ItemPriceTea3 yuanRice5 yuan", "Done."],
    ),
    (
        # <pre> keeps its line breaks and indentation; inline <code> is plain text.
        "code block and inline code",
        "<span>Run:</span><pre><code class='language-python'>def f(x):\n    return x</code></pre>"
        f"<span>It returns </span><span><code>x</code></span>{cite(1)}<span>.</span>",
        "Run:\ndef f(x):\n    return x\nIt returns x.",
        [("Run:\ndef f(x):\n    return x\nIt returns x.", (1,))],
        [link(1)],
        ["Run:", "def f(x):", "return x", "It returns x."],
    ),
    (
        # MathML text, TeX annotation and KaTeX HTML each once: URGE's text has "O(n)O(n)O(n)".
        "KaTeX inline and display math",
        f"<span>Cost is {KATEX_O_N}</span>{cite(3)}<span>。</span>{KATEX_DISPLAY_X2}"
        "<span>grows fast</span>",
        "Cost is O(n)O(n)O(n)。\nx2x^2x2\ngrows fast",
        [("Cost is O(n)O(n)O(n)。", (3,)), ("x2x^2x2\ngrows fast", ())],
        [link(3)],
        ["Cost is O(n)O(n)O(n)。", "x2x^2x2", "grows fast"],
    ),
    (
        "blockquote",
        f"<blockquote><p>Quoted claim{cite(4)}.</p></blockquote><p>Comment.</p>",
        "Quoted claim.\nComment.",
        [("Quoted claim.", (4,)), ("Comment.", ())],
        [link(4)],
        ["Quoted claim.", "Comment."],
    ),
    (
        # An answer that is only a list, ordered with a nested bulleted list, with the line
        # breaks between items that Perplexity writes as text.
        "answer that is only an ordered list with a nested list",
        f"<ol>\n<li><strong>First</strong><ul>\n<li>sub a{cite(1)}</li>\n<li>sub b</li>\n</ul>"
        f"</li>\n<li>Second{cite(2)}{cite(3)}</li>\n</ol>",
        "First\nsub a\nsub b\n\nSecond",
        [("First\nsub a", (1,)), ("sub b\n\nSecond", (2, 3))],
        [link(1), link(2), link(3)],
        ["First", "sub a", "sub b", "Second"],
    ),
    (
        # <br> is a break where text would fuse; two in a row still make one.
        "line breaks",
        f"<p>Line one<br>Line two{cite(1)}<br><br>Line three</p>",
        "Line one\nLine two\nLine three",
        [("Line one\nLine two", (1,)), ("Line three", ())],
        [link(1)],
        ["Line one", "Line two", "Line three"],
    ),
    (
        "headings h1-h4 with citations inside a heading and inside <strong>",
        f"<h1>Guide</h1><h2>Setup{cite(1)}</h2><h3>Step <strong>one{cite(2)}</strong></h3>"
        "<h4>Notes</h4><p>End</p>",
        "Guide\nSetup\nStep one\nNotes\nEnd",
        [("Guide\nSetup", (1,)), ("Step one", (2,)), ("Notes\nEnd", ())],
        [link(1), link(2)],
        ["Guide", "Setup", "Step one", "Notes", "End"],
    ),
    (
        # One id per anchor, so a repeated citation stays repeated in its statement (the
        # statement rule counts anchors); links are deduplicated.
        "citation numbers >= 10 and a citation repeated in one group",
        f"<span>Alpha</span>{cite(10)}{cite(10)}{cite(12)}<span>. Beta</span>{cite(123)}",
        "Alpha. Beta",
        [("Alpha.", (10, 10, 12)), ("Beta", (123,))],
        [link(10), link(12), link(123)],
        ["Alpha.", "Beta"],
    ),
    (
        # Whitespace, empty spans, a newline and a non-breaking space between anchors do not
        # split the group.
        "whitespace and empty spans between anchors",
        f"<span>Gamma</span>{cite(1)}<span> </span><span></span>\n{cite(2)}<span>&nbsp;</span>"
        f"{cite(3)}<span>。</span>",
        "Gamma \n\xa0。",
        [("Gamma。", (1, 2, 3))],
        [link(1), link(2), link(3)],
        ["Gamma", "。"],
    ),
    (
        "non-breaking spaces, HTML entities and emoji",
        f"<p>Price&nbsp;&lt;&nbsp;5&nbsp;&amp; rising 📈{cite(1)}！Tea &#x2615; &quot;hot&quot;"
        "&#39;s</p>",
        'Price\xa0<\xa05\xa0& rising 📈！Tea ☕ "hot"\'s',
        [("Price\xa0<\xa05\xa0& rising 📈！", (1,)), ('Tea ☕ "hot"\'s', ())],
        [link(1)],
        ["Price\xa0<\xa05\xa0& rising 📈！", 'Tea ☕ "hot"\'s'],
    ),
    (
        # Indentation between tags is text content too; both backends keep it as written.
        "indented markup",
        "<div>\n  <p>alpha</p>\n  <p>beta</p>\n</div>",
        "alpha\n  beta",
        [("alpha\n  beta", ())],
        [],
        ["alpha", "beta"],
    ),
    (
        # Anchor text may carry brackets and spaces around the number.
        "bracketed citation number",
        '<p>Delta<a class="citation" href="https://d.example" aria-label="D"> [11] </a>.</p>',
        "Delta.",
        [("Delta.", (11,))],
        [(11, "https://d.example", "D")],
        ["Delta."],
    ),
    (
        # No aria-label: the link is kept with an empty title (the url is what is required).
        "citation anchor without aria-label",
        f"<p>Epsilon{cite(5, title=None)}.</p>",
        "Epsilon.",
        [("Epsilon.", (5,))],
        [(5, "https://s5.example/page", "")],
        ["Epsilon."],
    ),
]


def _check_offsets(parsed: ParsedResponse) -> None:
    for segment in parsed.segments:
        assert parsed.response_text[segment.start : segment.end] == segment.text


@pytest.mark.parametrize("backend", ["lxml", "bs4"])
@pytest.mark.parametrize(
    ("html", "text", "statements", "links", "segments"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_structure(html, text, statements, links, segments, backend):
    parsed = parse_response_html(html, backend=backend)
    assert parsed.response_text == text
    assert [(s.text, s.citations) for s in parsed.statements] == statements
    assert [(lk.id, lk.url, lk.title) for lk in parsed.links] == links
    assert [s.text for s in parsed.segments] == segments
    _check_offsets(parsed)


@pytest.mark.parametrize("backend", ["lxml", "bs4"])
@pytest.mark.parametrize(
    ("html", "message"),
    [
        # Every cited link must have a url (the fidelity contract), so a url-less anchor is
        # an error, not a link with an empty url.
        (f"<p>x{cite(1, url=None)}</p>", r"citation \[1\] has no url"),
        ('<p>x<a class="citation" href=" " aria-label="t">2</a></p>', r"citation \[2\] has no url"),
        # "²" passes str.isdigit but is no citation number (int() would raise ValueError).
        ('<p>x<a class="citation" href="https://u.example">²</a></p>', "not a citation number"),
        ('<p>x<a class="citation" href="https://u.example"></a></p>', "not a citation number"),
    ],
)
def test_broken_citation_anchor_is_an_input_error(html, message, backend):
    with pytest.raises(InputError, match=message):
        parse_response_html(html, backend=backend)


def test_urlless_citation_names_row_and_column_when_loading_urge(tmp_path: Path):
    row = {column: "" for column in URGE_COLUMNS}
    row.update(
        conversation=json.dumps({"回合1": {"用户": "q", "AI助手": "a."}}),
        task_type="Factual QA",
        response_html=json.dumps([f"<span>a</span>{cite(1, url=None)}<span>.</span>"]),
    )
    path = tmp_path / "urge.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=URGE_COLUMNS)
        writer.writeheader()
        writer.writerow(row)
    with pytest.raises(InputError, match=r"turn 1: citation \[1\] has no url") as caught:
        load_urge(path)
    assert (caught.value.row, caught.value.column) == (1, "response_html")


# --- property test: random compositions of the blocks above --------------------------------

_WORDS = st.sampled_from(
    ["Tea", "价格", "3.5", "1,000", "a,b", "x: y", "ok!", "😀", "&amp;", "&lt;b&gt;", "é"]
)
_PUNCT = st.sampled_from(["", "", "。", "，", ".", ", ", "; ", "！", " ", "&nbsp;", "\n"])
_GAPS = st.sampled_from(["", " ", "\n", "\n  ", "<span></span>", "<span> </span>", "&nbsp;"])


@st.composite
def _inline(draw: st.DrawFn) -> str:
    """A run of phrases, each followed by punctuation and maybe a citation group."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        phrase = " ".join(draw(st.lists(_WORDS, min_size=1, max_size=3)))
        wrap = draw(st.sampled_from(["<span>{}</span>", "<strong>{}</strong>", "<code>{}</code>"]))
        parts.append(wrap.format(phrase))
        if draw(st.booleans()):
            parts.append(KATEX_O_N)
        ids = draw(st.lists(st.integers(1, 15), max_size=3))
        parts.append(draw(_GAPS).join(cite(n) for n in ids))
        parts.append(f"<span>{draw(_PUNCT)}</span>")
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(["<br>", "\n", "<span><br></span><span>\n</span>"])))
    return "".join(parts)


@st.composite
def _block(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["p", "h", "ul", "ol", "table", "pre", "quote", "math", "bare"]))
    if kind == "p":
        return f"<p>{draw(_inline())}</p>"
    if kind == "h":
        level = draw(st.integers(1, 4))
        return f"<h{level}>{draw(_inline())}</h{level}>"
    if kind in ("ul", "ol"):
        items = draw(st.lists(_inline(), min_size=1, max_size=3))
        nested = draw(st.booleans())
        body = "\n".join(f"<li>{item}</li>" for item in items)
        if nested:
            body += f"\n<li><span>more</span><ul>\n<li>{draw(_inline())}</li>\n</ul></li>"
        return f"<{kind}>\n{body}\n</{kind}>"
    if kind == "table":
        cells = draw(st.lists(_inline(), min_size=1, max_size=4))
        body = "".join(f"<tr><td>{cell}</td><td>c</td></tr>" for cell in cells)
        return f"<table><thead><tr><th>H1</th><th>H2</th></tr></thead><tbody>{body}</tbody></table>"
    if kind == "pre":
        return "<pre><code>if x:\n    y = 1 &lt; 2\n</code></pre>"
    if kind == "quote":
        return f"<blockquote><p>{draw(_inline())}</p></blockquote>"
    if kind == "math":
        return KATEX_DISPLAY_X2
    return draw(_inline())


_RESPONSES = st.lists(_block(), min_size=1, max_size=5).map(
    lambda blocks: '<div dir="auto"><div class="prose">' + "\n  ".join(blocks) + "</div></div>"
)


def _squeeze(text: str) -> str:
    return "".join(text.split())


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_RESPONSES)
def test_random_compositions_keep_the_invariants(html):
    parsed = parse_response_html(html, backend="lxml")
    assert parsed == parse_response_html(html, backend="bs4")
    text = parsed.response_text
    assert text == text.strip() and text
    # Segments tile the non-whitespace text, in order, at their offsets.
    _check_offsets(parsed)
    ends = [0] + [s.end for s in parsed.segments]
    assert all(s.start >= end for s, end in zip(parsed.segments, ends, strict=False))
    assert "".join(_squeeze(s.text) for s in parsed.segments) == _squeeze(text)
    # Statements partition the text (modulo whitespace) and cite only parsed links.
    assert _squeeze("".join(s.text for s in parsed.statements)) == _squeeze(text)
    ids = {lk.id for lk in parsed.links}
    assert {c for s in parsed.statements for c in s.citations} == ids
    assert all(lk.url and lk.title for lk in parsed.links)
