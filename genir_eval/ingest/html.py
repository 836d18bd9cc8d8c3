"""Parse an answer engine's response HTML (Perplexity, as logged in URGE) into records.

The response text is the text content of the HTML with citation anchors removed, which is
how URGE's ``conversation`` column renders it: the engine's HTML already carries the line
breaks between blocks as text, table cells run together, and math shows both its MathML and
its TeX annotation. Where a block element (paragraph, heading, list item...) meets text with
no whitespace on either side, a line break is inserted so words of two blocks never fuse.

Citations are ``a.citation`` anchors: text = citation number, ``href`` = url,
``aria-label`` = page title. Statements follow the rule in :mod:`genir_eval.ingest.response`.

lxml does the parsing (several thousand responses a second), with libxml2's size limits
lifted (``huge_tree``: text runs over 10 MB, nesting deeper than 256). BeautifulSoup with
Python's own ``html.parser`` is the fallback, and an independent second implementation that
the tests hold lxml to. It takes over whenever lxml cannot be trusted with the whole
response: input lxml refuses (an XML encoding declaration inside a ``str``), any fatal
error lxml reports (nesting beyond even the lifted limit of 2,048, as 200,000 unclosed tags
make), or fewer citation anchors found than the HTML spells out. Either way the whole
response is read or the error says why; content is never dropped silently. Both walks are
iterative, so depth costs no Python recursion.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Literal

import lxml.etree

from genir_eval.errors import InputError
from genir_eval.ingest.markers import citation_number
from genir_eval.ingest.response import BREAK, Citation, ParsedResponse, Piece, build_response

__all__ = ["parse_response_html"]

Backend = Literal["auto", "lxml", "bs4"]

_BLOCK_TAGS = frozenset(
    "address article aside blockquote br caption dd details dialog div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre "
    "section summary table ul".split()
)
# Elements whose content is never shown as text.
_SKIP_TAGS = frozenset("script style template noscript head title".split())
# An opening <a> tag whose class list names "citation"; counted to check lxml's result.
_CITATION_TAG = re.compile(
    r"""<a\s[^<>]*?\bclass\s*=\s*(?:"[^"]*\bcitation\b[^"]*"|'[^']*\bcitation\b[^']*'|citation\b)""",
    re.IGNORECASE,
)
_PARSER = lxml.etree.HTMLParser(huge_tree=True)


class _Untrusted(Exception):
    """lxml did not read the whole response; the BeautifulSoup path reads it instead."""


def parse_response_html(html: str, *, backend: Backend = "auto") -> ParsedResponse:
    """Response text, statements, links and segments of one response's HTML.

    ``backend="auto"`` parses with lxml and falls back to BeautifulSoup (``html.parser``)
    for input lxml rejects; ``"lxml"`` and ``"bs4"`` force one. Raises
    :class:`~genir_eval.errors.InputError` (without location: callers add file, row and
    column) when the HTML holds no text or a citation anchor has no number or no url.
    """
    if backend == "bs4":
        pieces = _pieces_bs4(html)
    else:
        try:
            pieces = _pieces_lxml(html)
        except (ValueError, lxml.etree.LxmlError, _Untrusted):
            if backend == "lxml":
                raise
            pieces = _pieces_bs4(html)
    return build_response(pieces)


def _citation(text: str, href: str, label: str) -> Citation:
    """The citation an ``a.citation`` anchor stands for; its url is required, its title not.

    Only ASCII digits count as a number (``"²"`` passes ``str.isdigit`` but not ``int``). A
    url-less anchor is an error rather than a link with an empty url, because every cited
    link must be resolvable; a missing ``aria-label`` only leaves the title empty.
    """
    try:
        number = citation_number(text.strip().strip("[]"))
    except InputError:
        shown = text.strip()
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise InputError(f"citation anchor text {shown!r} is not a citation number") from None
    url = href.strip()
    if not url:
        raise InputError(f"citation [{number}] has no url (its anchor has no href)")
    return Citation(number, url, label.strip())


def _pieces_lxml(html: str) -> list[Piece]:
    root = lxml.etree.fromstring(html, _PARSER) if html.strip() else None
    if any(entry.level >= lxml.etree.ErrorLevels.FATAL for entry in _PARSER.error_log):
        raise _Untrusted
    pieces: list[Piece] = []
    if root is None:
        return pieces
    append = pieces.append
    found = 0
    walk = lxml.etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, element in walk:
        tag = element.tag
        if event == "start":
            if tag in _SKIP_TAGS:
                walk.skip_subtree()
            elif tag == "a" and "citation" in (element.get("class") or "").split():
                walk.skip_subtree()
                found += 1
                append(
                    _citation(
                        "".join(element.itertext()),
                        element.get("href") or "",
                        element.get("aria-label") or "",
                    )
                )
            else:
                if tag in _BLOCK_TAGS:
                    append(BREAK)
                if element.text:
                    append(element.text)
            continue
        # "end", or a comment or processing instruction: only its tail is text
        if event == "end" and tag in _BLOCK_TAGS:
            append(BREAK)
        if element.tail:
            append(element.tail)
    # Cheap check first: every anchor spells "citation" at least once.
    if found < html.count("citation") and found < len(_CITATION_TAG.findall(html)):
        raise _Untrusted
    return pieces


def _pieces_bs4(html: str) -> list[Piece]:
    from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

    pieces: list[Piece] = []
    with warnings.catch_warnings():
        # A response that looks like a url, or opens with an XML declaration, is still
        # the response: parse it as HTML without a warning.
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        # By default BeautifulSoup turns a whitespace-only string outside <pre> into one
        # "\n" or " "; lxml keeps it as written. Preserving whitespace from the document
        # root down keeps the text content exact, so the two backends agree.
        soup = BeautifulSoup(
            html, "html.parser", preserve_whitespace_tags={BeautifulSoup.ROOT_TAG_NAME}
        )
    _walk_bs4(soup, pieces)
    return pieces


def _walk_bs4(root: Any, pieces: list[Piece]) -> None:
    from bs4 import NavigableString, Tag
    from bs4.element import PreformattedString

    # A stack of child iterators instead of recursion: nesting depth is unbounded.
    stack: list[tuple[Any, bool]] = [(iter(root.children), False)]
    while stack:
        children, block = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            if block:
                pieces.append(BREAK)
            continue
        if isinstance(child, NavigableString):
            # Comments, doctypes and processing instructions are PreformattedStrings.
            if not isinstance(child, PreformattedString):
                pieces.append(str(child))
        elif isinstance(child, Tag) and child.name not in _SKIP_TAGS:
            if child.name == "a" and "citation" in (child.get("class") or []):
                pieces.append(
                    _citation(
                        child.get_text(),
                        str(child.get("href") or ""),
                        str(child.get("aria-label") or ""),
                    )
                )
                continue
            child_block = child.name in _BLOCK_TAGS
            if child_block:
                pieces.append(BREAK)
            stack.append((iter(child.children), child_block))
