"""Response HTML -> text, statements, links (expected values worked out by hand)."""

from __future__ import annotations

import pytest

from genir_eval.errors import InputError
from genir_eval.ingest import parse_response_html
from genir_eval.ingest.response import BREAK, Citation, build_response


def cite(n: int, url: str | None = None, title: str | None = None) -> str:
    """A citation anchor shaped like the ones in URGE's response HTML."""
    url = url or f"https://s{n}.example/page"
    title = title or f"Source {n}"
    return (
        f'<span><a target="_blank" rel="nofollow noopener" class="citation ml-xs inline" '
        f'data-state="closed" aria-label="{title}" href="{url}"><span class="relative">'
        f'<div class="inline-flex">{n}</div></span></a></span>'
    )


# (html, expected response_text, expected [(citations, statement text)]); computed by hand
# from the statement rule in genir_eval.ingest.response.
CASES = [
    (
        f"<span>Servers host sites</span>{cite(1)}{cite(2)}<span>. They store data</span>"
        f"{cite(2)}<span>.</span>",
        "Servers host sites. They store data.",
        [((1, 2), "Servers host sites."), ((2,), "They store data.")],
    ),
    (
        f"<span>One</span>{cite(1)}<span>。</span>\n<span>Tail with text.</span>",
        "One。\nTail with text.",
        [((1,), "One。"), ((), "Tail with text.")],
    ),
    (
        "<h2>Title</h2><p>No citation here.</p>",
        "Title\nNo citation here.",
        [((), "Title\nNo citation here.")],
    ),
    (
        f"<li><span>A</span>{cite(3)}<span><span>{cite(4)}.</span></span><span></span></li>",
        "A.",
        [((3, 4), "A.")],
    ),
    (
        "<p>x &lt;script&gt;alert(1)&lt;/script&gt; y</p>",
        "x <script>alert(1)</script> y",
        [((), "x <script>alert(1)</script> y")],
    ),
    (
        "<div>a<!-- a comment --><script>var hidden = 1;</script><style>p{}</style>b</div>",
        "ab",
        [((), "ab")],
    ),
    (
        "<ul><li>first</li><li>second</li></ul><table><tr><td>c1</td><td>c2</td></tr></table>",
        "first\nsecond\nc1c2",  # table cells run together, as in URGE's conversation text
        [((), "first\nsecond\nc1c2")],
    ),
]


@pytest.mark.parametrize("backend", ["lxml", "bs4"])
@pytest.mark.parametrize(("html", "text", "statements"), CASES)
def test_text_and_statements(html, text, statements, backend):
    parsed = parse_response_html(html, backend=backend)
    assert parsed.response_text == text
    assert [(s.citations, s.text) for s in parsed.statements] == statements
    for segment in parsed.segments:
        assert parsed.response_text[segment.start : segment.end] == segment.text


def test_links_are_deduplicated_in_order_of_first_citation():
    html = (
        f"<span>a</span>{cite(2, 'https://b.example', 'B')}<span>. b</span>"
        f"{cite(1, 'https://a.example', 'A')}{cite(2, 'https://b.example', 'B')}<span>.</span>"
    )
    links = parse_response_html(html).links
    assert [(lk.id, lk.url, lk.title) for lk in links] == [
        (2, "https://b.example", "B"),
        (1, "https://a.example", "A"),
    ]


def test_lxml_refusal_falls_back_to_beautifulsoup():
    # lxml refuses a str that declares its encoding; BeautifulSoup reads it.
    html = '<?xml version="1.0" encoding="utf-8"?><p>declared</p>'
    with pytest.raises(ValueError):
        parse_response_html(html, backend="lxml")
    assert parse_response_html(html).response_text == "declared"


@pytest.mark.parametrize(
    ("html", "message"),
    [
        ("", "no text"),
        ("<div> <span>\n</span></div>", "no text"),
        (f"<div>{cite(1)}</div>", "no text"),
        ('<p>x<a class="citation" href="https://x.example">wiki</a></p>', "not a citation number"),
        (
            f"<p>a{cite(1, 'https://one.example')} b{cite(1, 'https://two.example')}</p>",
            "two urls",
        ),
    ],
)
def test_bad_html_raises_input_error(html, message):
    with pytest.raises(InputError, match=message):
        parse_response_html(html)


def test_break_only_where_text_would_fuse():
    parsed = build_response(["a", BREAK, "b", BREAK, "\nc", Citation(1, "u", "t"), BREAK, "d"])
    assert parsed.response_text == "a\nb\nc\nd"
    assert [(s.citations, s.text) for s in parsed.statements] == [((1,), "a\nb\nc"), ((), "d")]


def test_beautifulsoup_takes_url_like_text_without_warning():
    # bs4 warns that such markup "resembles a locator"; warnings are errors in these tests.
    parsed = parse_response_html("https://a.example/x", backend="bs4")
    assert parsed.response_text == "https://a.example/x"
