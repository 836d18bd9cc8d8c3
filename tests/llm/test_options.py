"""The engine's command-line options."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest
from llm_helpers import make_request

from genir_eval.cli.engine_options import add_engine_arguments, config_from_args, engine_from_args
from genir_eval.llm import Completion, EngineConfig
from genir_eval.testing import FakeLLMServer


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    return parser.parse_args(argv)


def test_defaults_come_from_the_declaration() -> None:
    args = _parse([])
    # nothing given is left unset, so a scenario's own setting is not hidden by a default
    assert (args.provider, args.cache, args.cache_mode, args.concurrency) == (None,) * 4
    config = config_from_args(args)
    assert config == EngineConfig(cache=Path(".genir-cache/cache.sqlite"))
    assert (config.cache_mode, config.concurrency, config.timeout) == ("read-write", 16, 60.0)


def test_given_flags_become_the_configuration(tmp_path: Path) -> None:
    args = _parse(
        ["--concurrency", "4", "--cache", "none", "--journal", str(tmp_path / "j.sqlite"),
         "--no-allow-permanent", "--max-missing", "0.5"]
    )  # fmt: skip
    config = config_from_args(args)
    assert (config.concurrency, config.cache, config.allow_permanent) == (4, None, False)
    assert config.journal == (tmp_path / "j.sqlite").resolve() and config.max_missing == 0.5


def test_every_declared_setting_has_a_flag_with_its_help() -> None:
    import dataclasses

    parser = argparse.ArgumentParser()
    add_engine_arguments(parser, "run")
    flags = {a.dest: a for a in parser._actions}
    for f in dataclasses.fields(EngineConfig):
        assert f.name in flags, f.name
        assert flags[f.name].help and str(f.metadata["help"])[:20] in flags[f.name].help


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
