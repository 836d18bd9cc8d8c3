"""What the fake LLM server puts on the wire besides the reply: the request-rate token
bucket and its rate-limit headers, the text of a message's content, the OpenAI logprobs of a
reply (scripted or made up), the protocols' error bodies and the HTTP reason phrases. See
:mod:`genir_eval.testing.fake_llm_server`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

__all__ = ["default_reply"]

from genir_eval.testing.fake_llm_script import FakeRequest


class _Bucket:
    """A token bucket of requests: ``rpm / 60`` tokens a second, at most ``burst_s`` seconds
    of them; starts full."""

    def __init__(self, rpm: float, burst_s: float) -> None:
        if rpm <= 0 or burst_s <= 0:
            raise ValueError("rate_limit_rpm and rate_limit_burst_s must be > 0")
        self.rpm = rpm
        self.rate = rpm / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.tokens = self.capacity
        self.updated = time.monotonic()

    def _refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def take(self, now: float) -> float | None:
        """Take a token: ``None`` when there was one, else the seconds until there is."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return None
        return (1.0 - self.tokens) / self.rate

    def headers(self, protocol: str, now: float) -> dict[str, str]:
        self._refill(now)
        remaining = int(self.tokens)
        to_full = (self.capacity - self.tokens) / self.rate
        if protocol == "anthropic":
            reset = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + to_full))
            return {
                "anthropic-ratelimit-requests-limit": f"{self.rpm:g}",
                "anthropic-ratelimit-requests-remaining": str(remaining),
                "anthropic-ratelimit-requests-reset": reset + "Z",
            }
        return {
            "x-ratelimit-limit-requests": f"{self.rpm:g}",
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": _duration(to_full),
        }


def _duration(seconds: float) -> str:
    """A duration as OpenAI's rate-limit headers write it: ``12ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1.0:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60.0)
    if minutes:
        return f"{int(minutes)}m{rest:g}s"
    return f"{rest:.3g}s"


def default_reply(request: FakeRequest) -> str:
    return "ok"


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}


def _scripted_logprobs(
    tokens: Iterable[tuple[str, float, tuple[tuple[str, float], ...]]], top_n: int
) -> list[dict[str, Any]]:
    """OpenAI's logprobs ``content`` for scripted tokens, keeping ``top_n`` alternatives."""
    out = []
    for token, logprob, alternatives in tokens:
        top = [(token, logprob), *((a, lp) for a, lp in alternatives if a != token)]
        top.sort(key=lambda pair: -pair[1])
        out.append(
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": a, "logprob": lp, "bytes": list(a.encode())} for a, lp in top[:top_n]
                ],
            }
        )
    return out


def _fake_logprobs(text: str, top_n: int) -> list[dict[str, Any]]:
    """Deterministic logprobs: the text split into 4-character tokens, token i has -0.1*i."""
    tokens = [text[i : i + 4] for i in range(0, len(text), 4)] or [""]
    out = []
    for i, token in enumerate(tokens):
        logprob = -0.1 * i
        top = [{"token": token, "logprob": logprob, "bytes": list(token.encode())}]
        for j in range(1, top_n):
            alt = f"<alt{j}>"
            top.append({"token": alt, "logprob": logprob - j, "bytes": list(alt.encode())})
        out.append(
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": top[:top_n],
            }
        )
    return out


def _error_body(protocol: str, kind: str, message: str) -> bytes:
    if protocol == "anthropic":
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    return json.dumps(
        {"error": {"message": message, "type": kind, "code": kind, "param": None}}
    ).encode()


# -- in a child process ------------------------------------------------------------------------
