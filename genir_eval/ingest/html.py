"""Parse an answer engine's response HTML (Perplexity, as logged in URGE) into records.

The response text is the text content of the HTML with citation anchors removed, which is
how URGE's ``conversation`` column renders it: the engine's HTML already carries the line
breaks between blocks as text, table cells run together, and math shows both its MathML and
its TeX annotation. Where a block element (paragraph, heading, list item...) meets text with
no whitespace on either side, a line break is inserted so words of two blocks never fuse.

Citations are ``a.citation`` anchors: text = citation number, ``href`` = url,
``aria-label`` = page title. Statements follow the rule in :mod:`genir_eval.ingest.response`.

lxml does the parsing (several thousand responses a second); BeautifulSoup with Python's own
``html.parser`` is the fallback for input lxml refuses (an XML encoding declaration
inside a ``str``, for one) and an independent second implementation that the tests hold
lxml to.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Literal

import lxml.etree

from genir_eval.errors import InputError
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
_NUMBER = re.compile(r"[0-9]+")


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
        except ValueError:
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
    number = text.strip().strip("[]")
    if not _NUMBER.fullmatch(number):
        raise InputError(f"citation anchor text {text.strip()!r} is not a citation number")
    url = href.strip()
    if not url:
        raise InputError(f"citation [{int(number)}] has no url (its anchor has no href)")
    return Citation(int(number), url, label.strip())


def _pieces_lxml(html: str) -> list[Piece]:
    root = lxml.etree.HTML(html)
    pieces: list[Piece] = []
    if root is not None:
        _walk_lxml(root, pieces)
    return pieces


def _walk_lxml(element: Any, pieces: list[Piece]) -> None:
    append = pieces.append
    tag = element.tag
    # Comments and processing instructions have a non-str tag; only their tail is text.
    if isinstance(tag, str) and tag not in _SKIP_TAGS:
        if tag == "a" and "citation" in (element.get("class") or "").split():
            append(
                _citation(
                    "".join(element.itertext()),
                    element.get("href") or "",
                    element.get("aria-label") or "",
                )
            )
        else:
            block = tag in _BLOCK_TAGS
            if block:
                append(BREAK)
            if element.text:
                append(element.text)
            for child in element:
                _walk_lxml(child, pieces)
            if block:
                append(BREAK)
    if element.tail:
        append(element.tail)


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


def _walk_bs4(node: Any, pieces: list[Piece]) -> None:
    from bs4 import NavigableString, Tag
    from bs4.element import PreformattedString

    for child in node.children:
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
            block = child.name in _BLOCK_TAGS
            if block:
                pieces.append(BREAK)
            _walk_bs4(child, pieces)
            if block:
                pieces.append(BREAK)
