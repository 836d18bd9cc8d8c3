"""OpenAI chat completions through the official SDK, for OpenAI and every compatible server
(vLLM, Ollama, llama.cpp, LM Studio, ...) via ``base_url``.

The SDK's own retries are off (``max_retries=0``): the engine retries, with its limits.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.llm.providers._sdk import SDKProvider
from genir_eval.llm.providers.base import (
    DEFAULT_MAX_REPLY_BYTES,
    Completion,
    GenerateConfig,
    Message,
    ProviderError,
    Request,
    TokenLogprob,
    checked_usage,
)
from genir_eval.llm.providers.classify import parse_rate_limit

__all__ = ["OpenAIProvider", "OPENAI_DEFAULT_BASE_URL"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider(SDKProvider):
    """``pool_shards`` spreads calls round-robin over that many SDK clients, each with its own
    connection pool: the HTTP pool inspects every idle connection on each request, so at high
    concurrency several small pools cost less CPU than one large one (measured against the
    fake server at 256 in flight: 1.7 -> 1.0 ms CPU per call with 16 shards). That was httpx's
    pool; over aiohttp, the default since, one pool and sixteen measured the same at 64 in
    flight (2.5-2.7 ms of client CPU a judgment, ``bench/bench_engine.py --cases sporadic``,
    load 6-8). Ignored when an ``http_client`` (an httpx client) is injected."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: Any = None,
        timeout: float = 60.0,
        pool_shards: int = 1,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        import httpx2  # the SDK's HTTP library: its Response is what a raw call returns
        import openai  # lazily: the package works without the SDK installed

        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise ConfigError(
                    "the openai provider needs an API key: set OPENAI_API_KEY or pass --base-url "
                    "for a local OpenAI-compatible server"
                )
            key = "EMPTY"  # local servers (vLLM, Ollama, llama.cpp) accept any key
        else:
            self._set_secrets(key)
        self.model = model
        self._response_type = httpx2.Response
        self._open_clients(
            openai.AsyncOpenAI,
            api_key=key,
            base_url=base_url or OPENAI_DEFAULT_BASE_URL,
            http_client=http_client,
            timeout=timeout,
            pool_shards=pool_shards,
            max_reply_bytes=max_reply_bytes,
        )

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, *, request: Request | None = None
    ) -> Completion:
        body: dict[str, Any] = {
            "model": config.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
        }
        if config.response_format == "json" and config.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judgment", "schema": dict(config.json_schema)},
            }
        elif config.response_format == "json":
            body["response_format"] = {"type": "json_object"}
        if config.logprobs:
            body["logprobs"] = True
            if config.top_logprobs is not None:
                body["top_logprobs"] = config.top_logprobs
        if config.extra:
            body.update(config.extra)
        # The body is plain JSON already: ``client.post`` (the SDK's documented call for a raw
        # request) sends it as is, where ``chat.completions.create`` first walks it against
        # the SDK's parameter types (~0.7 ms of CPU a call, an eighth of a judgment's). The
        # reply comes back as the HTTP response: its headers (the rate-limit ones pace the
        # engine) and its JSON body, read here without building the SDK's response model.
        # Error statuses still raise the SDK's errors, classified as before.
        response_type = self._response_type
        raw = await self._send(
            lambda client: client.post("/chat/completions", body=body, cast_to=response_type)
        )
        completion = _completion(_json_body(raw))
        return replace(completion, rate_limit=parse_rate_limit(raw.headers))


def _json_body(raw: Any) -> Any:
    try:
        return json.loads(raw.content)
    except ValueError as error:
        raise ProviderError(
            f"malformed response body ({type(error).__name__}: {error})", error_class="transient"
        ) from None


#: How far above 0 a log-probability may come back and still be read as 0: servers round
#: (float32), a little; anything larger is not a log-probability.
LOGPROB_ROUNDING = 1e-3


def _logprob(value: Any) -> float:
    """A token's log-probability from the reply: a number <= 0 (``-inf``, probability 0,
    included), a rounding above 0 read as 0. Anything else (NaN, ``+inf``, 710, text) makes
    the reply malformed (a ``ValueError`` here), retried like one, never cached: ``exp`` of
    it would overflow or give a probability above 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a log-probability {value!r} is not a number")
    number = float(value)
    if not number <= LOGPROB_ROUNDING:  # NaN fails every comparison
        raise ValueError(f"a log-probability {number!r} is not a number <= 0")
    return min(number, 0.0)


def _completion(response: Any) -> Completion:
    """Read a chat-completions JSON body; anything else is a malformed (transient) reply."""
    try:
        choice = response["choices"][0]
        message = choice["message"]
        text = message.get("content")
        if text is None:
            refusal = message.get("refusal")
            if refusal:
                raise ProviderError(f"the model refused: {refusal}", error_class="permanent")
            text = ""
        usage = response.get("usage") or {}
        if not isinstance(usage, dict):  # not a usage object: the counts are unknown
            usage = {"prompt_tokens": usage}
        logprobs = None
        content = (choice.get("logprobs") or {}).get("content")
        if content is not None:
            logprobs = tuple(
                TokenLogprob(
                    token=str(item["token"]),
                    logprob=_logprob(item["logprob"]),
                    top=tuple(
                        (str(alt["token"]), _logprob(alt["logprob"]))
                        for alt in item.get("top_logprobs") or ()
                    ),
                )
                for item in content
            )
        return Completion(
            text=str(text),
            usage=checked_usage(usage.get("prompt_tokens"), usage.get("completion_tokens")),
            model=str(response.get("model") or ""),
            logprobs=logprobs,
            finish_reason=choice.get("finish_reason"),
        )
    except ProviderError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise ProviderError(
            f"malformed response body ({type(error).__name__}: {error})", error_class="transient"
        ) from error
