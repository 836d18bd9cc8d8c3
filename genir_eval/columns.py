"""Texts kept as one growing column: the UTF-8 bytes of all of them in one buffer and
where each ends in an ``array`` of 64-bit integers, so a million short ids take their
length plus 8 bytes each rather than a Python ``str`` apiece (about 50 bytes more) and a
list slot."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

__all__ = ["TextColumn"]


class TextColumn:
    """An append-only list of texts."""

    __slots__ = ("_data", "_ends")

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends: array[int] = array("q")

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int) -> str:
        n = len(self._ends)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"text {i} of {n}")
        start = self._ends[i - 1] if i > 0 else 0
        return self._data[start : self._ends[i]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        start = 0
        for end in self._ends:
            yield self._data[start:end].decode("utf-8", "surrogatepass")
            start = end
