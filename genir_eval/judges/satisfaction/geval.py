"""``satisfaction.geval``: a 1-10 rating per turn and one for the session, as one list.

G-Eval style (Liu et al., EMNLP 2023): evaluation steps in the prompt, then the ratings as a
JSON list ``{"scores": [turn 1, ..., turn n, session]}``. Where the provider returns token
logprobs, each label's ``extra["weighted"]`` is the probability-weighted rating.
"""

from __future__ import annotations

import re
from typing import Any

from genir_eval.judges.base import Label, ask, register_judge
from genir_eval.judges.common import (
    BuiltinJudge,
    JudgeContext,
    context_budget,
    fenced_turns,
    graded_config,
)
from genir_eval.judges.options import CONTEXT_TOKENS, LOGPROBS, RESPONSE_FORMAT, TOP_LOGPROBS
from genir_eval.judges.parsing import ReplyError, expect_int, expect_key, extract_object
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.judges.satisfaction.common import rating_distributions
from genir_eval.llm.providers.base import Completion
from genir_eval.records import Session

__all__ = ["GevalSatisfactionJudge", "satisfaction_geval", "parse_geval", "score_offsets"]

NAME = "satisfaction.geval"


SLOT = {"en": "<turn {}>", "zh": "<第 {} 轮>"}
SESSION_SLOT = {"en": "<session>", "zh": "<整个会话>"}


def geval_schema(n_turns: int) -> dict[str, Any]:
    """The reply's JSON schema (for ``response_format=json_schema``): exactly one 1-10
    integer per turn and one for the session."""
    return {
        "type": "object",
        "properties": {
            "scores": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": 10},
                "minItems": n_turns + 1,
                "maxItems": n_turns + 1,
            }
        },
        "required": ["scores"],
        "additionalProperties": False,
    }


def parse_geval(text: str, n_turns: int) -> list[int]:
    """``n_turns + 1`` integers in 1-10, the session's last."""
    obj = extract_object(text)
    scores = obj if isinstance(obj, list) else expect_key(obj, "scores", "ratings")
    if not isinstance(scores, list):
        raise ReplyError("'scores' must be a list")
    if len(scores) != n_turns + 1:
        raise ReplyError(
            f"expected {n_turns + 1} scores ({n_turns} turns + session), got {len(scores)}"
        )
    return [expect_int(s, 1, 10, f"score {i + 1}") for i, s in enumerate(scores)]


def score_offsets(text: str) -> list[int]:
    """Offsets of the numbers inside the reply's ``scores`` list."""
    match = re.search(r"[\"']?scores[\"']?\s*:\s*\[([^\]]*)\]", text)
    if match is None:
        return []
    return [match.start(1) + m.start() for m in re.finditer(r"\d+", match.group(1))]


class GevalSatisfactionJudge(BuiltinJudge):
    name = NAME
    kind = "satisfaction"
    template = "satisfaction_geval"
    # log-probability weighting of the rating (on by default; false for providers without)
    OPTIONS = (LOGPROBS, TOP_LOGPROBS, CONTEXT_TOKENS, RESPONSE_FORMAT, *BuiltinJudge.OPTIONS)
    task = NAME

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        n = len(session.turns)
        config = graded_config(engine, self.values, max_tokens=256, schema=geval_schema(n))
        # Every slot named: with "<turn 1>, ..., <turn n>" a small model counted the dots
        # (a one-turn session got three scores from the local 1.5B model).
        slots = [SLOT[language].format(i) for i in range(1, n + 1)] + [SESSION_SLOT[language]]
        values = {
            "intent": fence(session.intent or "(not given)", "INTENT"),
            "task_type": fence(session.task_type or "unknown", "TASK TYPE"),
            "turns": fenced_turns(
                session, budget_tokens=context_budget(self.values, text, config.max_tokens)
            ),
            "n_turns": n,
            "n_plus_one": n + 1,
            "score_slots": ", ".join(slots),
        }

        def weights(completion: Completion, _: Any) -> dict[str, Any]:
            return rating_distributions(completion, score_offsets(completion.text))

        label = await ask(
            engine,
            self.key(session, None, "satisfaction", version),
            render_messages(text, values),
            config,
            self.task,
            JudgeContext(session, None, self.options),
            lambda reply: parse_geval(reply, n),
            stats=self.stats,
            language=language,
            extra=weights,
        )
        keys = [self.key(session, t.index, "turn", version) for t in session.turns]
        keys.append(self.key(session, None, "session", version))
        weighted = list(label.extra.get("weighted") or [])
        distributions = list(label.extra.get("distributions") or [])
        out = []
        for i, key in enumerate(keys):
            extra = {k: v for k, v in label.extra.items() if k not in {"weighted", "distributions"}}
            if i < len(weighted) and weighted[i] is not None:
                extra["weighted"] = weighted[i]
            if i < len(distributions) and distributions[i] is not None:
                extra.update(distributions[i])
            out.append(
                Label(
                    key=key,
                    value=None if label.value is None else label.value[i],
                    missing_reason=label.missing_reason,
                    raw=label.raw,
                    prompt_hash=label.prompt_hash,
                    extra=extra,
                )
            )
        return out


@register_judge(NAME)
def satisfaction_geval(**options: Any) -> GevalSatisfactionJudge:
    """Options: logprobs (default true), template, language, model, temperature,
    max_tokens, context_tokens (the model's context window: long sessions' responses are
    cut to fit it; default 8,192)."""
    return GevalSatisfactionJudge(**options)
