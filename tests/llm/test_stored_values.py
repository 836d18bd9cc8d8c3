"""What the engine keeps and reads back is checked like a fresh reply (issues 23 and 25).

- The engine's own redaction: a provider of no SDK (it redacts nothing itself) raising an
  error that carries its key; the Failure and the journal hold no key.
- Journal rows edited after the run (a label of 7 or -5.5, another type, another judge's
  columns, a raw reply that no longer parses) are never resumed: the judgment is asked again,
  and the rejection is counted.
- Cache rows edited or damaged (text of another type, negative tokens, inputs of another
  request, unreadable log-probabilities) are never used: asked again and stored anew.
- A journal of another layout (a Ray run with another worker count, a local run) answers a
  resume, so the work it holds is not paid again.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import make_request

from genir_eval.judges.base import JudgeStats, ask
from genir_eval.judges.parsing import ReplyError
from genir_eval.llm import Cache, Engine, GenerateConfig, Journal, JudgmentKey, Message
from genir_eval.llm.config import EngineConfig
from genir_eval.llm.providers.base import Completion, Failure, Provider, ProviderError
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.testing import FakeLLMServer

KEY = "sk-live-0123456789abcdefghijklmnop"


class _LeakyProvider(Provider):
    """A provider of no SDK: its errors carry the key, and it redacts nothing itself."""

    name = "leaky"

    def __init__(self, error: BaseException) -> None:
        self.model = "m"
        self.error = error
        self._set_secrets(KEY)

    async def generate(self, messages, config, *, request=None):  # type: ignore[no-untyped-def]
        raise self.error


@pytest.mark.parametrize(
    "error",
    [
        ProviderError(f"401: invalid key {KEY}", error_class="permanent", status=401),
        ProviderError(f"upstream said: Bearer {KEY[:20]}", error_class="permanent"),
        RuntimeError(f"cannot connect to https://user:{KEY}@example.invalid/v1"),
        ValueError(f"bad header value {KEY[-12:]}"),
    ],
)
def test_the_engine_redacts_what_a_provider_did_not(tmp_path: Path, error: BaseException) -> None:
    async def go() -> tuple[Any, list[Any]]:
        journal = Journal(tmp_path / "j.sqlite")
        engine = Engine(
            _LeakyProvider(error), EngineConfig(max_attempts=1), journal=journal, quiet=True
        )
        request = make_request(1)
        result = await engine.complete(request)
        await engine.record(request, result)
        # a reply the judge could not use, whose reason quotes the key
        await engine.record(
            request, Completion("x"), failure=Failure("permanent", f"reply echoed {KEY}")
        )
        entries = journal.entries()
        await engine.aclose()
        journal.close()
        return result, entries

    result, entries = asyncio.run(go())
    assert isinstance(result, Failure)
    assert "[redacted]" in result.message
    stored = json.dumps([e.error_message for e in entries])
    for part in (KEY, KEY[:20], KEY[-12:]):
        assert part not in result.message and part not in stored
    assert "[redacted]" in stored


# -- journal rows ----------------------------------------------------------------------------


def _parse(text: str) -> int:
    """A judge's parse: an integer label from 0 to 3."""
    try:
        value = json.loads(text)["label"]
    except (ValueError, KeyError, TypeError):
        raise ReplyError("not a label object") from None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
        raise ReplyError(f"label {value!r} is not 0-3")
    return value


def _ask_all(
    server: FakeLLMServer, journal_path: Path, n: int, earlier: Sequence[Path] = ()
) -> tuple[list[Any], JudgeStats]:
    stats = JudgeStats()

    async def go() -> list[Any]:
        journal = Journal(journal_path, earlier=earlier)
        provider = OpenAIProvider(
            model="fake-model", base_url=server.openai_base_url, api_key=server.api_key
        )
        engine = Engine(provider, journal=journal, quiet=True, backoff_base=0.01)
        try:
            return [
                await ask(
                    engine,
                    JudgmentKey("s", 1, f"link:{i}", "judge", "v1"),
                    (Message("user", f"rate link {i}"),),
                    GenerateConfig(model="fake-model"),
                    "t",
                    None,
                    _parse,
                    stats=stats,
                )
                for i in range(n)
            ]
        finally:
            await engine.aclose()
            journal.close()

    return asyncio.run(go()), stats


