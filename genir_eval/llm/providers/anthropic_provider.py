"""Anthropic messages through the official SDK. System messages go to ``system``.

The SDK's own retries are off (``max_retries=0``): the engine retries. ``temperature`` is
sent in the request body (recent SDK releases no longer name it) and ``top_p`` only when it
differs from 1, since recent Claude models refuse temperature and top_p together. The messages API returns no logprobs; a request for them gets ``logprobs=None``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
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
    checked_usage,
)
from genir_eval.llm.providers.classify import parse_rate_limit

__all__ = ["AnthropicProvider", "ANTHROPIC_DEFAULT_BASE_URL", "ANTHROPIC_VERSION"]

ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider(SDKProvider):
    """``pool_shards``: as for :class:`~genir_eval.llm.providers.openai_provider.OpenAIProvider`."""

    name = "anthropic"

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
        import anthropic  # lazily: the package works without the SDK installed

        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ConfigError("the anthropic provider needs an API key: set ANTHROPIC_API_KEY")
        self._set_secrets(key)
        self.model = model
        self._open_clients(
            anthropic.AsyncAnthropic,
            api_key=key,
            base_url=base_url or ANTHROPIC_DEFAULT_BASE_URL,
            http_client=http_client,
            timeout=timeout,
            pool_shards=pool_shards,
            max_reply_bytes=max_reply_bytes,
        )

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, *, request: Request | None = None
    ) -> Completion:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        kwargs: dict[str, Any] = {
            "model": config.model,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
            "max_tokens": config.max_tokens,
        }
        if system:
            kwargs["system"] = system
        # Sampling parameters travel in the body: recent SDK releases no longer name them.
        body: dict[str, Any] = {"temperature": config.temperature}
        if config.top_p != 1.0:
            body["top_p"] = config.top_p
        body.update(config.extra)
        kwargs["extra_body"] = body
        # ``with_raw_response``: the SDK's documented way to the reply's (rate-limit) headers.
        raw = await self._send(lambda client: client.messages.with_raw_response.create(**kwargs))
        try:
            response = raw.parse()
            if inspect.isawaitable(response):  # the SDK's async raw response parses async
                response = await response
        except Exception as error:  # noqa: BLE001 - a body the SDK cannot read
            raise ProviderError(
                f"malformed response body ({type(error).__name__})", error_class="transient"
            ) from None
        blocks = getattr(response, "content", None)
        if blocks is None:
            raise ProviderError("malformed response: no content", error_class="transient")
        text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            usage=checked_usage(
                getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None)
            ),
            model=str(getattr(response, "model", "") or ""),
            finish_reason=getattr(response, "stop_reason", None),
            rate_limit=parse_rate_limit(raw.headers),
        )
