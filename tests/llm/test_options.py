"""The engine's command-line options."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest
from llm_helpers import make_request

from genir_eval.llm import Completion, add_engine_arguments, engine_from_args
from genir_eval.testing import FakeLLMServer


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    return parser.parse_args(argv)


def test_defaults() -> None:
    args = _parse([])
    assert (args.provider, args.cache, args.cache_mode, args.concurrency) == (
        "auto",
        ".genir-cache/cache.sqlite",
        "read-write",
        16,
    )


def test_engine_from_args_talks_to_the_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        args = _parse(
            [
                "--base-url",
                server.openai_base_url,
                "--model",
                "fake-model",
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--concurrency",
                "4",
                "--rpm",
                "6000",
                "--timeout",
                "5",
            ]
        )

        async def go() -> None:
            async with engine_from_args(args) as engine:
                assert (engine.provider.name, engine.concurrency, engine.rpm) == ("openai", 4, 6000)
                assert isinstance(await engine.complete(make_request(0)), Completion)

        asyncio.run(go())
    err = capsys.readouterr().err
    assert "provider auto: using openai" in err and "provider calls 1" in err


def test_auto_without_keys_is_offline_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    args = _parse(["--cache", str(tmp_path / "c.sqlite")])

    async def go() -> None:
        async with engine_from_args(args) as engine:
            assert engine.provider.name == "offline"

    asyncio.run(go())
    assert "offline provider" in capsys.readouterr().err