def _reply(request: Any) -> str:
    return '{"label": 2}'


# (column edits, the SQL that makes them): each a row a resume must not use as it is
JOURNAL_EDITS = [
    ("value = json_set(value, '$.value', 7)", "a label above the scale"),
    ("value = json_set(value, '$.value', -5.5)", "a negative label"),
    ("value = json_set(value, '$.value', 'three')", "a label of another type"),
    ("value = json_set(value, '$.value', json('[1, 2]'))", "a list"),
    ("value = json_set(value, '$.value', 1)", "a label its raw reply does not say"),
    ("value = '5'", "a bare number out of range"),
    ("raw = '{\"label\": 9}', value = json_set(value, '$.value', 9)", "raw and value edited"),
    ("raw = 'garbage'", "a raw reply that does not parse"),
    ("raw = NULL", "no raw reply"),
    ("raw = 7", "a raw reply of another type"),
]
# a row whose columns name another judgment than its key: not this judgment's row at all
OTHER_ROWS = [
    ("judge = 'other'", "another judge's columns"),
    ("item = 'link:99'", "another item's columns"),
    ("session_id = 'x'", "another session's columns"),
    ("repeat = 3", "another repeat's columns"),
    ("status = 'failed'", "a failed row"),
    ("fingerprint = 'f00'", "another request's row"),
]


@pytest.mark.parametrize(("edit", "what"), JOURNAL_EDITS)
def test_an_edited_journal_row_is_asked_again(tmp_path: Path, edit: str, what: str) -> None:
    path = tmp_path / "journal.sqlite"
    with FakeLLMServer(reply=_reply) as server:
        first, _ = _ask_all(server, path, 3)
        assert [label.value for label in first] == [2, 2, 2]
        with sqlite3.connect(path) as conn:
            conn.execute(f"UPDATE journal SET {edit} WHERE item = 'link:1'")
        calls_before = server.stats.total
        again, stats = _ask_all(server, path, 3)
        calls = server.stats.total - calls_before
    # the edited row is never used: every label is the reply's own 2
    assert [label.value for label in again] == [2, 2, 2], what
    assert stats.journal_rejected == 1 and stats.reused == 2, what
    # the two good rows cost nothing; the bad one was asked again (from its raw reply when
    # that still parses, else from the provider)
    assert calls <= 2, what


@pytest.mark.parametrize(("edit", "what"), OTHER_ROWS)
def test_a_row_of_another_judgment_is_not_resumed(tmp_path: Path, edit: str, what: str) -> None:
    path = tmp_path / "journal.sqlite"
    with FakeLLMServer(reply=_reply) as server:
        _ask_all(server, path, 3)
        with sqlite3.connect(path) as conn:
            conn.execute(f"UPDATE journal SET {edit} WHERE item = 'link:1'")
        calls_before = server.stats.total
        again, stats = _ask_all(server, path, 3)
        calls = server.stats.total - calls_before
    assert [label.value for label in again] == [2, 2, 2], what
    assert stats.reused == 2 and calls == 1, what


