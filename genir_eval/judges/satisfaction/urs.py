"""``satisfaction.urs``: URGE's task-type-aware user-satisfaction rubric, per turn and session.

Five dimensions per task type (see :data:`URS_DIMENSIONS`), each rated 1-10 after a short
critique, then an overall 1-10 score in URGE's bands (1-2 irrelevant, wrong or harmful; 3-4
harmless but does not meet the need; 5-6 meets it partly; 7-8 good on all dimensions; 9-10
only when excellent on all), with factuality and user satisfaction dominating and no reward
for length. One call rates every turn and the session. Each label's value is the overall
score; ``extra`` carries the dimensions, their mean, the critique and, where the provider
returns token logprobs, the probability-weighted overall score (``weighted``).
"""

from __future__ import annotations

from typing import Any

from genir_eval.judges.base import Label, ask, register_judge
from genir_eval.judges.common import (
    BuiltinJudge,
    JudgeContext,
    context_budget,
    fenced_turns,
    generate_config,
)
from genir_eval.judges.options import CONTEXT_TOKENS, LOGPROBS, TOP_LOGPROBS
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.judges.satisfaction.common import (
    DIMENSION_TEXT,
    dimensions_for,
    overall_offsets,
    parse_dimensional,
    rating_distributions,
    split_dimensional,
)
from genir_eval.llm.providers.base import Completion
from genir_eval.records import Session

__all__ = ["DimensionalSatisfactionJudge", "satisfaction_urs"]

NAME = "satisfaction.urs"

EMPHASIS = {
    "en": "Factuality and user_satisfaction weigh most in the overall score.",
    "zh": "总体得分中，factuality（事实性）和 user_satisfaction（用户满意度）权重最大。",
}


class DimensionalSatisfactionJudge(BuiltinJudge):
    """A satisfaction judge rating named dimensions before an overall score."""

    name = NAME
    kind = "satisfaction"
    template = "satisfaction_dimensions"
    # log-probability weighting of the rating (on by default; false for providers without)
    OPTIONS = (LOGPROBS, TOP_LOGPROBS, CONTEXT_TOKENS, *BuiltinJudge.OPTIONS)
    task = NAME

    def dimensions(self, session: Session) -> tuple[tuple[str, ...], bool]:
        return dimensions_for(session.task_type)

    def emphasis(self, language: str) -> str:
        return EMPHASIS[language]

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        dims, known = self.dimensions(session)
        n = len(session.turns)
        logprobs = bool(self.values["logprobs"])
        config = generate_config(
            engine,
            self.values,
            response_format="json",
            max_tokens=400 + 350 * (n + 1),
            logprobs=logprobs,
            top_logprobs=int(self.values["top_logprobs"]) if logprobs else None,
        )
        keys = ", ".join(f'"{d}": <1-10>' for d in dims)
        values = {
            "intent": fence(session.intent or "(not given)", "INTENT"),
            "task_type": fence(session.task_type or "unknown", "TASK TYPE"),
            "turns": fenced_turns(
                session, budget_tokens=context_budget(self.values, text, config.max_tokens)
            ),
            "dimensions": "\n".join(f"- {DIMENSION_TEXT[language][d]}" for d in dims),
            "emphasis": self.emphasis(language),
            "dimension_keys": "{" + keys + "}",
            "n_turns": n,
        }

        def weights(completion: Completion, _: Any) -> dict[str, Any]:
            return rating_distributions(completion, overall_offsets(completion.text))

        label = await ask(
            engine,
            self.key(session, None, "satisfaction", version),
            render_messages(text, values),
            config,
            self.task,
            JudgeContext(session, None, self.options, extra={"dimensions": dims}),
            lambda reply: parse_dimensional(reply, n, dims),
            stats=self.stats,
            language=language,
            extra=weights,
        )
        if not known:
            label = Label(
                key=label.key,
                value=label.value,
                missing_reason=label.missing_reason,
                raw=label.raw,
                prompt_hash=label.prompt_hash,
                extra={**label.extra, "task_type_fallback": True},
            )
        weighted = list(label.extra.get("weighted") or [])
        return split_dimensional(
            label,
            lambda turn, item: self.key(session, turn, item, version),
            n,
            weighted,
            list(label.extra.get("distributions") or []),
        )


@register_judge(NAME)
def satisfaction_urs(**options: Any) -> DimensionalSatisfactionJudge:
    """Options: logprobs (default true), template, language, model, temperature,
    max_tokens, context_tokens (the model's context window: long sessions' responses are
    cut to fit it; default 8,192)."""
    return DimensionalSatisfactionJudge(**options)
