"""Source texts from a side file keyed by url, for logs that carry only url and title.

URGE's CSV (and many product logs) keep each cited link's url and title but not the passage
the engine read. Citation support is judged against that passage, so it can be given apart,
one source per row, and attached to every link with that url:

* JSONL (``.jsonl``, ``.ndjson``, or a first line opening with ``{``): one object a line,
  ``{"url": "...", "text": "..."}`` (other keys are ignored);
* CSV (anything else): a header naming the columns ``url`` and ``text`` (others ignored).

A url given twice with different texts is an error (which one the engine read cannot be
told); the same text twice is fine. Urls match exactly, or failing that after lower-casing
the scheme and host and dropping a ``#fragment`` and a trailing ``/``. A link that already
has a text (from the log itself) keeps it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from genir_eval.errors import InputError
from genir_eval.records import Session

__all__ = ["read_source_texts", "attach_source_texts", "source_text_attacher", "normalise_url"]


def normalise_url(url: str) -> str:
    """The url with scheme and host lower-cased, no fragment and no trailing ``/``."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip()
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _is_jsonl(path: Path) -> bool:
    if path.suffix.lower() in {".jsonl", ".ndjson"}:
        return True
    if path.suffix.lower() == ".csv":
        return False
    with path.open(encoding="utf-8-sig", errors="replace") as stream:
        first = next((line for line in stream if line.strip()), "")
    return first.lstrip().startswith("{")


def _rows(path: Path) -> Iterable[tuple[int, str, object, object]]:
    """``(line or row, where-kind, url, text)`` for each record of the file."""
    if _is_jsonl(path):
        with path.open(encoding="utf-8-sig") as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except ValueError as error:
                    raise InputError(
                        f"not valid JSON: {error}", path=str(path), line=number
                    ) from None
                if not isinstance(data, dict):
                    raise InputError("expected a JSON object", path=str(path), line=number)
                yield number, "line", data.get("url"), data.get("text")
        return
    with path.open(encoding="utf-8-sig", newline="") as stream:
        reader = csv.DictReader(stream)
        columns = reader.fieldnames or []
        for needed in ("url", "text"):
            if needed not in columns:
                raise InputError(
                    f"the header has no {needed!r} column (found: {', '.join(columns) or 'none'})",
                    path=str(path),
                    row=1,
                )
        for number, row in enumerate(reader, start=2):
            yield number, "row", row.get("url"), row.get("text")


def read_source_texts(path: str | Path) -> dict[str, str]:
    """``{url: text}`` from a JSONL or CSV side file (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "not a file", path=str(path))
    texts: dict[str, str] = {}
    first: dict[str, int] = {}
    try:
        for number, kind, url, text in _rows(path):
            where = {"line": number} if kind == "line" else {"row": number}
            if not isinstance(url, str) or not url.strip():
                raise InputError("required: a non-empty url", path=str(path), column="url", **where)
            if not isinstance(text, str):
                raise InputError(
                    "required: the source's text", path=str(path), column="text", **where
                )
            url = url.strip()
            if url in texts and texts[url] != text:
                raise InputError(
                    f"url {url!r} is given twice with different texts (first at {kind} "
                    f"{first[url]})",
                    path=str(path),
                    column="text",
                    **where,
                )
            texts.setdefault(url, text)
            first.setdefault(url, number)
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text: {error}", path=str(path)) from None
    except csv.Error as error:
        raise InputError(f"not valid CSV: {error}", path=str(path)) from None
    return texts


def source_text_attacher(texts: Mapping[str, str]) -> Callable[[Session], Session]:
    """A function giving a session's links their text from ``texts`` by url (links that
    already carry a text keep it)."""
    by_normal = {normalise_url(url): text for url, text in texts.items()}

    def attach(session: Session) -> Session:
        turns = []
        for turn in session.turns:
            links = []
            for link in turn.links:
                text = texts.get(link.url)
                if text is None:
                    text = by_normal.get(normalise_url(link.url))
                if link.text is None and text is not None and text.strip():
                    link = replace(link, text=text)
                links.append(link)
            turns.append(replace(turn, links=tuple(links)))
        return replace(session, turns=tuple(turns))

    return attach


def attach_source_texts(
    sessions: Iterable[Session], texts: Mapping[str, str]
) -> tuple[list[Session], int]:
    """The sessions with ``texts`` attached to their links by url, and how many links got
    one. Links that already carry a text keep it."""
    given = list(sessions)
    out = [source_text_attacher(texts)(session) for session in given]

    def with_text(items: list[Session]) -> int:
        return sum(1 for s in items for t in s.turns for lk in t.links if lk.text is not None)

    return out, with_text(out) - with_text(given)
