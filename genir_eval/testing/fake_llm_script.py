"""What a test tells the fake LLM server and what the server records: the faults it can inject
(:class:`Fault`, :class:`FaultPlan`), a scripted reply with token logprobs
(:class:`ScriptedReply`), a request as the reply script sees it (:class:`FakeRequest`) and
the counters (:class:`ServerStats`). See :mod:`genir_eval.testing.fake_llm_server`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FaultKind",
    "ALL_FAULTS",
    "Fault",
    "FaultPlan",
    "FakeRequest",
    "ScriptedReply",
    "ServerStats",
]


FaultKind = Literal[
    "rate_limit",  # 429 with Retry-After
    "quota",  # 429 insufficient_quota (permanent)
    "server_error",  # 500
    "unavailable",  # 503
    "overloaded",  # 529 (Anthropic's overloaded_error)
    "bad_request",  # 400
    "context_length",  # 400 context_length_exceeded
    "unauthorized",  # 401
    "drop",  # close the connection without answering
    "malformed",  # 200 with a body that is not the protocol's JSON
    "hang",  # never answer (until the client gives up)
    "endless",  # 200, then a chunked body that never ends (until the client hangs up)
]

#: The faults a :class:`FaultPlan` draws from by default; ``endless`` only when named (each
#: one streams until the client's cap on a reply stops it).
ALL_FAULTS: tuple[str, ...] = (
    "rate_limit",
    "quota",
    "server_error",
    "unavailable",
    "overloaded",
    "bad_request",
    "context_length",
    "unauthorized",
    "drop",
    "malformed",
    "hang",
)
KNOWN_FAULTS: tuple[str, ...] = (*ALL_FAULTS, "endless")


@dataclass(frozen=True)
class Fault:
    """One injected fault; ``retry_after`` (seconds) goes into the 429's headers; ``message``
    replaces the error body's message (a provider's own wording, such as a 429 naming its
    limit)."""

    kind: str
    retry_after: float | None = 0.05
    retry_after_ms: bool = False
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KNOWN_FAULTS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {KNOWN_FAULTS}")


@dataclass(frozen=True)
class ScriptedReply:
    """A reply text with the token logprobs an OpenAI server would return for it: one
    ``(token, logprob, ((alternative, logprob), ...))`` per token; the tokens must join to
    ``text``. Without ``logprobs`` the server makes deterministic ones up."""

    text: str
    logprobs: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None = None


@dataclass(frozen=True)
class FaultPlan:
    """Random faults: each request draws one of ``kinds`` with probability ``rate``."""

    rate: float = 0.0
    kinds: tuple[str, ...] = ("rate_limit", "server_error", "drop")
    retry_after: float | None = 0.05
    seed: int = 0


@dataclass(frozen=True)
class FakeRequest:
    """What the scripted ``reply`` callable sees of one request."""

    protocol: Literal["openai", "anthropic"]
    model: str
    messages: tuple[dict[str, Any], ...]
    system: str | None
    body: Mapping[str, Any]
    headers: Mapping[str, str]

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""


@dataclass
class ServerStats:
    """Counters the tests assert on."""

    total: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    answered_ok: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    by_fault: Counter[str] = field(default_factory=Counter)
    by_prompt: Counter[str] = field(default_factory=Counter)
    shape_errors: list[str] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    #: arrival times of the requests the rate limit let through (all of them without one)
    admitted: list[float] = field(default_factory=list)
    rate_limited: int = 0
    auth_values: set[str] = field(default_factory=set)
    #: bytes of body the ``endless`` fault wrote before the client hung up
    endless_bytes: int = 0

    def max_in_window(self, window_s: float, *, admitted: bool = False) -> int:
        """Largest number of requests that arrived within any window of ``window_s``
        (``admitted``: only those the server's rate limit let through)."""
        times = sorted(self.admitted if admitted else self.arrivals)
        best = 0
        start = 0
        for end, t in enumerate(times):
            while t - times[start] >= window_s:
                start += 1
            best = max(best, end - start + 1)
        return best

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "answered_ok": self.answered_ok,
            "by_status": {str(k): v for k, v in self.by_status.items()},
            "by_fault": dict(self.by_fault),
            "by_prompt": dict(self.by_prompt),
            "shape_errors": list(self.shape_errors),
            "arrivals": list(self.arrivals),
            "admitted": list(self.admitted),
            "rate_limited": self.rate_limited,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerStats:
        return cls(
            total=data["total"],
            in_flight=data["in_flight"],
            max_in_flight=data["max_in_flight"],
            answered_ok=data["answered_ok"],
            by_status=Counter({int(k): v for k, v in data["by_status"].items()}),
            by_fault=Counter(data["by_fault"]),
            by_prompt=Counter(data["by_prompt"]),
            shape_errors=list(data["shape_errors"]),
            arrivals=list(data["arrivals"]),
            admitted=list(data.get("admitted", ())),
            rate_limited=int(data.get("rate_limited", 0)),
        )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""
