"""Reading a log file one session at a time, every problem a located error.

Each reader is a generator of :class:`~genir_eval.records.Session` records and
:class:`~genir_eval.errors.InputError` values (a session that could not be read, located by
file, row or line, and column or field). :class:`SessionStream` turns that into what callers
use: an iterator of sessions that raises the first error, or with ``skip_invalid`` keeps it
in :attr:`SessionStream.skipped` and goes on. Nothing is held but the session being read, so
memory does not grow with the file.

:class:`Lines` reads a file as UTF-8 line by line, so a byte that is not UTF-8 is an error
of its line (and only of the session that line belongs to), never of the whole file.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from genir_eval.errors import InputError
from genir_eval.hashes import HashIndex
from genir_eval.ingest.validate import id_as_read
from genir_eval.records import Session

__all__ = ["Lines", "SessionStream", "SeenIds", "unexpected", "lift_csv_field_limit", "csv_problem"]


def lift_csv_field_limit() -> None:
    """Let the csv module read cells of any length: a response's HTML or a source page is
    often longer than its default limit of 131,072 characters."""
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))


def csv_problem(error: csv.Error) -> str:
    """What ``error`` of a strict ``csv.reader`` (every CSV reader of genir-eval is strict: a
    quote left open at the end of the file, or text after a closing quote, is an error of
    its row, not a cell running on to the end of the file) means, for a located message."""
    if "unexpected end of data" in str(error):
        return "a quoted cell starting in this row is not closed before the end of the file"
    return str(error)


class Lines:
    """The lines of a UTF-8 file, decoded one by one (a leading BOM is dropped).

    Iterating yields each line with its line break, as ``csv.reader`` wants it. A line that
    is not UTF-8 is yielded with the bad bytes replaced (U+FFFD), and :attr:`bad` maps its
    number to the decoding problem, for the reader to turn into an error of the session
    holding it. :attr:`number` is the number of the line yielded last.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.number = 0
        self.bad: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        for raw in self._stream:
            self.number += 1
            if self.number == 1:
                if raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                elif raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
                    # a byte-order mark of UTF-16 or UTF-32: say so, not "byte 0xff"
                    self.bad[1] = (
                        "the file is UTF-16 or UTF-32 text (it opens with that byte-order "
                        "mark); save it as UTF-8"
                    )
                    yield raw.decode("utf-8", errors="replace")
                    continue
                elif b"\r" in raw and not raw.endswith(b"\n") and raw.count(b"\r") > 1:
                    self.bad[1] = (
                        "the file breaks its lines with a carriage return alone (CR); save it "
                        "with LF or CRLF line breaks"
                    )
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as error:
                self.bad[self.number] = (
                    f"not UTF-8 text: byte 0x{raw[error.start]:02x} at byte {error.start + 1} "
                    "of the line"
                )
                yield raw.decode("utf-8", errors="replace")

    def first_bad(self, first: int, last: int) -> tuple[int, str] | None:
        """The first undecodable line from ``first`` to ``last`` (inclusive), if any."""
        if not self.bad:
            return None
        for number in range(first, last + 1):
            if number in self.bad:
                return number, self.bad[number]
        return None

    def forget(self, before: int) -> None:
        """Drop the records of bad lines before ``before``: they are reported already."""
        if not self.bad:
            return
        for number in [n for n in self.bad if n < before]:
            del self.bad[number]


class SeenIds:
    """Session ids met so far, to refuse a repeated one, in 24 to 48 bytes an id.

    Ids are compared as they read (:func:`~genir_eval.ingest.validate.id_as_read`): an id
    that differs from an earlier one only in invisible characters or its Unicode form is a
    repeat too. Keeps 64-bit hashes (never the id's text) with the line or row each id was
    first met on, in a :class:`~genir_eval.hashes.HashIndex`, so a million sessions take 48
    MB at most. Two different ids sharing a hash, the price of not keeping the text, is a
    chance of about 1 in 30 million in a file of a million sessions.
    """

    def __init__(self) -> None:
        self._seen = HashIndex()

    def check(self, session_id: str, where: int = 0) -> None:
        """Refuse ``session_id`` when an earlier id reads the same; ``where`` is its line or
        row, named in the error a later repeat gets."""
        earlier = self._seen.setdefault(hash(id_as_read(session_id)), where, hash(session_id))
        if earlier is None:
            return
        first, exact = earlier
        there = f"line {first}" if first else "an earlier session"
        if exact == hash(session_id):
            message = f"duplicate session id {session_id!r} ({there} has it)"
        else:
            message = (
                f"duplicate session id {session_id!r}: it reads the same as the id on {there}, "
                "from which it differs only in invisible characters, spacing or Unicode form"
            )
        raise InputError(message, column="session_id")


def unexpected(error: BaseException) -> str:
    """The message of an exception no rule of a reader foresaw, as one line."""
    if isinstance(error, RecursionError):
        return "the data is nested too deeply to read"
    if isinstance(error, MemoryError):
        return "the data is too large to hold in memory"
    text = " ".join(str(error).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"cannot read it ({type(error).__name__}: {text})"


class SessionStream(Iterator[Session]):
    """Sessions of one file in file order, read as they are asked for.

    Raises the first :class:`InputError` met, or with ``skip_invalid`` collects it in
    :attr:`skipped` (in file order) and goes on. A file that holds no session at all, valid
    or not, is an error in every format. Counts of what was read so far are in
    :attr:`count` and :attr:`skipped`.
    """

    def __init__(
        self,
        items: Iterator[Session | InputError],
        *,
        path: str | Path,
        format: str,
        skip_invalid: bool = False,
    ) -> None:
        self._items = items
        self.path = str(path)
        self.format = format
        self.skip_invalid = skip_invalid
        self.skipped: list[InputError] = []
        self.count = 0
        self._done = False

    def __iter__(self) -> SessionStream:
        return self

    def map(self, change: Callable[[Session], Session]) -> SessionStream:
        """Apply ``change`` to every session as it is read (errors pass through); returns
        this stream."""
        items = self._items

        def changed() -> Iterator[Session | InputError]:
            try:
                for item in items:
                    yield item if isinstance(item, InputError) else change(item)
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    close()

        self._items = changed()
        return self

    def __next__(self) -> Session:
        if self._done:
            raise StopIteration
        for item in self._items:
            if isinstance(item, InputError):
                if not self.skip_invalid:
                    self._finish()
                    raise item
                self.skipped.append(item)
                continue
            self.count += 1
            return item
        self._finish()
        if not self.count and not self.skipped:
            raise InputError("the file holds no sessions", path=self.path)
        raise StopIteration

    def _finish(self) -> None:
        self._done = True
        close = getattr(self._items, "close", None)
        if close is not None:
            close()

    def close(self) -> None:
        """Stop reading and release the file (also done at the end and on an error)."""
        self._finish()

    def __enter__(self) -> SessionStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
