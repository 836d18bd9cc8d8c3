"""The journal's memory does not grow with the replies: it keeps the recorded keys' hashes
and the last RECENT entries, and reads any other recorded entry back from SQLite whole."""

from __future__ import annotations

import asyncio
from pathlib import Path

from genir_eval.llm import Failure, Journal, JudgmentKey
from genir_eval.llm.store.journal import RECENT


def _key(i: int) -> JudgmentKey:
    return JudgmentKey(f"s{i}", 1, f"link:{i % 7}", "link_usefulness.dna", "v1")


async def _fill(journal: Journal, n: int) -> None:
    for start in range(0, n, 500):
        await asyncio.gather(
            *(
                journal.record(
                    _key(i),
                    value={"label": i % 4},
                    raw=f"reply {i} " + "x" * 200,
                    fingerprint=f"fp{i}",
                )
                if i % 10
                else journal.record(_key(i), failure=Failure("timeout", f"no reply {i}", 3))
                for i in range(start, min(n, start + 500))
            )
        )


def test_old_entries_leave_memory_and_come_back_whole(tmp_path: Path) -> None:
    n = RECENT * 3
    with Journal(tmp_path / "journal.sqlite") as journal:
        asyncio.run(_fill(journal, n))
        assert len(journal._recent) == RECENT  # bounded, whatever n
        first = journal.get(_key(1))  # recorded first: read back from the table
        assert first is not None and first.ok
        assert (first.value, first.raw, first.fingerprint) == (
            {"label": 1},
            "reply 1 " + "x" * 200,
            "fp1",
        )
        failed = journal.get(_key(10))
        assert failed is not None and not failed.ok
        assert (failed.error_class, failed.error_message, failed.attempts) == (
            "timeout",
            "no reply 10",
            3,
        )
        assert journal.get(JudgmentKey("s1", 2, "link:1", "link_usefulness.dna", "v1")) is None
        assert len(journal) == n
        failed_count = sum(1 for i in range(n) if i % 10 == 0)
        assert journal.counts() == {"ok": n - failed_count, "failed": failed_count}
        assert len(journal.entries()) == n
        assert len(journal._recent) <= RECENT


def test_a_reopened_journal_keeps_only_hashes_and_answers_every_key(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal(path) as journal:
        asyncio.run(_fill(journal, 50))
    with Journal(path) as journal:
        assert len(journal._known) == 50 and not journal._recent
        for i in range(50):
            entry = journal.get(_key(i))
            assert entry is not None and entry.key == _key(i) and entry.ok == bool(i % 10)
        assert journal.get(_key(50)) is None


def test_an_unknown_key_is_answered_without_reading_the_file(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.sqlite") as journal:
        asyncio.run(_fill(journal, 20))
        reads: list[object] = []
        original = journal._worker.run_sync

        def counting(fn, **kwargs):  # type: ignore[no-untyped-def]
            reads.append(fn)
            return original(fn, **kwargs)

        journal._worker.run_sync = counting  # type: ignore[method-assign]
        assert all(journal.get(_key(i)) is None for i in range(100, 200))
        assert reads == []
