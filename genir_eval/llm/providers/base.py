"""The one interface every judge talks to: messages in; text, usage and timing out.

Providers implement :meth:`Provider.generate`. The engine (``genir_eval.llm.engine``) wraps
a provider with limits, retries, the persistent cache and the run journal. Judges build a
:class:`Request` and await ``engine.complete(request)``, which returns a :class:`Completion`
or a :class:`Failure` (never raises for provider errors).
"""

from __future__ import annotations

import abc
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "Message",
    "GenerateConfig",
    "Usage",
    "MAX_TOKENS_COUNTED",
    "checked_usage",
    "checked_logprobs",
    "TokenLogprob",
    "Completion",
    "ErrorClass",
    "Failure",
    "RateLimitInfo",
    "JudgmentKey",
    "composite_item",
    "Request",
    "Provider",
    "ProviderError",
    "REDACTED",
    "redactor",
    "departure",
    "report_departure",
]

#: Set by the engine around one provider call: what to tell when the request leaves. The
#: provider's rate limit counts requests as they arrive, and a request granted by the rate can
#: leave later (an SDK building it, a new connection, a stalled client); told when it left,
#: the request rate counts it from then (see :class:`~genir_eval.llm.limits.SendWindow`).
departure: ContextVar[Callable[[float], None] | None] = ContextVar(
    "genir_eval_departure", default=None
)


def report_departure(at: float | None = None) -> None:
    """For providers: the current call's request has been written to the provider at ``at``
    (``time.monotonic()``, now by default). A no-op outside an engine's call."""
    report = departure.get()
    if report is not None:
        report(time.monotonic() if at is None else at)


#: What a secret is replaced with in error messages.
REDACTED = "[redacted]"

#: A prefix or suffix of a secret at least this long is treated as the secret (a masked echo
#: such as ``sk-proj-AbC...xYz1`` still gives part of the key away).
_MIN_SECRET_PART = 8

Role = Literal["system", "user", "assistant"]
#: ``stopped``: not sent, because the engine stopped sending to this endpoint (see
#: :mod:`genir_eval.llm.health`).
ErrorClass = Literal[
    "rate_limit", "transient", "permanent", "deadline", "cache_miss", "stopped", "budget"
]


#: A reply's size on the wire past which it is cut off as it streams: a chat completion with
#: 20 log-probabilities for each of 4,000 tokens is about 8 MB, so 16 MiB cuts off only what
#: no model's reply is (a server streaming without end held 2.1 GB before its timeout).
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class GenerateConfig:
    """Sampling parameters. Temperature 0 and top_p 1 by default, as in the seed papers.

    ``json_schema`` (with ``response_format="json"``) asks a provider that supports it for a
    reply that follows the schema (OpenAI's ``json_schema`` response format, grammar-
    constrained decoding on llama.cpp and vLLM); providers without it fall back to JSON
    mode or the prompt alone."""

    model: str
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 1024
    response_format: Literal["text", "json"] = "text"
    logprobs: bool = False
    top_logprobs: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    json_schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Usage:
    """The tokens a call used, as the provider reported them. ``known`` is false when the
    reply's counts were not whole numbers in ``[0, MAX_TOKENS_COUNTED]`` (a negative count, a
    float, text): they are then counted as 0 and the run says how many calls had no usable
    count, rather than summing a provider's -600,000 into the run's usage."""

    input_tokens: int = 0
    output_tokens: int = 0
    known: bool = True


#: More tokens than any model reads or writes in one call: a count above it is not a count.
MAX_TOKENS_COUNTED = 10**9


def _token_count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_COUNTED:
        return None
    return value


def checked_usage(input_tokens: Any, output_tokens: Any) -> Usage:
    """A reply's token counts as a :class:`Usage`: absent counts (``None``) are 0, and counts
    that are not whole numbers in ``[0, MAX_TOKENS_COUNTED]`` make the usage unknown
    (``known=False``, counted as 0), so a reply is never cached with counts the cache then
    refuses on every later run (each repeat paying for the call again)."""
    counts = [
        0 if value is None else _token_count(value) for value in (input_tokens, output_tokens)
    ]
    if counts[0] is None or counts[1] is None:
        return Usage(0, 0, known=False)
    return Usage(counts[0], counts[1])


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the top alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


