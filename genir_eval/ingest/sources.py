"""Source texts from a side file keyed by url, for logs that carry only url and title.

URGE's CSV (and many product logs) keep each cited link's url and title but not the passage
the engine read. Citation support is judged against that passage, so it can be given apart,
one source per row, and attached to every link with that url:

* JSONL (``.jsonl``, ``.ndjson``, or a first line opening with ``{``): one object a line,
  ``{"url": "...", "text": "..."}`` (other keys are ignored, none may repeat);
* CSV (anything else): a header naming the columns ``url`` and ``text`` once each (others
  ignored), no row with more cells than the header, every quoted cell closed (a quote left
  open at the end of the file is an error, not a cell running to the end), and cells of any
  length (the csv module's 128 KiB limit is lifted, as for URGE's response HTML).

A file holds one source at least. A text is valid Unicode and not blank (whitespace and
invisible format characters only); a line that is not UTF-8 is named.

A url given twice with different texts is an error (which one the engine read cannot be
told), and so are two spellings of one url (see below) with different texts; the same text
twice is fine. Urls match exactly, or failing that after lower-casing
the scheme and host and dropping a ``#fragment`` and a trailing ``/``. A link that already
has a text (from the log itself) keeps it; a blank one in the log (``"text": ""``) is no
text, and the side file's is attached.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from genir_eval.errors import InputError
from genir_eval.ingest.stream import csv_problem, lift_csv_field_limit
from genir_eval.paths import why_missing
from genir_eval.records import Session, is_blank
from genir_eval.unique_keys import RepeatedKey, unique_keys

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
                    data = json.loads(line, object_pairs_hook=unique_keys)
                except RepeatedKey as error:
                    raise InputError(str(error), path=str(path), line=number) from None
                except ValueError as error:
                    raise InputError(
                        f"not valid JSON: {error}", path=str(path), line=number
                    ) from None
                except RecursionError:
                    raise InputError(
                        "the JSON is nested too deeply to read", path=str(path), line=number
                    ) from None
                if not isinstance(data, dict):
                    raise InputError("expected a JSON object", path=str(path), line=number)
                yield number, "line", data.get("url"), data.get("text")
        return
    lift_csv_field_limit()
    with path.open(encoding="utf-8-sig", newline="") as stream:
        # strict: a quote left open at the end of the file is an error, not a cell
        reader = csv.DictReader(stream, restkey=_EXTRA, strict=True)
        try:
            columns = reader.fieldnames or []
        except csv.Error as error:
            raise InputError(
                f"not valid CSV: {csv_problem(error)}", path=str(path), row=1
            ) from None
        if not columns:
            return
        for needed in ("url", "text"):
            if needed not in columns:
                raise InputError(
                    f"the header has no {needed!r} column (found: {', '.join(columns) or 'none'})",
                    path=str(path),
                    row=1,
                )
            if columns.count(needed) > 1:
                raise InputError(
                    f"the header names column {needed!r} {columns.count(needed)} times",
                    path=str(path),
                    row=1,
                    column=needed,
                )
        rows = iter(reader)
        for number in itertools.count(2):
            start = reader.reader.line_num + 1
            try:
                row = next(rows)
            except StopIteration:
                return
            except csv.Error as error:
                raise InputError(
                    f"not valid CSV: {csv_problem(error)}", path=str(path), row=number, line=start
                ) from None
            if _EXTRA in row:
                raise InputError(
                    f"the row has {len(columns) + len(row[_EXTRA])} cells for "
                    f"{len(columns)} columns",
                    path=str(path),
                    row=number,
                )
            yield number, "row", row.get("url"), row.get("text")


_EXTRA = "\x00extra cells"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _first_bad_line(path: Path) -> tuple[int, str]:
    """The first line of ``path`` that is not UTF-8, and what is wrong with it."""
    with path.open("rb") as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                return number, (
                    f"not UTF-8 text: byte 0x{raw[error.start]:02x} at byte {error.start + 1} "
                    "of the line"
                )
    return 1, "not UTF-8 text"


def read_source_texts(path: str | Path) -> dict[str, str]:
    """``{url: text}`` from a JSONL or CSV side file (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(why_missing(path), path=str(path))
    texts: dict[str, str] = {}
    first: dict[str, int] = {}
    normal_first: dict[str, tuple[str, int]] = {}
    try:
        for number, kind, url, text in _rows(path):
            where = {"line": number} if kind == "line" else {"row": number}
            if not isinstance(url, str) or not url.strip():
                raise InputError("required: a non-empty url", path=str(path), column="url", **where)
            if not isinstance(text, str):
                raise InputError(
                    "required: the source's text", path=str(path), column="text", **where
                )
            if is_blank(text):
                # an empty text would be attached to nothing without a word
                raise InputError(
                    "the source's text is empty (leave the url out)",
                    path=str(path),
                    column="text",
                    **where,
                )
            if _SURROGATE.search(url + text):
                raise InputError(
                    "holds an unpaired surrogate; it is not valid Unicode text",
                    path=str(path),
                    column="url" if _SURROGATE.search(url) else "text",
                    **where,
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
            normal = normalise_url(url)
            same = normal_first.get(normal)
            if same is not None and same[0] != url and texts[same[0]] != text:
                raise InputError(
                    f"url {url!r} is the page {same[0]!r} (first at {kind} {same[1]}) up to "
                    "the case of its scheme and host, a trailing '/' or a #fragment, with "
                    "a different text",
                    path=str(path),
                    column="url",
                    **where,
                )
            texts.setdefault(url, text)
            first.setdefault(url, number)
            normal_first.setdefault(normal, (url, number))
    except UnicodeDecodeError:
        number, message = _first_bad_line(path)
        raise InputError(message, path=str(path), line=number) from None
    if not texts:
        # an empty file (or a header alone) would attach nothing without a word
        raise InputError("the file holds no source texts (url and text)", path=str(path))
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
                if not link.has_text and text is not None:
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
        return sum(1 for s in items for t in s.turns for lk in t.links if lk.has_text)

    return out, with_text(out) - with_text(given)
