"""A provider that stands for a real one without calling it: what ``run --dry-run`` counts.

Each request the real provider would be sent is counted (its prompt tokens, an estimate of
its answer's, the most it may answer), unless the reply cache already holds it (looked up
under the real provider's key, as the run would: a hit costs nothing and is counted apart).
The reply handed back to the judge is the offline twin's to the same request, so a judge of
several steps goes on to the steps it would take; what the real model answers may lead a
multi-step judge elsewhere, so its later calls are an estimate too.

Tokens are counted with the model's own tokenizer where ``tiktoken`` is installed and knows
the model (OpenAI models), else by the stated approximation of four characters a token (the
rule of thumb for English BPE tokenizers; text in Chinese runs nearer one token a character,
so there it under-counts). The answer's tokens are the twin's reply's, cut to the fields the
prompt asks for (:func:`asked_part`), a stand-in for the length of the reply's format: a
model that writes more than it is asked answers longer, which the upper bound, the
request's ``max_tokens``, covers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from genir_eval.llm.providers.base import (
    Completion,
    GenerateConfig,
    Message,
    Provider,
    Request,
    Usage,
)
from genir_eval.llm.providers.offline import OfflineProvider, approx_tokens
from genir_eval.llm.store.cache import Cache, cache_key

__all__ = ["DryRunProvider", "DryTally", "asked_part", "token_counter"]

#: How tokens are counted without the model's tokenizer, as the dry run says.
APPROXIMATION = "about 4 characters a token (no tokenizer for the model installed)"


def token_counter(model: str) -> tuple[Callable[[str], int], str]:
    """A function counting ``model``'s tokens in a text, and its name: ``tiktoken``'s
    encoding for the model when the package is installed and knows it, else
    :data:`APPROXIMATION`."""
    try:
        import tiktoken  # type: ignore[import-not-found,unused-ignore]

        encoding = tiktoken.encoding_for_model(model)
    except Exception:  # noqa: BLE001 - not installed, an unknown model, no encoding file
        return approx_tokens, APPROXIMATION
    return (lambda text: len(encoding.encode(text, disallowed_special=()))), (
        f"tiktoken's {encoding.name} encoding for {model}"
    )


def asked_part(reply: str, prompt: str) -> str:
    """The part of a twin's JSON ``reply`` that ``prompt`` asks for: its top-level fields
    whose quoted names the prompt holds (``{"M": 2, "T": 3, "O": 3, "reason": ...}`` to a
    prompt asking for ``{"M": ..., "T": ..., "O": ...}`` is ``{"M": 2, "T": 3, "O": 3}``).
    A twin explains its evidence in fields no prompt asks a model for; counting them would
    over-estimate the answer. A reply that is not a JSON object, or of which no field is
    asked, is kept whole."""
    try:
        document = json.loads(reply)
    except ValueError:
        return reply
    if not isinstance(document, dict):
        return reply
    kept = {k: v for k, v in document.items() if f'"{k}"' in prompt}
    return json.dumps(kept, ensure_ascii=False) if kept else reply


@dataclass
class DryTally:
    """Per judge: the calls it would make, its cache hits, and their tokens."""

    calls: dict[str, int] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    answer_tokens: dict[str, int] = field(default_factory=dict)
    answer_limit: dict[str, int] = field(default_factory=dict)

    def add(self, judge: str, prompt: int, answer: int, limit: int) -> None:
        for table, value in (
            (self.calls, 1),
            (self.prompt_tokens, prompt),
            (self.answer_tokens, answer),
            (self.answer_limit, limit),
        ):
            table[judge] = table.get(judge, 0) + value

    def hit(self, judge: str) -> None:
        self.hits[judge] = self.hits.get(judge, 0) + 1

    def judges(self) -> list[str]:
        return sorted(set(self.calls) | set(self.hits))


class DryRunProvider(Provider):
    """Counts what ``real`` would be sent into ``tally`` and answers with the offline twin.
    ``cache``: the reply cache the run would read (looked up, never written). ``real`` is
    read for its cache key (base URL, version) and never called nor closed here."""

    cacheable = False
    rate_limited = False

    def __init__(
        self,
        real: Provider | None,
        *,
        name: str,
        model: str,
        base_url: str | None,
        cache: Cache | None,
        tally: DryTally,
    ) -> None:
        self.real = real
        self.name = name
        self.model = model
        self._base_url = real.base_url if real is not None else base_url
        self._version = real.version if real is not None else ""
        self.cache = cache
        self.tally = tally
        self.count, self.tokenizer = token_counter(model)
        self._twin = OfflineProvider()

    @property
    def base_url(self) -> str | None:
        return self._base_url

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, *, request: Request | None = None
    ) -> Completion:
        assert request is not None  # the engine always passes it
        judge = request.key.judge
        if self.cache is not None:
            fingerprint, _ = cache_key(self.name, self._base_url, request, version=self._version)
            hit = await self.cache.get(fingerprint)
            if hit is not None:
                self.tally.hit(judge)
                return hit
        twin = await self._twin.generate(messages, config, request=request)
        prompt = sum(self.count(m.content) for m in messages)
        asked = asked_part(twin.text, " ".join(m.content for m in messages))
        # the provider stops a reply at max_tokens: the twin's may be longer than that
        answer = min(self.count(asked), config.max_tokens)
        self.tally.add(judge, prompt, answer, config.max_tokens)
        return Completion(text=twin.text, model=self.model, usage=Usage(prompt, answer))