#: A log-probability above 0 by at most this is rounding (a server's float32): read as 0.
_LOGPROB_ROUNDING = 1e-6


def _logprob(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if value > _LOGPROB_ROUNDING:
        return None
    return min(float(value), 0.0)


def checked_logprobs(
    logprobs: tuple[TokenLogprob, ...] | None,
) -> tuple[TokenLogprob, ...] | None:
    """``logprobs`` with every log-probability (chosen and alternative) a finite number <= 0
    (a rounding above 0 read as 0), or ``None`` (unknown) when one is not: the cache refuses
    a row holding another, so a reply cached with one was paid for again on every later
    run."""
    if logprobs is None:
        return None
    checked = []
    for token in logprobs:
        chosen = _logprob(token.logprob)
        top = [(alt, _logprob(value)) for alt, value in token.top]
        if chosen is None or any(value is None for _, value in top):
            return None
        checked.append(
            TokenLogprob(token.token, chosen, tuple((alt, float(v or 0.0)) for alt, v in top))
        )
    return tuple(checked)


@dataclass(frozen=True)
class RateLimitInfo:
    """What a reply's headers say of the provider's request-rate limit (OpenAI's
    ``x-ratelimit-*-requests``, Anthropic's ``anthropic-ratelimit-requests-*``), or what a
    429's body says of it: the requests allowed per minute, those left, and the seconds until
    the allowance is full again. ``None`` where the header is absent or unreadable."""

    limit: float | None = None
    remaining: float | None = None
    reset_s: float | None = None
    #: a 429's body named a limit other than requests per minute (tokens per minute,
    #: requests per day): evidence that one is enforced, without a request rate to keep to
    names_limit: bool = False


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = Usage()
    latency_s: float = 0.0
    model: str = ""
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: str | None = None
    cached: bool = False
    #: The reply's rate-limit headers, read by the engine to pace itself (never stored).
    rate_limit: RateLimitInfo | None = None


@dataclass(frozen=True)
class Failure:
    """A call that finally failed: recorded as missing with its reason, never defaulted."""

    error_class: ErrorClass
    message: str
    attempts: int = 1


@dataclass(frozen=True)
class JudgmentKey:
    """Identifies one judgment of a run (the journal's row key)."""

    session_id: str
    turn: int | None
    item: str
    judge: str
    prompt_version: str
    repeat: int = 0

    def as_tuple(self) -> tuple[str, int | None, str, str, str, int]:
        return (
            self.session_id,
            self.turn,
            self.item,
            self.judge,
            self.prompt_version,
            self.repeat,
        )


def composite_item(kind: str, *parts: str) -> str:
    """A judgment's ``item`` made of several names (two systems, a passage and a question):
    ``kind`` and the names as a JSON list, so that no two different tuples of names give one
    item whatever characters the names hold (``"a>b" + "c"`` and ``"a" + "b>c"`` joined with
    ``>`` were one item, and a resumed run judged, and paid for, one of them again)."""
    return f"{kind}:{json.dumps(list(parts), ensure_ascii=False, separators=(',', ':'))}"


@dataclass(frozen=True)
class Request:
    """One call a judge asks of the engine.

    ``task`` names the judge's task (e.g. ``"link_usefulness.dna"``): the offline provider
    dispatches on it and cost is grouped by it. ``context`` carries the structured inputs
    (Session, Turn, ...) for offline twins; it is never part of the cache key or written out.
    """

    key: JudgmentKey
    messages: tuple[Message, ...]
    config: GenerateConfig
    task: str
    context: Any = None


class ProviderError(Exception):
    """Raised by providers; the engine classifies it and decides whether to retry."""

    def __init__(
        self,
        message: str,
        *,
        error_class: ErrorClass,
        retry_after: float | None = None,
        status: int | None = None,
        rate_limit: RateLimitInfo | None = None,
        overload: bool = False,
    ) -> None:
        super().__init__(message)
        self.error_class: ErrorClass = error_class
        self.retry_after = retry_after
        self.status = status
        self.rate_limit = rate_limit
        #: the provider is overloaded (a timeout, 503, 529): the engine sends fewer at once
        self.overload = overload


def redactor(secrets: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern matching each secret and every prefix or suffix of it at least 8 characters
    long (longest first, so a whole key is replaced in one piece); ``None`` without secrets.
    Secrets under 4 characters (placeholders such as a local server's ``"x"``) are ignored:
    replacing them would garble every message and protect nothing."""
    secrets = list(secrets)
    parts: set[str] = set()
    for secret in secrets:
        if len(secret) < 4:
            continue
        parts.add(secret)
        for n in range(_MIN_SECRET_PART, len(secret)):
            parts.add(secret[:n])
            parts.add(secret[-n:])
    if not parts:
        return None
    alternatives = [re.escape(p) for p in sorted(parts, key=len, reverse=True)]
    # A masked echo keeps fewer than 8 characters of each end ("sk-proj...abcd", first 7
    # and last 4, as OpenAI's "Incorrect API key provided" does): the key's first three
    # characters, a mask of dots, stars or an ellipsis, and whatever follows it.
    for start in sorted({s[:3] for s in secrets if len(s) >= 12}):
        alternatives.append(re.escape(start) + r"[\w-]*(?:\*{2,}|\.{2,}|…)[\w-]*")
    return re.compile("|".join(alternatives))


class Provider(abc.ABC):
    """An LLM backend. Implementations import their SDK lazily and accept an injected
    base URL / HTTP client so tests can talk to a local server over real sockets."""

    name: str = "provider"
    #: Whether the engine's persistent cache may store this provider's replies (the offline
    #: provider is deterministic and free, so caching it would only go stale).
    cacheable: bool = True
    #: Whether the backend may limit requests by rate: without a configured ``rpm`` the
    #: engine learns that rate once its replies show one, and paces to it. The offline provider
    #: answers in this process and has no rate to find, so its calls are never paced.
    rate_limited: bool = True
    #: Compiled by :meth:`_set_secrets`; the class default redacts nothing.
    _redact_pattern: re.Pattern[str] | None = None

    @property
    def base_url(self) -> str | None:
        return None

    @property
    def version(self) -> str:
        """What decides the replies besides the request (e.g. the offline provider's code):
        part of the cache key and of the journal's fingerprint when non-empty, so a reply
        produced under another version is neither a cache hit nor resumed. Empty by default
        (an LLM behind an API is named by its model)."""
        return ""

    def _set_secrets(self, *secrets: str | None) -> None:
        """Remember the credentials this provider sends (added to those already known), so
        :meth:`redact` can remove them."""
        known = getattr(self, "_secrets", ())
        self._secrets: tuple[str, ...] = (*known, *(s for s in secrets if s))
        self._redact_pattern = redactor(self._secrets)

    def redact(self, text: str) -> str:
        """``text`` with this provider's credentials (and their first or last 8+ characters)
        replaced by ``[redacted]``: error bodies may echo the key, and error messages are
        journaled, printed and returned in a :class:`Failure`."""
        pattern = self._redact_pattern
        return text if pattern is None else pattern.sub(REDACTED, text)

    def redact_error(self, error: ProviderError) -> ProviderError:
        """``error`` with its message redacted (the same object when nothing was removed)."""
        message = str(error)
        clean = self.redact(message)
        if clean == message:
            return error
        return ProviderError(
            clean,
            error_class=error.error_class,
            retry_after=error.retry_after,
            status=error.status,
            rate_limit=error.rate_limit,
        )

    @abc.abstractmethod
    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, *, request: Request | None = None
    ) -> Completion:
        """Run one completion. Raise :class:`ProviderError` (classified) on failure."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections; default does nothing."""
