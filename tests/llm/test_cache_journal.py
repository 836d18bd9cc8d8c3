"""The cache and the journal: nothing lost, nothing paid twice."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.cli import main as cli_main
from genir_eval.llm import (
    Completion,
    Engine,
    Failure,
    GenerateConfig,
    Journal,
    JudgmentKey,
    OfflineProvider,
    cache_key,
    register_offline,
)
from genir_eval.llm.providers import offline
from genir_eval.testing import FakeLLMServer

HERE = Path(__file__).resolve().parent


def _run(server: FakeLLMServer, n: int, **kwargs: object) -> list[Completion | Failure]:
    async def go() -> list[Completion | Failure]:
        async with openai_engine(server, **kwargs) as engine:  # type: ignore[arg-type]
            return list(await asyncio.gather(*(engine.complete(make_request(i)) for i in range(n))))

    return asyncio.run(go())


def test_second_run_is_served_from_the_cache(server: FakeLLMServer, tmp_path: Path) -> None:
    db = tmp_path / "cache.sqlite"
    first = _run(server, 20, cache_path=db)
    assert server.stats.total == 20
    second = _run(server, 20, cache_path=db)
    assert server.stats.total == 20
    assert [r.text for r in second if isinstance(r, Completion)] == [
        r.text for r in first if isinstance(r, Completion)
    ]
    assert all(isinstance(r, Completion) and r.cached for r in second)


def test_replay_mode_fails_on_a_miss_without_calling(server: FakeLLMServer, tmp_path: Path) -> None:
    db = tmp_path / "cache.sqlite"
    _run(server, 3, cache_path=db)
    calls = server.stats.total

    async def go() -> list[Completion | Failure]:
        async with openai_engine(server, cache_path=db, cache_mode="replay") as engine:
            return [await engine.complete(make_request(i)) for i in range(5)]

    results = asyncio.run(go())
    assert server.stats.total == calls
    assert [type(r).__name__ for r in results] == ["Completion"] * 3 + ["Failure"] * 2
    assert all(r.error_class == "cache_miss" for r in results if isinstance(r, Failure))


def test_key_covers_outputs_and_nothing_else() -> None:
    base = make_request(1)
    key = cache_key("openai", "http://h/v1", base)[0]
    # Same output-determining inputs -> same key (other judgment coordinates do not count).
    moved = replace(base, key=replace(base.key, session_id="other", item="x"), task="other")
    assert cache_key("openai", "http://h/v1/", moved)[0] == key
    assert cache_key("openai", "http://user:pw@h/v1", base)[0] == key
    changed = [
        cache_key("anthropic", "http://h/v1", base)[0],
        cache_key("openai", "http://other/v1", base)[0],
        cache_key("openai", "http://h/v1", make_request(2))[0],
        cache_key("openai", "http://h/v1", make_request(1, temperature=0.5))[0],
        cache_key("openai", "http://h/v1", make_request(1, max_tokens=5))[0],
        cache_key("openai", "http://h/v1", make_request(1, logprobs=True))[0],
        cache_key("openai", "http://h/v1", make_request(1, response_format="json"))[0],
        cache_key("openai", "http://h/v1", make_request(1, repeat=1))[0],
        cache_key(
            "openai", "http://h/v1", replace(base, key=replace(base.key, prompt_version="v2"))
        )[0],
        cache_key("openai", "http://h/v1", replace(base, config=GenerateConfig(model="other")))[0],
    ]
    assert key not in changed
    assert len(set(changed)) == len(changed)


def test_api_key_never_reaches_the_cache_file(tmp_path: Path) -> None:
    secret = "sk-SECRET-do-not-store-4242"
    db = tmp_path / "cache.sqlite"
    with FakeLLMServer(api_key=secret) as server:
        results = _run(server, 5, cache_path=db, journal_path=db)
    assert all(isinstance(r, Completion) for r in results)
    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes(), path


def test_two_processes_write_one_cache(tmp_path: Path) -> None:
    db = tmp_path / "cache.sqlite"
    n = 400
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "cache_writer.py"), str(db), name, str(n)], env=env
        )
        for name in ("a", "b")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = dict(
            conn.execute("SELECT provider, COUNT(*) FROM cache GROUP BY provider").fetchall()
        )
    finally:
        conn.close()
    assert rows == {"provider-a": n, "provider-b": n, "provider-shared": n}


def test_journal_records_and_resumes(server: FakeLLMServer, tmp_path: Path) -> None:
    db = tmp_path / "journal.sqlite"

    async def go() -> None:
        async with openai_engine(server, journal_path=db) as engine:
            ok = make_request(1)
            result = await engine.complete(ok)
            await engine.record(ok, result, value={"label": 2})
            failed = make_request(2)
            await engine.record(failed, Failure("transient", "boom", attempts=6))

    asyncio.run(go())
    with Journal(db) as journal:
        entry = journal.get(make_request(1).key)
        assert entry is not None and entry.ok and entry.value == {"label": 2}
        assert entry.raw == "reply to judge item 1"
        failed = journal.get(make_request(2).key)
        assert failed is not None and failed.status == "failed"
        assert (failed.error_class, failed.error_message, failed.attempts) == (
            "transient",
            "boom",
            6,
        )
        assert journal.get(JudgmentKey("s9", None, "x", "j", "v1")) is None
    calls = server.stats.total

    async def again() -> None:
        async with openai_engine(server, journal_path=db) as engine:
            assert engine.resume(make_request(1)) is not None
            assert engine.resume(make_request(2)) is None  # failed rows are retried
            assert engine.resume(make_request(1, temperature=0.7)) is None  # another request
            result = await engine.complete(make_request(1))
            assert isinstance(result, Completion) and result.cached
            assert engine.stats()["journal_hits"] == 1

    asyncio.run(again())
    assert server.stats.total == calls


@pytest.mark.slow
def test_resume_after_kill_repeats_no_done_judgment(tmp_path: Path) -> None:
    db = tmp_path / "run.sqlite"
    n = 120
    with FakeLLMServer(reply=lambda r: f"reply to {r.last_user_text}", latency=0.02) as server:
        argv = [
            sys.executable,
            str(HERE / "resume_worker.py"),
            server.openai_base_url,
            server.api_key,
            str(db),
            str(n),
        ]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        done = 0
        deadline = time.monotonic() + 30
        while done < 40 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            done += line.startswith("done")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        assert done >= 40
        with Journal(db) as journal:
            journaled = {e.key.item for e in journal.entries() if e.ok}
        assert 40 <= len(journaled) < n
        first_calls = server.stats.total
        assert first_calls < n

        second = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        assert second.stdout.count("done") == n - len(journaled)
        counts = server.stats.by_prompt
        for i in range(n):
            prompt = f"judge item {i}"
            # A judgment journaled before the kill is never asked again; one in flight at the
            # kill may be asked twice.
            assert counts[prompt] == 1 or f"item{i}" not in journaled, prompt
        assert server.stats.total <= n + 4  # at most the 4 in flight at the kill are repeated

        third = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        assert "done" not in third.stdout and "calls 0" in third.stdout
        assert server.stats.total == sum(counts.values())


def test_cache_cli_stats_and_show(server: FakeLLMServer, tmp_path: Path, capsys: object) -> None:
    db = tmp_path / "cache.sqlite"
    _run(server, 3, cache_path=db)
    _run(server, 3, cache_path=db)
    assert cli_main(["cache", "stats", "--cache", str(db)]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "3 rows" in out
    assert "hits 0, misses 3" in out and "hits 3, misses 0" in out
    key = cache_key("openai", server.openai_base_url, make_request(0))[0]
    assert cli_main(["cache", "show", key[:12], "--cache", str(db)]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert '"text": "reply to judge item 0"' in out
    assert '"prompt_version": "v1"' in out
    assert cli_main(["cache", "show", "ffffffffffff", "--cache", str(db)]) == 2
    assert cli_main(["cache", "stats", "--cache", str(tmp_path / "missing.sqlite")]) == 2


def test_provider_version_enters_the_key_only_when_set() -> None:
    request = make_request(1)
    # An empty version leaves every existing key as it was (no new field in the inputs).
    assert cache_key("openai", "http://h/v1", request, version="") == cache_key(
        "openai", "http://h/v1", request
    )
    assert "provider_version" not in cache_key("openai", "http://h/v1", request)[1]
    one = cache_key("offline", None, request, version="aaaa")[0]
    assert one != cache_key("offline", None, request, version="bbbb")[0]
    assert one != cache_key("offline", None, request)[0]


def test_offline_version_hashes_the_twins_code() -> None:
    import genir_eval.judges  # noqa: F401 - registers the offline twins

    version = offline.code_version()
    assert len(version) == 16 and offline.code_version() is version  # computed once, reused
    parts = offline.version_parts()
    assert OfflineProvider().version == offline.code_version(parts)
    modules = frozenset(h.__module__ for h in offline._HANDLERS.values())
    files = {p.name for p in offline._code_files(modules)}
    # each twin's module and what it calls (features, lexical scores), the records it reads
    assert {"offline.py", "twins.py", "citations.py", "features.py", "lexical.py"} <= files
    assert "records.py" in files and "engine.py" not in files


def test_journal_row_of_another_offline_version_is_not_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline twins' code decides their labels: a row journaled under one version of that
    # code must not be resumed under another (a stale label), and is resumed under the same.
    register_offline("versioned.twin", lambda request: "label")
    request = make_request(3, task="versioned.twin")
    journal = tmp_path / "journal.sqlite"

    async def judge(version: str) -> tuple[Completion | Failure, bool, int]:
        monkeypatch.setattr(offline, "code_version", lambda *parts: version)
        async with Engine(OfflineProvider(), journal=Journal(journal)) as engine:
            resumed = engine.resume(request) is not None
            result = await engine.complete(request)
            await engine.record(request, result, value={"label": 1})
            return result, resumed, engine.journal_hits

    first, resumed, hits = asyncio.run(judge("twins-v1"))
    assert isinstance(first, Completion) and not first.cached and not resumed and hits == 0
    same, resumed, hits = asyncio.run(judge("twins-v1"))
    assert isinstance(same, Completion) and same.cached and resumed and hits == 1
    changed, resumed, hits = asyncio.run(judge("twins-v2"))
    assert isinstance(changed, Completion) and not changed.cached and not resumed and hits == 0
    with Journal(journal) as rows:
        (entry,) = rows.entries()
    assert entry.fingerprint == cache_key("offline", None, request, version="twins-v2")[0]


def test_offline_version_changes_with_the_evidence_the_twins_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Labels the twins wrote from semantic evidence must not be resumed by a run that reads
    # lexical evidence (the extra removed, or forced off), nor the other way round.
    import genir_eval.judges  # noqa: F401 - registers the twins and their evidence part
    from genir_eval.judges.offline.semantic import evidence_name

    monkeypatch.setenv("GENIR_EVAL_OFFLINE_EVIDENCE", "lexical")
    lexical = OfflineProvider().version
    assert evidence_name() == "lexical" and "lexical" in offline.version_parts()
    monkeypatch.setenv("GENIR_EVAL_OFFLINE_EVIDENCE", "semantic")
    other = OfflineProvider().version
    assert (other != lexical) == (evidence_name() != "lexical")
    assert OfflineProvider().version == other  # the same evidence, the same version
