"""What the built-in judges share: options, generation settings, log excerpts for prompts."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from genir_eval.judges.base import JudgeStats, check_options
from genir_eval.judges.prompting import fence, load_template, session_language, template_version
from genir_eval.llm.base import GenerateConfig, JudgmentKey
from genir_eval.records import Session, Turn

__all__ = [
    "COMMON_OPTIONS",
    "JudgeContext",
    "BuiltinJudge",
    "generate_config",
    "citing_statements",
    "history",
    "fenced_turns",
    "MAX_STATEMENT_CHARS",
]

MAX_STATEMENT_CHARS = 1500

#: Options every built-in judge takes: the prompt's language, a paraphrased template, the
#: model and sampling settings of its calls.
COMMON_OPTIONS = ("language", "template", "model", "temperature", "max_tokens")


@dataclass(frozen=True)
class JudgeContext:
    """The structured inputs of one request, for offline twins (never sent or cached)."""

    session: Session
    turn: Turn | None
    options: Mapping[str, Any]
    link_id: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def generate_config(engine: Any, options: Mapping[str, Any], **overrides: Any) -> GenerateConfig:
    """Sampling settings: temperature 0 unless the options say otherwise; the model is the
    option ``model`` or the engine provider's model."""
    model = options.get("model") or getattr(getattr(engine, "provider", None), "model", "") or ""
    return GenerateConfig(
        model=str(model),
        temperature=float(options.get("temperature", 0.0)),
        max_tokens=int(options.get("max_tokens", overrides.pop("max_tokens", 1024))),
        logprobs=bool(overrides.pop("logprobs", False)),
        top_logprobs=overrides.pop("top_logprobs", None),
        **overrides,
    )


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

    #: Options a judge reads besides :data:`COMMON_OPTIONS` and its ``__init__`` keywords.
    extra_options: tuple[str, ...] = ()

    def __init__(self, **options: Any) -> None:
        check_options(self.name, options, self.accepted_options())
        self.options: Mapping[str, Any] = dict(options)
        self.stats = JudgeStats()

    @classmethod
    def accepted_options(cls) -> set[str]:
        """Every option this judge takes: the common ones, its ``extra_options`` and the
        keyword parameters of the ``__init__`` of the class and its bases."""
        accepted = set(COMMON_OPTIONS) | set(cls.extra_options)
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None:
                continue
            for parameter in inspect.signature(init).parameters.values():
                if parameter.kind is inspect.Parameter.KEYWORD_ONLY or (
                    parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                    and parameter.name != "self"
                ):
                    accepted.add(parameter.name)
        return accepted

    def language(self, session: Session) -> str:
        forced = self.options.get("language")
        return str(forced) if forced else session_language(session)

    def template_text(self, language: str) -> str:
        return load_template(str(self.options.get("template") or self.template), language)

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


def fenced_turns(session: Session, limit: int = 4000) -> str:
    """Every turn's query and response as fenced data blocks, responses cut at ``limit``."""
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
