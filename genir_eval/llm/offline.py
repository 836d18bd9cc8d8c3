"""The offline provider: no network, deterministic, the embedded default.

Judges register a handler per task with :func:`register_offline`; the handler receives the
whole :class:`Request` (its ``context`` carries the structured inputs) and returns the reply
text in the same format an LLM would answer, so the judge's parser reads both alike.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence

from genir_eval.llm.base import (
    Completion,
    GenerateConfig,
    Message,
    Provider,
    ProviderError,
    Request,
    Usage,
)

__all__ = [
    "OfflineHandler",
    "OfflineProvider",
    "register_offline",
    "offline_handler",
    "approx_tokens",
]

OfflineHandler = Callable[[Request], "str | Awaitable[str]"]

_HANDLERS: dict[str, OfflineHandler] = {}


def register_offline(task: str, handler: OfflineHandler) -> OfflineHandler:
    """Register ``handler`` for ``task`` (exact name, or a prefix such as ``"link_usefulness"``
    that serves every ``"link_usefulness.*"`` task without its own handler). Returns the
    handler so it can be used as a decorator through :func:`offline_handler`."""
    _HANDLERS[task] = handler
    return handler


def offline_handler(task: str) -> Callable[[OfflineHandler], OfflineHandler]:
    """Decorator form of :func:`register_offline`."""

    def decorate(handler: OfflineHandler) -> OfflineHandler:
        return register_offline(task, handler)

    return decorate


def approx_tokens(text: str) -> int:
    """About four characters per token, the usual rule of thumb for English BPE tokenizers."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _lookup(task: str) -> OfflineHandler | None:
    handler = _HANDLERS.get(task)
    if handler is None and "." in task:
        handler = _HANDLERS.get(task.split(".", 1)[0])
    return handler


class OfflineProvider(Provider):
    """Answers from registered handlers; usage counted approximately, cost zero."""

    name = "offline"
    cacheable = False

    def __init__(self, model: str = "offline") -> None:
        self.model = model

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, *, request: Request | None = None
    ) -> Completion:
        if request is None:
            raise ProviderError(
                "the offline provider needs the Request (its task names the handler)",
                error_class="permanent",
            )
        handler = _lookup(request.task)
        if handler is None:
            raise ProviderError(
                f"no offline handler registered for task {request.task!r}",
                error_class="permanent",
            )
        start = time.perf_counter()
        reply = handler(request)
        text = await reply if inspect.isawaitable(reply) else reply
        if not isinstance(text, str):
            raise ProviderError(
                f"offline handler for {request.task!r} returned {type(text).__name__}, not str",
                error_class="permanent",
            )
        usage = Usage(
            input_tokens=sum(approx_tokens(m.content) for m in messages),
            output_tokens=approx_tokens(text),
        )
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.model,
            finish_reason="stop",
        )
