"""Shared builders for the engine tests (imported by the tests and the resume worker)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from genir_eval.llm import Cache, Engine, GenerateConfig, Journal, JudgmentKey, Message, Request
from genir_eval.llm.config import EngineConfig
from genir_eval.llm.providers.openai_provider import OpenAIProvider


def make_request(i: int, *, task: str = "test.echo", repeat: int = 0, **config: Any) -> Request:
    return Request(
        key=JudgmentKey(
            session_id=f"s{i // 10}",
            turn=i % 10,
            item=f"item{i}",
            judge="echo",
            prompt_version="v1",
            repeat=repeat,
        ),
        messages=(Message("system", "You judge."), Message("user", f"judge item {i}")),
        config=GenerateConfig(model="fake-model", **config),
        task=task,
    )


def openai_engine(
    server: Any,
    *,
    cache_path: Path | None = None,
    journal_path: Path | None = None,
    cache_mode: str = "read-write",
    **kwargs: Any,
) -> Engine:
    provider = OpenAIProvider(
        model="fake-model", base_url=server.openai_base_url, api_key=server.api_key
    )
    kwargs.setdefault("backoff_base", 0.01)
    kwargs.setdefault("backoff_max", 0.05)
    # the settings to the configuration, the rest (backoff, storage, quiet) to the engine
    fields = {f.name for f in dataclasses.fields(EngineConfig)}
    config = EngineConfig(**{k: kwargs.pop(k) for k in list(kwargs) if k in fields})
    return Engine(
        provider,
        config,
        cache=Cache(cache_path, mode=cache_mode) if cache_path is not None else None,  # type: ignore[arg-type]
        journal=Journal(journal_path) if journal_path is not None else None,
        **kwargs,
    )