def test_an_untouched_journal_resumes_without_a_call(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with FakeLLMServer(reply=_reply) as server:
        _ask_all(server, path, 4)
        before = server.stats.total
        labels, stats = _ask_all(server, path, 4)
        assert server.stats.total == before
    assert stats.reused == 4 and stats.journal_rejected == 0
    assert all(label.extra.get("resumed") for label in labels)


# -- cache rows ------------------------------------------------------------------------------


CACHE_EDITS = [
    ("text = x'00ff'", "its reply is a bytes, not text"),
    ("input_tokens = -3", "its input_tokens -3 is not a whole number >= 0"),
    ("output_tokens = 'many'", "its output_tokens 'many'"),
    ("output_tokens = 1.5", "its output_tokens 1.5"),
    ("latency_s = 'slow'", "its latency 'slow' is not a number"),
    ("inputs = replace(inputs, 'item 1', 'item 2')", "do not hash to its key"),
    ("model = 'other-model'", "its provider and model are not those of its inputs"),
    ("logprobs = '[[\"a\"]]'", "a stored field does not read back"),
    ("logprobs = '[[\"a\", 0.5, []]]'", "a log-probability 0.5 is not a number <= 0"),
]


@pytest.mark.parametrize(("edit", "words"), CACHE_EDITS)
def test_an_edited_cache_row_is_asked_again(tmp_path: Path, edit: str, words: str) -> None:
    path = tmp_path / "cache.sqlite"

    async def once(server: FakeLLMServer, mode: str = "read-write") -> tuple[Any, Engine]:
        cache = Cache(path, mode=mode)  # type: ignore[arg-type]
        provider = OpenAIProvider(
            model="fake-model", base_url=server.openai_base_url, api_key=server.api_key
        )
        engine = Engine(provider, cache=cache, quiet=True, backoff_base=0.01)
        try:
            return await engine.complete(make_request(1)), engine
        finally:
            await engine.aclose()
            cache.close()

    with FakeLLMServer(reply=lambda request: "the reply") as server:
        asyncio.run(once(server))
        with sqlite3.connect(path) as conn:
            conn.execute(f"UPDATE cache SET {edit}")
        # replay mode: the bad row is not an answer, and the failure says why
        replayed, _ = asyncio.run(once(server, "replay"))
        assert isinstance(replayed, Failure) and replayed.error_class == "cache_miss"
        assert words in replayed.message
        with sqlite3.connect(path) as conn:  # the replay removed it: edit a fresh one
            assert conn.execute("SELECT COUNT(*) FROM cache").fetchone()[0] == 0
        asyncio.run(once(server))
        with sqlite3.connect(path) as conn:
            conn.execute(f"UPDATE cache SET {edit}")
        before = server.stats.total
        result, engine = asyncio.run(once(server))
        assert server.stats.total == before + 1  # asked again
        assert isinstance(result, Completion) and result.text == "the reply"
        assert engine.errors_seen["cache: bad row asked again"] == 1
        # stored anew: the next run is a hit, no call
        hit, engine = asyncio.run(once(server))
        assert server.stats.total == before + 1 and isinstance(hit, Completion) and hit.cached


# -- journals of another layout --------------------------------------------------------------


@pytest.mark.parametrize("layout", ["journal.shard-0-of-2.sqlite", "journal.sqlite"])
def test_a_journal_of_another_layout_answers_a_resume(tmp_path: Path, layout: str) -> None:
    """A Ray run resumed with another --ray-workers opens new shard files: the old ones still
    answer, so only what no journal holds is paid for."""
    old = tmp_path / layout
    with FakeLLMServer(reply=_reply) as server:
        _ask_all(server, old, 5)
        before = server.stats.total
        labels, stats = _ask_all(server, tmp_path / "journal.shard-1-of-3.sqlite", 7, [old])
        calls = server.stats.total - before
    assert [label.value for label in labels] == [2] * 7
    assert stats.reused == 5 and calls == 2  # only the two judgments no journal held


def test_earlier_journals_are_found_by_layout(tmp_path: Path) -> None:
    from genir_eval.runner.executor import Group, earlier_journals

    group = Group(provider="openai", model="m", base_url=None, notice=None, specs=[])
    for name in (
        "journal.sqlite",
        "journal.shard-0-of-2.sqlite",
        "journal.shard-1-of-2.sqlite",
        "journal.shard-0-of-3.sqlite",
        "journal.shard-2-of-3.sqlite",
        "journal.shard-x-of-3.sqlite",
        "journal.shard-0-of-2.openai.other.sqlite",
        "notes.sqlite",
    ):
        (tmp_path / name).write_bytes(b"")
    names = lambda tag: [p.name for p in earlier_journals(tmp_path, group, 1, tag)]  # noqa: E731
    # a shard of 3 reads the local journal and the 2-worker shards, not its 3-worker siblings
    assert names("shard-1-of-3") == [
        "journal.sqlite",
        "journal.shard-0-of-2.sqlite",
        "journal.shard-1-of-2.sqlite",
    ]
    # a local run reads every shard
    assert names(None) == [
        "journal.shard-0-of-2.sqlite",
        "journal.shard-0-of-3.sqlite",
        "journal.shard-1-of-2.sqlite",
        "journal.shard-2-of-3.sqlite",
    ]
