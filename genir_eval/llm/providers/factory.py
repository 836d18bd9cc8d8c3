"""Build a provider by name, resolving ``auto`` from what is configured."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.llm.providers.base import DEFAULT_MAX_REPLY_BYTES, Provider

__all__ = ["PROVIDER_NAMES", "DEFAULT_MODELS", "resolve_provider", "make_provider"]

PROVIDER_NAMES = ("auto", "offline", "openai", "anthropic")

#: Used when ``--model`` is not given; any model the provider serves can be named instead.
#:
#: anthropic: Claude Haiku 4.5 by its snapshot ID (a pinned snapshot keeps judgments
#: reproducible; an alias moves). Source: Anthropic's "Models overview"
#: (https://platform.claude.com/docs/en/about-claude/models/overview) and the Claude Haiku 4.5
#: page (https://platform.claude.com/docs/en/models/haiku-4-5/overview, "Model ID:
#: claude-haiku-4-5-20251001"); Claude Haiku 3.5, the former default, is retired (see
#: https://platform.claude.com/docs/en/about-claude/model-deprecations). The newer Claude Haiku
#: 5.5 is not the default: its migration guide says to remove temperature and top_p from
#: requests, and the judges send temperature 0.
#: openai: gpt-4o-mini is still served; OpenAI's deprecations page
#: (https://developers.openai.com/api/docs/deprecations) is where its shutdown date is announced
#: (third-party summaries report 2027-01-14 for the GPT-4o mini snapshots) - revisit then.
DEFAULT_MODELS = {
    "offline": "offline",
    "openai": "gpt-4o-mini",
    "anthropic": "claude-haiku-4-5-20251001",
}

OFFLINE_NOTICE = (
    "no LLM provider configured (no --provider/--base-url, no OPENAI_API_KEY or "
    "ANTHROPIC_API_KEY): judging with the offline provider, whose labels are deterministic "
    "heuristics, not an LLM's"
)


def resolve_provider(
    name: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[str, str | None]:
    """The concrete provider for ``name`` and, for ``auto``, a one-line notice saying what
    was chosen and why (the CLI prints it). ``auto``: a base URL or an OpenAI key -> openai,
    else an Anthropic key -> anthropic, else offline."""
    if name not in PROVIDER_NAMES:
        raise ConfigError(f"unknown provider {name!r}; expected one of {', '.join(PROVIDER_NAMES)}")
    if name != "auto":
        return name, None
    env = os.environ if env is None else env
    if base_url or api_key or env.get("OPENAI_API_KEY"):
        why = "--base-url" if base_url else "an API key" if api_key else "OPENAI_API_KEY"
        return "openai", f"provider auto: using openai (found {why})"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic", "provider auto: using anthropic (found ANTHROPIC_API_KEY)"
    return "offline", OFFLINE_NOTICE


#: Calls in flight per HTTP connection pool: the pool checks every idle connection of its own
#: (a system call and a dictionary of socket attributes each) whenever a request comes or
#: goes, so small pools cost less. At 64 in flight against the fake server, 16 pools of 4
#: took 3.8 ms of client CPU a judgment where 4 pools of 16 took 4.1-4.4 (a busy machine,
#: load 12; ``bench/bench_engine.py --cases sporadic``). That was httpx's pool; over the
#: SDKs' aiohttp client (the providers' default since) 16 pools and one measured the same
#: (2.5-2.7 ms, load 6-8).
CALLS_PER_POOL = 4


def make_provider(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    http_client: Any = None,
    timeout: float = 60.0,
    concurrency: int | None = None,
    pool_shards: int | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> Provider:
    """A provider by name (``auto`` resolved by :func:`resolve_provider`). Its calls are
    spread over several HTTP connection pools (see ``OpenAIProvider``): ``pool_shards`` of
    them, else one per :data:`CALLS_PER_POOL` calls in flight at ``concurrency``. Every
    engine builder (the run's and the other commands') goes through here, so they agree.
    A reply longer than ``max_reply_bytes`` on the wire is cut off as it streams."""
    if pool_shards is None:
        pool_shards = max(1, (concurrency or 1) // CALLS_PER_POOL)
    resolved, _notice = resolve_provider(name, base_url=base_url, api_key=api_key)
    model = model or DEFAULT_MODELS[resolved]
    if resolved == "offline":
        from genir_eval.llm.providers.offline import OfflineProvider

        return OfflineProvider(model=model)
    if resolved == "openai":
        from genir_eval.llm.providers.openai_provider import OpenAIProvider

        return OpenAIProvider(
            model=model,
            base_url=base_url,
            api_key=api_key,
            http_client=http_client,
            timeout=timeout,
            pool_shards=pool_shards,
            max_reply_bytes=max_reply_bytes,
        )
    from genir_eval.llm.providers.anthropic_provider import AnthropicProvider

    return AnthropicProvider(
        model=model,
        base_url=base_url,
        api_key=api_key,
        http_client=http_client,
        timeout=timeout,
        pool_shards=pool_shards,
        max_reply_bytes=max_reply_bytes,
    )
