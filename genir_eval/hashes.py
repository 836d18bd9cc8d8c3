"""A set of 64-bit hashes in 8 to 16 bytes an entry.

What a run must remember of every session or judgment it has met (a session id, to refuse
a repeated one; a judgment's key, to know whether the journal holds it) grows with the
run. A Python ``set`` of ints takes about 60-90 bytes an entry (the int object and its
slot), 60 MB or more for a million judgments; :class:`HashSet` keeps only the hashes, in an
open-addressing table with linear probing (Knuth, TAOCP vol. 3, section 6.4, algorithm L)
held in one ``array`` of 64-bit integers and doubled when half full.

The price of keeping hashes instead of the texts is that two different texts may share a
hash: the caller decides what that means (a false "seen", to be checked against the text
where it matters).
"""

from __future__ import annotations

from array import array

__all__ = ["HashSet", "HashIndex"]

_EMPTY = 0  # marks a free slot; a hash of 0 is stored as 1


class HashSet:
    """64-bit integers (a ``hash()`` of a text), added and looked up in O(1) on average."""

    __slots__ = ("_slots", "_mask", "_count")

    def __init__(self) -> None:
        self._slots = array("q", bytes(8 * 1024))
        self._mask = 1023
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: int) -> bool:
        key = key or 1
        slots, mask = self._slots, self._mask
        slot = key & mask
        while True:
            held = slots[slot]
            if held == _EMPTY:
                return False
            if held == key:
                return True
            slot = (slot + 1) & mask

    def add(self, key: int) -> bool:
        """Add ``key``; ``False`` when it was there already."""
        if not self._insert(key or 1):
            return False
        self._count += 1
        if 2 * self._count > self._mask:
            old = self._slots
            self._slots = array("q", bytes(16 * len(old)))
            self._mask = 2 * len(old) - 1
            for held in old:
                if held != _EMPTY:
                    self._insert(held)
        return True

    def _insert(self, key: int) -> bool:
        slots, mask = self._slots, self._mask
        slot = key & mask
        while True:
            held = slots[slot]
            if held == _EMPTY:
                slots[slot] = key
                return True
            if held == key:
                return False
            slot = (slot + 1) & mask


class HashIndex:
    """64-bit integers, each with two 64-bit values kept beside it (:class:`HashSet`'s table
    with two more arrays): 24 to 48 bytes an entry. Used to say where a key was first met."""

    __slots__ = ("_slots", "_first", "_second", "_mask", "_count")

    def __init__(self) -> None:
        self._slots = array("q", bytes(8 * 1024))
        self._first = array("q", bytes(8 * 1024))
        self._second = array("q", bytes(8 * 1024))
        self._mask = 1023
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def setdefault(self, key: int, first: int, second: int) -> tuple[int, int] | None:
        """Add ``key`` with its two values; when it was there already, its values instead
        (the table is left as it was)."""
        key = key or 1
        slots, mask = self._slots, self._mask
        slot = key & mask
        while True:
            held = slots[slot]
            if held == _EMPTY:
                break
            if held == key:
                return self._first[slot], self._second[slot]
            slot = (slot + 1) & mask
        slots[slot] = key
        self._first[slot] = first
        self._second[slot] = second
        self._count += 1
        if 2 * self._count > self._mask:
            self._grow()
        return None

    def _grow(self) -> None:
        old = (self._slots, self._first, self._second)
        size = 2 * len(old[0])
        self._slots, self._first, self._second = (array("q", bytes(8 * size)) for _ in range(3))
        self._mask = size - 1
        self._count = 0
        for held, first, second in zip(*old, strict=True):
            if held != _EMPTY:
                self.setdefault(held, first, second)
