"""The run's engines and the other commands' engine are built alike.

``genir-eval run`` builds one engine per provider group (runner/executor.py); ``meta`` and the
benches build theirs from the command line (cli/engine_options.py). Both go through
``make_provider``, so a setting derived from another (the HTTP connection pools from the
concurrency) cannot drift between them: before they shared it, ``run`` kept one pool at any
concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli.engine_options import add_engine_arguments, engine_from_args
from genir_eval.llm.providers.factory import CALLS_PER_POOL, make_provider
from genir_eval.records import Link, Session, Statement, Turn
from genir_eval.runner.executor import LocalJudging
from genir_eval.runner.scenario import LlmSpec, load_scenario
from genir_eval.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-builders"

# concurrency -> pools: computed by hand from one pool per CALLS_PER_POOL (4) in flight
CASES = [(1, 1), (4, 1), (7, 1), (8, 2), (64, 16), (100, 25)]


@pytest.mark.parametrize(("concurrency", "pools"), CASES)
def test_make_provider_spreads_calls_by_concurrency(concurrency: int, pools: int) -> None:
    assert CALLS_PER_POOL == 4
    provider = make_provider(
        "openai", base_url="http://127.0.0.1:9/v1", api_key=KEY, concurrency=concurrency
    )
    try:
        assert len(provider._clients) == pools  # type: ignore[attr-defined]
    finally:
        asyncio.run(provider.aclose())


def _session() -> Session:
    turn = Turn(
        index=1,
        query="q",
        response_text="a [1].",
        statements=(Statement("a", (1,)),),
        links=(Link(1, "https://x.example", "x"),),
    )
    return Session(session_id="s", turns=(turn,), language="en")


@pytest.mark.parametrize(("concurrency", "pools"), CASES[2:])
def test_the_run_and_the_command_line_open_the_same_pools(
    concurrency: int, pools: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer() as server:
        scenario = load_scenario(ROOT / "scenarios" / "demo-offline.toml")
        llm = LlmSpec(provider="openai", model="fake-model", base_url=server.openai_base_url)
        scenario = replace(
            scenario,
            judges=tuple(replace(spec, llm=llm) for spec in scenario.judges[:1]),
            engine=replace(scenario.engine, cache=None, journal=False, concurrency=concurrency),
        )
        seen: dict[str, int] = {}

        async def run() -> None:
            async with LocalJudging(scenario, tmp_path) as judging:
                (group,) = judging.groups
                assert group.engine is not None
                seen["run"] = len(group.engine.provider._clients)
            parser = argparse.ArgumentParser()
            add_engine_arguments(parser)
            args: Any = parser.parse_args(
                [
                    "--provider", "openai", "--base-url", server.openai_base_url,
                    "--concurrency", str(concurrency), "--journal", "none",
                    "--cache-mode", "off", "--quiet",
                ]
            )  # fmt: skip
            async with engine_from_args(args) as engine:
                seen["command line"] = len(engine.provider._clients)

        asyncio.run(run())
    assert seen == {"run": pools, "command line": pools}
