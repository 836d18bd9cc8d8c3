"""What a missing judgment's reason says went wrong, as one class with a hint of what to do.

A failure reason is text (``links.jsonl``'s ``missing``, ``failures.jsonl``): the provider
error as :mod:`genir_eval.llm.providers.classify` words it (``connection refused: ...``,
``HTTP 401: ...``), behind the engine's own words when it stopped sending (``stopped: not
sent: gave up: ...; last: connection refused: ...``). :func:`cause_of` reads the class back,
so the terminal summary and the report group one cause in one row, whichever judges it hit,
and say what to check. Reasons written by older versions (``APITimeoutError (ConnectError)``)
are read as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Cause", "cause_of", "OTHER"]


@dataclass(frozen=True)
class Cause:
    """A class of failure: ``label`` as the table shows it, ``hint`` what to check
    (``{endpoint}`` is replaced by where the calls went)."""

    label: str
    hint: str

    def hint_for(self, endpoint: str | None) -> str:
        """The hint with ``endpoint``'s URL in it (``openai/gpt-4o at URL`` gives URL)."""
        url = endpoint.rsplit(" at ", 1)[-1] if endpoint else "the configured base_url"
        return self.hint.replace("{endpoint}", url)


OTHER = Cause("other", "see the reason and failures.jsonl")

# Most specific first: a reason is the first cause whose pattern it contains.
_CAUSES: tuple[tuple[re.Pattern[str], Cause], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), Cause(label, hint))
    for pattern, label, hint in (
        (
            r"not sent: budget:",
            "budget",
            "the run's --max-cost or --max-tokens was reached: run again with a larger cap to "
            "resume (finished judgments are not repeated)",
        ),
        (
            r"connection refused|ConnectionRefused",
            "connection refused",
            "is the server running at {endpoint}? Nothing accepted the connection",
        ),
        (
            r"DNS failure|Name or service not known|nodename nor servname|name resolution",
            "DNS failure",
            "check the host name in base_url ({endpoint}): it does not resolve",
        ),
        (
            r"TLS error|SSLError|CERTIFICATE_VERIFY|WRONG_VERSION_NUMBER",
            "TLS error",
            "check http:// versus https:// in base_url ({endpoint}) and the server's certificate",
        ),
        (
            r"quota exhausted|insufficient_quota",
            "quota exhausted",
            "the account has no credit left: add some or use another key",
        ),
        (
            r"context too long",
            "context too long",
            "the prompt exceeds the model's context: shorten the input or use a longer-context model",
        ),
        (
            r"HTTP 40[13]\b",
            "HTTP 401/403",
            "check the key ($OPENAI_API_KEY / $ANTHROPIC_API_KEY) and its access to the model",
        ),
        (
            r"HTTP 404\b",
            "HTTP 404",
            "check the model name and base_url ({endpoint}; OpenAI-compatible servers end in /v1)",
        ),
        (
            r"HTTP 429\b",
            "HTTP 429 rate limit",
            "the provider limits the rate: lower --concurrency or set --rpm",
        ),
        (
            r"HTTP 4\d\d\b",
            "HTTP 4xx",
            "the provider refused the request: its body excerpt says why",
        ),
        (
            r"HTTP 5\d\d\b",
            "HTTP 5xx",
            "the provider failed: try again later, or check the server's log at {endpoint}",
        ),
        (
            r"connect timeout|ConnectTimeout|ConnectError|APIConnectionError",
            "could not connect",
            "is the server running at {endpoint}, and reachable from here (network, firewall)?",
        ),
        (
            r"connection was dropped",
            "connection dropped",
            "the server closed the connection mid-reply: check its log and its load",
        ),
        (
            r"timeout|timed out",
            "timeout",
            "the server is slow or hung: raise --timeout or lower --concurrency",
        ),
        (
            r"malformed response",
            "malformed reply",
            "the reply is not the provider's format: does base_url ({endpoint}) point at the API?",
        ),
        (
            r"deadline of",
            "deadline reached",
            "retries ran out of time: raise --deadline or fix the cause the reason names",
        ),
    )
)


def cause_of(reason: str) -> Cause:
    """The class of failure ``reason`` names (:data:`OTHER` when it names none)."""
    for pattern, cause in _CAUSES:
        if pattern.search(reason):
            return cause
    return OTHER
