"""What the built-in judges share: options, generation settings, log excerpts for prompts."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from genir_eval.judges.base import JudgeStats, Label, ask
from genir_eval.judges.options import (
    CONTEXT_TOKENS,
    LANGUAGE,
    MAX_TOKENS,
    MODEL,
    TEMPERATURE,
    TEMPLATE,
    TOP_LOGPROBS,
    Option,
    check_judge_options,
    option_values,
)
from genir_eval.judges.probabilities import LabelDistribution, sample_distribution
from genir_eval.judges.prompting import fence, load_template, session_language, template_version
from genir_eval.llm.providers.base import GenerateConfig, JudgmentKey
from genir_eval.records import Session, Turn

__all__ = [
    "JudgeContext",
    "BuiltinJudge",
    "generate_config",
    "citing_statements",
    "history",
    "fenced_turns",
    "MAX_STATEMENT_CHARS",
    "graded_config",
    "estimate_tokens",
    "context_budget",
    "DEFAULT_CONTEXT_TOKENS",
    "with_samples",
    "ask_graded",
    "link_values",
    "mean_distribution",
    "DEFAULT_TOP_LOGPROBS",
    "SAMPLE_TEMPERATURE",
]

#: Alternatives asked per token (the option ``top_logprobs``'s default).
DEFAULT_TOP_LOGPROBS = TOP_LOGPROBS.default
#: Temperature of the extra samples drawn when a provider gives no logprobs (``samples=k``).
SAMPLE_TEMPERATURE = 0.7

MAX_STATEMENT_CHARS = 1500


@dataclass(frozen=True)
class JudgeContext:
    """The structured inputs of one request, for offline twins (never sent or cached)."""

    session: Session
    turn: Turn | None
    options: Mapping[str, Any]
    link_id: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def generate_config(engine: Any, options: Mapping[str, Any], **overrides: Any) -> GenerateConfig:
    """Sampling settings from a judge's option values (:func:`~genir_eval.judges.options.
    option_values`: every option of its table, defaults included): the model is the option
    ``model`` or the engine provider's model; ``max_tokens`` the option, else the judge's own
    budget (the override), else 1,024."""
    model = options["model"] or getattr(getattr(engine, "provider", None), "model", "") or ""
    own = overrides.pop("max_tokens", 1024)
    return GenerateConfig(
        model=str(model),
        temperature=float(options["temperature"]),
        max_tokens=int(own if options["max_tokens"] is None else options["max_tokens"]),
        logprobs=bool(overrides.pop("logprobs", False)),
        top_logprobs=overrides.pop("top_logprobs", None),
        **overrides,
    )


def graded_config(
    engine: Any,
    options: Mapping[str, Any],
    *,
    max_tokens: int,
    schema: Mapping[str, Any] | None = None,
    logprobs: bool = True,
) -> GenerateConfig:
    """Settings of a graded judge: JSON replies, token logprobs with the top alternatives
    (for the expected label; option ``logprobs=false`` turns them off), ``max_tokens`` the
    judge's own budget unless the options set one, and with the option
    ``response_format=json_schema`` the judge's reply ``schema`` for servers that constrain
    decoding to it (OpenAI, llama.cpp, vLLM); the default ``json_object`` asks only for JSON.
    A judge whose reply is not a grade passes ``logprobs=False``."""
    logprobs = bool(options["logprobs"]) if "logprobs" in options else logprobs
    mode = str(options["response_format"])
    return generate_config(
        engine,
        options,
        response_format="json",
        max_tokens=max_tokens,
        logprobs=logprobs,
        top_logprobs=int(options["top_logprobs"]) if logprobs else None,
        json_schema=schema if mode == "json_schema" else None,
    )


def mean_distribution(found: Sequence[LabelDistribution | None]) -> dict[str, Any]:
    """``extra`` fields for a label that is the mean of several graded values (simulated
    judges): the mean of their expected labels and entropies; empty unless all have one."""
    if not found or any(d is None for d in found):
        return {}
    present = [d for d in found if d is not None]
    return {
        "expected": sum(d.expected for d in present) / len(present),
        "entropy_bits": sum(d.entropy_bits for d in present) / len(present),
        "expected_source": present[0].source,
    }


async def with_samples(
    label: Label, samples: int, again: Callable[[int, float], Awaitable[Label]]
) -> Label:
    """``label`` with an expected label from ``samples`` replies when it has none (the
    provider gave no logprobs): ``again(repeat, temperature)`` asks the same question once
    more under repeat index ``repeat``; the expected label is the mean of the present
    labels and the entropy that of their empirical distribution. ``label`` itself (the
    greedy reply) stays the argmax label."""
    if samples <= 1 or label.value is None or "expected" in label.extra:
        return label
    if not isinstance(label.value, int | float):
        return label
    extra_labels = await asyncio.gather(
        *(again(repeat, SAMPLE_TEMPERATURE) for repeat in range(1, samples))
    )
    values = [label.value, *(lb.value for lb in extra_labels)]
    distribution = sample_distribution([v if isinstance(v, int | float) else None for v in values])
    if distribution is None:
        return label
    extra = {**label.extra, **distribution.as_extra(), "samples": values}
    return dataclasses.replace(label, extra=extra)


async def ask_graded(
    engine: Any,
    key: JudgmentKey,
    messages: Sequence[Any],
    config: GenerateConfig,
    task: str,
    context: Any,
    parse: Callable[[str], Any],
    *,
    stats: JudgeStats,
    language: str,
    expected: Callable[[Any, Any], Mapping[str, Any]],
    samples: int,
    finish: Callable[[Label], Label] | None = None,
) -> Label:
    """One graded judgment (a label on a scale): the greedy reply, its expected label and
    entropy read from the label tokens' logprobs by ``expected``; where the provider gave
    none and ``samples`` > 1, from that many replies (:func:`with_samples`, the extra ones
    asked at :data:`SAMPLE_TEMPERATURE` without logprobs). ``finish`` turns each parsed
    reply's label into the judge's label (e.g. several simulated judges into their mean)."""
    done = finish or (lambda label: label)

    async def again(repeat: int, temperature: float) -> Label:
        sampled = dataclasses.replace(
            config, temperature=temperature, logprobs=False, top_logprobs=None
        )
        label = await ask(
            engine,
            dataclasses.replace(key, repeat=repeat),
            messages,
            sampled,
            task,
            context,
            parse,
            stats=stats,
            language=language,
        )
        return done(label)

    first = await ask(
        engine,
        key,
        messages,
        config,
        task,
        context,
        parse,
        stats=stats,
        language=language,
        extra=expected,
    )
    return await with_samples(done(first), samples, again)


def link_values(session: Session, turn: Turn, link_id: int) -> dict[str, str]:
    """The fenced template values every per-link prompt shows: the query, the session's
    intent, the link's title and url, and the statements that cite it."""
    link = turn.link(link_id)
    return {
        "query": fence(turn.query, "QUERY"),
        "intent": fence(session.intent or "(not given)", "INTENT"),
        "title": fence(link.title if link else "(unknown)", "TITLE"),
        "url": fence(link.url if link else "(unknown)", "URL"),
        "statements": fence(citing_statements(turn, link_id), "STATEMENTS"),
    }


def citing_statements(turn: Turn, link_id: int, limit: int = MAX_STATEMENT_CHARS) -> str:
    """The statements of ``turn`` citing ``link_id``, one per line, cut at ``limit``."""
    lines = [f"- {s.text.strip()}" for s in turn.statements if link_id in s.citations]
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + " …"


def history(session: Session, turn: Turn) -> str:
    """The queries asked before ``turn``, one per line (or "(none)")."""
    earlier = [t.query for t in session.turns if t.index < turn.index]
    return "\n".join(f"{i}. {q}" for i, q in enumerate(earlier, start=1)) or "(none)"


class BuiltinJudge:
    """Base of the built-in judges: name, kind, options, counters and prompt loading."""

    name: str = ""
    kind: str = ""
    template: str = ""
    task: str = ""

    #: Every option the judge takes (:class:`~genir_eval.judges.options.Option`); a judge
    #: adds its own to these, the generation settings and the template file.
    OPTIONS: tuple[Option, ...] = (MODEL, TEMPERATURE, MAX_TOKENS, LANGUAGE, TEMPLATE)

    def __init__(self, **options: Any) -> None:
        check_judge_options(self.name, self.OPTIONS, options)
        #: the options as given (they name the judge: its ``repr``, its prompt version)
        self.options: Mapping[str, Any] = dict(options)
        #: every option's value, defaults included: what the judge reads
        self.values: Mapping[str, Any] = option_values(self.OPTIONS, options)
        self.stats = JudgeStats()

    def language(self, session: Session) -> str:
        forced = self.values["language"]
        return str(forced) if forced else session_language(session)

    def template_text(self, language: str) -> str:
        return load_template(str(self.values["template"] or self.template), language)

    def prompt_version(self, text: str) -> str:
        shaping = {k: v for k, v in self.options.items() if k not in {"model", "max_tokens"}}
        return template_version(text, shaping)

    def key(
        self, session: Session, turn: int | None, item: str, version: str, repeat: int = 0
    ) -> JudgmentKey:
        return JudgmentKey(
            session_id=session.session_id,
            turn=turn,
            item=item,
            judge=self.name,
            prompt_version=version,
            repeat=repeat,
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(self.options.items()))
        return f"make_judge({self.name!r}{', ' if args else ''}{args})"


#: The context window assumed for session-level prompts unless the option ``context_tokens``
#: says otherwise: that of the small local models (8,192 tokens) genir-eval is measured
#: with; a larger model only sees long sessions' responses cut shorter.
DEFAULT_CONTEXT_TOKENS = CONTEXT_TOKENS.default
#: Room left for the chat template's own tokens and the estimate's error.
CONTEXT_MARGIN = 256
_MIN_RESPONSE_CHARS = 200


def estimate_tokens(text: str) -> int:
    """An estimate of ``text``'s tokens without the model's tokenizer, meant to be high: one
    per CJK character (Qwen and GPT tokenizers spend about 0.6-1 on one) and one per three
    other characters (about four for English)."""
    wide = sum(1 for ch in text if "\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef")
    return wide + (len(text) - wide + 2) // 3


def context_budget(options: Mapping[str, Any], template: str, max_tokens: int) -> int:
    """Tokens left for the logged data of a prompt built from ``template``: the context
    window (option ``context_tokens``, default :data:`DEFAULT_CONTEXT_TOKENS`) minus the
    template, the reply's ``max_tokens`` and a margin."""
    window = int(options["context_tokens"])
    return window - estimate_tokens(template) - max_tokens - CONTEXT_MARGIN


def fenced_turns(session: Session, limit: int = 4000, budget_tokens: int | None = None) -> str:
    """Every turn's query and response as fenced data blocks, responses cut at ``limit``
    characters, and shorter (by quarters, down to 200 characters each) until the blocks'
    estimated tokens fit ``budget_tokens`` when it is given, so a long session does not
    overflow a small model's context."""
    text = _fenced_turns(session, limit)
    while (
        budget_tokens is not None
        and estimate_tokens(text) > budget_tokens
        and limit > _MIN_RESPONSE_CHARS
    ):
        limit = max(_MIN_RESPONSE_CHARS, int(limit * 0.75))
        text = _fenced_turns(session, limit)
    return text


def _fenced_turns(session: Session, limit: int) -> str:
    blocks = []
    for turn in session.turns:
        response = turn.response_text
        if len(response) > limit:
            response = response[:limit] + " …"
        blocks.append(
            f"Turn {turn.index}\n{fence(turn.query, f'QUERY {turn.index}')}\n"
            f"{fence(response, f'RESPONSE {turn.index}')}"
        )
    return "\n\n".join(blocks)
