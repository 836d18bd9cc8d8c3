"""One tiny request to each real provider through the engine (opt-in: ``pytest --runapi``).

Without ``--runapi`` the conftest skips these; with it, each skips unless its API key is set.
They spend a few tokens: ``max_tokens`` 8, no cache, no journal, at most three attempts.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from genir_eval.llm import (
    Completion,
    Engine,
    GenerateConfig,
    JudgmentKey,
    Message,
    Request,
    make_provider,
)
from genir_eval.llm.config import EngineConfig
from genir_eval.llm.providers.factory import DEFAULT_MODELS

pytestmark = pytest.mark.api

# provider name -> the environment variable holding its key
PROVIDERS = [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]


def _request(model: str) -> Request:
    return Request(
        key=JudgmentKey("live", 0, "ping", "live_api", "v1"),
        messages=(Message("user", "Reply with the single word: ok"),),
        config=GenerateConfig(model=model, max_tokens=8),
        task="live_api.ping",
    )


@pytest.mark.parametrize(("provider", "env_var"), PROVIDERS)
def test_one_tiny_request(provider: str, env_var: str) -> None:
    if not os.environ.get(env_var):
        pytest.skip(f"live {provider} test: {env_var} is not set")
    model = DEFAULT_MODELS[provider]

    async def go() -> tuple[object, dict[str, object]]:
        engine = Engine(
            make_provider(provider, model=model),
            EngineConfig(concurrency=1, max_attempts=3, timeout=60, deadline=180),
        )
        async with engine:
            result = await engine.complete(_request(model))
            return result, engine.stats()

    result, stats = asyncio.run(go())
    assert isinstance(result, Completion), result
    assert result.text.strip(), "empty reply"
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert stats["calls"] >= 1 and stats["failures"] == {}
