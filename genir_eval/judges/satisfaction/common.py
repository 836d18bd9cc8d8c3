"""Shared parts of the satisfaction judges: URGE's dimensions, reply parsing, G-Eval weighting.

Per-turn and session satisfaction on a 1-10 scale. The task-type-aware dimensions and the
overall score bands follow the URGE framework's user-satisfaction rubric (URS); the
task-independent ones (coherence, coverage, consistency, correctness, clarity) are the
GAH-style set. The probability-weighted score is G-Eval's refinement (Liu et al., "G-Eval:
NLG Evaluation using GPT-4 with Better Human Alignment", EMNLP 2023): the rating is the
expectation of the rating tokens under the model's token probabilities, when the provider
returns them.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.judges.parsing import (
    ReplyError,
    expect_int,
    expect_key,
    expect_mapping,
    extract_object,
)
from genir_eval.judges.probabilities import label_distribution
from genir_eval.llm.providers.base import Completion, JudgmentKey

__all__ = [
    "URS_DIMENSIONS",
    "GAH_DIMENSIONS",
    "DEFAULT_TASK_TYPE",
    "DIMENSION_TEXT",
    "dimensions_for",
    "parse_dimensional",
    "weighted_rating_at",
    "rating_distributions",
    "RATINGS",
    "overall_offsets",
    "split_dimensional",
]

# Per task type, in the order URGE lists them; factuality and user satisfaction dominate.
URS_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "Factual QA": (
        "factuality",
        "user_satisfaction",
        "clarity",
        "completeness",
        "logical_coherence",
    ),
    "Solving Professional Problems": (
        "factuality",
        "user_satisfaction",
        "clarity",
        "logical_coherence",
        "completeness",
    ),
    "Text Assistant": (
        "clarity",
        "user_satisfaction",
        "logical_coherence",
        "factuality",
        "creativity",
    ),
    "Ask for Advice": (
        "user_satisfaction",
        "factuality",
        "fairness_and_responsibility",
        "creativity",
        "richness",
    ),
    "Seek Creativity": (
        "user_satisfaction",
        "logical_coherence",
        "creativity",
        "richness",
        "factuality",
    ),
    "Leisure": ("user_satisfaction", "engagement", "appropriateness", "creativity", "factuality"),
}
GAH_DIMENSIONS: tuple[str, ...] = ("coherence", "coverage", "consistency", "correctness", "clarity")
DEFAULT_TASK_TYPE = "Factual QA"

DIMENSION_TEXT = {
    "en": {
        "factuality": "factuality: the information is correct and up to date",
        "user_satisfaction": "user_satisfaction: the answer meets what the user asked for",
        "clarity": "clarity: easy to read and understand",
        "completeness": "completeness: covers what the query needs",
        "logical_coherence": "logical_coherence: well organised, no contradictions",
        "creativity": "creativity: original, useful ideas where the task calls for them",
        "fairness_and_responsibility": "fairness_and_responsibility: balanced, safe advice",
        "richness": "richness: enough relevant detail and options",
        "engagement": "engagement: interesting and pleasant to read",
        "appropriateness": "appropriateness: tone and content fit the request",
        "coherence": "coherence: the answer hangs together",
        "coverage": "coverage: covers the aspects of the query",
        "consistency": "consistency: consistent with itself and with its sources",
        "correctness": "correctness: free of factual errors",
    },
    "zh": {
        "factuality": "factuality（事实性）：信息正确且时效性好",
        "user_satisfaction": "user_satisfaction（用户满意度）：回答满足用户的要求",
        "clarity": "clarity（清晰度）：易读易懂",
        "completeness": "completeness（完整性）：涵盖查询所需内容",
        "logical_coherence": "logical_coherence（逻辑连贯性）：条理清楚、没有矛盾",
        "creativity": "creativity（创造性）：在任务需要时提供新颖有用的想法",
        "fairness_and_responsibility": "fairness_and_responsibility（公平与责任）：建议平衡、安全",
        "richness": "richness（丰富度）：相关细节和选项充分",
        "engagement": "engagement（吸引力）：有趣、读起来愉快",
        "appropriateness": "appropriateness（恰当性）：语气和内容符合请求",
        "coherence": "coherence（连贯性）：回答前后连贯",
        "coverage": "coverage（覆盖度）：覆盖查询的各个方面",
        "consistency": "consistency（一致性）：与自身及来源一致",
        "correctness": "correctness（正确性）：没有事实错误",
    },
}


def dimensions_for(task_type: str | None) -> tuple[tuple[str, ...], bool]:
    """The URS dimensions of ``task_type`` and whether the task type was known."""
    if task_type in URS_DIMENSIONS:
        return URS_DIMENSIONS[task_type], True
    return URS_DIMENSIONS[DEFAULT_TASK_TYPE], False


def _rating_block(obj: Mapping[str, Any], dims: Sequence[str], where: str) -> dict[str, Any]:
    block = expect_mapping(obj, where)
    raw_dims = expect_mapping(expect_key(block, "dimensions", "scores"), f"{where} dimensions")
    lowered = {re.sub(r"[\s-]+", "_", str(k).strip().lower()): v for k, v in raw_dims.items()}
    dimensions = {}
    for dim in dims:
        if dim not in lowered:
            raise ReplyError(f"{where}: missing dimension {dim!r}")
        dimensions[dim] = expect_int(lowered[dim], 1, 10, f"{where} {dim}")
    overall = expect_int(expect_key(block, "overall", "overall_score", "score"), 1, 10, where)
    critique = block.get("critique")
    return {
        "overall": overall,
        "dimensions": dimensions,
        "dimension_mean": sum(dimensions.values()) / len(dimensions),
        "critique": str(critique) if critique is not None else None,
    }


def parse_dimensional(text: str, n_turns: int, dims: Sequence[str]) -> dict[str, Any]:
    """``{"turns": [block x n_turns], "session": block}``; each block with every dimension
    (1-10) and an overall score (1-10). Turn numbers must be 1..n, each once."""
    obj = expect_mapping(extract_object(text, want=dict))
    turns = expect_key(obj, "turns")
    if not isinstance(turns, list):
        raise ReplyError("'turns' must be a list")
    parsed: dict[int, dict[str, Any]] = {}
    for position, block in enumerate(turns, start=1):
        block = expect_mapping(block, f"turn {position}")
        number = expect_int(block.get("turn", position), 1, max(n_turns, 1), "turn number")
        if number in parsed:
            raise ReplyError(f"turn {number} is rated twice")
        parsed[number] = _rating_block(block, dims, f"turn {number}")
    missing = [k for k in range(1, n_turns + 1) if k not in parsed]
    if missing:
        raise ReplyError(f"missing turns {missing}")
    session = _rating_block(expect_key(obj, "session"), dims, "session")
    return {"turns": [parsed[k] for k in range(1, n_turns + 1)], "session": session}


_OVERALL = re.compile(r"[\"']?overall[\"']?\s*:\s*[\"']?(\d+)")


def overall_offsets(text: str) -> list[int]:
    """Character offsets of the overall scores in a dimensional reply, in order."""
    return [m.start(1) for m in _OVERALL.finditer(text)]


def weighted_rating_at(
    completion: Completion, offset: int, lo: int = 1, hi: int = 10
) -> float | None:
    """G-Eval's probability-weighted rating for the number starting at ``offset`` of the
    reply: ``sum p(r) r / sum p(r)`` over the alternatives at that token that are integers
    in ``[lo, hi]``. ``None`` without logprobs, or when the number spans several tokens."""
    if not completion.logprobs:
        return None
    starts: list[int] = []
    position = 0
    for token in completion.logprobs:
        starts.append(position)
        position += len(token.token)
    index = bisect.bisect_right(starts, offset) - 1
    if index < 0:
        return None
    token = completion.logprobs[index]
    stripped = token.token.strip().strip("\"'")
    if not stripped.isdigit() or starts[index] + token.token.find(stripped) != offset:
        return None
    following = completion.logprobs[index + 1].token if index + 1 < len(completion.logprobs) else ""
    if following[:1].isdigit():
        return None  # "1" + "0": a multi-token number has no single distribution
    candidates = dict(token.top) if token.top else {}
    candidates.setdefault(token.token, token.logprob)
    weight = total = 0.0
    for alternative, logprob in candidates.items():
        text = alternative.strip().strip("\"'")
        if text.isdigit() and lo <= int(text) <= hi:
            p = math.exp(logprob)
            weight += p * int(text)
            total += p
    return weight / total if total > 0 else None


RATINGS = tuple(range(1, 11))


def rating_distributions(completion: Completion, offsets: Sequence[int]) -> dict[str, Any]:
    """``extra`` of a reply holding several 1-10 ratings: ``weighted`` (G-Eval's weighted
    rating of each, as before) and ``distributions`` (each rating's expected value, entropy
    and label probabilities, :mod:`genir_eval.judges.probabilities`, which also resolves a
    "10" written as two digit tokens); empty without logprobs."""
    weighted = [weighted_rating_at(completion, offset) for offset in offsets]
    found = [label_distribution(completion, offset, RATINGS) for offset in offsets]
    out: dict[str, Any] = {}
    if any(w is not None for w in weighted):
        out["weighted"] = weighted
    if any(d is not None for d in found):
        out["distributions"] = [d.as_extra() if d is not None else None for d in found]
    return out


def split_dimensional(
    label: Label,
    make_key: Any,
    n_turns: int,
    completion_weights: Sequence[float | None],
    distributions: Sequence[Mapping[str, Any] | None] = (),
) -> list[Label]:
    """One label per turn (item ``"turn"``) and one for the session from a parsed reply,
    each with its weighted rating and rating distribution when the reply had them."""
    keys: list[JudgmentKey] = [make_key(k, "turn") for k in range(1, n_turns + 1)]
    keys.append(make_key(None, "session"))
    if label.value is None:
        return [
            Label(
                key=k,
                value=None,
                missing_reason=label.missing_reason,
                raw=label.raw,
                prompt_hash=label.prompt_hash,
                extra=dict(label.extra),
            )
            for k in keys
        ]
    blocks = [*label.value["turns"], label.value["session"]]
    out = []
    for i, (key, block) in enumerate(zip(keys, blocks, strict=True)):
        extra = {
            "dimensions": block["dimensions"],
            "dimension_mean": block["dimension_mean"],
            "critique": block.get("critique"),
            **{k: v for k, v in label.extra.items() if k not in {"weighted", "distributions"}},
        }
        if i < len(distributions) and distributions[i] is not None:
            extra.update(distributions[i])  # type: ignore[arg-type]
        weighted = completion_weights[i] if i < len(completion_weights) else None
        if weighted is not None:
            extra["weighted"] = weighted
        out.append(
            Label(
                key=key,
                value=block["overall"],
                raw=label.raw,
                prompt_hash=label.prompt_hash,
                extra=extra,
            )
        )
    return out
