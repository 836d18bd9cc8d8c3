"""An API key never reaches the cache file, the journal, the stderr summary or the stats."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest
from llm_helpers import make_request

from genir_eval.llm import Completion, Failure, add_engine_arguments, engine_from_args
from genir_eval.testing import FakeLLMServer

SECRET = "sk-LEAKCHECK-7f3a9c1e5b2d4e6f8a0b"
# A masked echo ("sk-LEA...0b") would still carry part of the key: look for a middle piece too.
FRAGMENTS = (SECRET, SECRET[3:15], SECRET[-12:])


def _leaks(text: str | bytes, where: str) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [f"{where}: {fragment!r}" for fragment in FRAGMENTS if fragment.encode() in data]


def test_api_key_is_written_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    with FakeLLMServer(api_key=SECRET, reply=lambda r: f"reply to {r.last_user_text}") as server:
        # A retried 500, a permanent 401 and a 429 with Retry-After among the replies, so
        # failures and error messages are journaled and counted too.
        server.push_script([None, "server_error", None, "unauthorized", "rate_limit"])
        args = parser.parse_args(
            ["--base-url", server.openai_base_url, "--model", "fake-model"]
            + ["--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "2"]
        )

        async def go() -> tuple[list[Completion | Failure], dict[str, object], str]:
            async with engine_from_args(args) as engine:
                results = []
                for i in range(6):
                    request = make_request(i)
                    result = await engine.complete(request)
                    await engine.record(request, result, value={"label": i})
                    results.append(result)
                return results, engine.stats(), engine.summary()

        results, stats, summary = asyncio.run(go())
    assert SECRET in server.stats.auth_values or f"Bearer {SECRET}" in server.stats.auth_values
    assert sum(isinstance(r, Failure) for r in results) == 1  # the 401
    captured = capsys.readouterr()
    assert "genir-eval:" in captured.err  # the summary was printed

    leaks: list[str] = []
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert any(p.name == "cache.sqlite" for p in files)
    for path in files:
        leaks += _leaks(path.read_bytes(), str(path.relative_to(tmp_path)))
    leaks += _leaks(captured.err, "stderr")
    leaks += _leaks(captured.out, "stdout")
    leaks += _leaks(json.dumps(stats), "stats()")
    leaks += _leaks(summary, "summary()")
    leaks += _leaks(repr(results), "results")
    assert leaks == []
