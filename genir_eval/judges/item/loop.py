"""ITEM's loop: answer -> judge (-> rank) iterated under the stop rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.judges.item.candidates import Candidate
from genir_eval.judges.lexical import rouge_l

__all__ = ["VARIANTS", "StopRule", "Iteration", "LoopResult", "stop_reason", "run_loop"]

VARIANTS = ("item-as", "item-ars", "item-ar")


@dataclass(frozen=True)
class StopRule:
    """When the loop ends: after ``max_iterations``, when the set stops changing, or (if
    ``rouge_threshold`` is set) when successive pseudo-answers have ROUGE-L F above it."""

    max_iterations: int = 3
    rouge_threshold: float | None = None

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ConfigError("max_iterations must be >= 1")
        if self.rouge_threshold is not None and not 0.0 <= self.rouge_threshold <= 1.0:
            raise ConfigError("rouge_threshold must be in [0, 1]")


@dataclass(frozen=True)
class Iteration:
    """One pass of the loop: the pseudo-answer, the ranking (if the variant ranks) and the
    selected set (in ranking order when ranked, else citation order)."""

    index: int
    answer: str | None
    ranking: tuple[int, ...] | None
    selected: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "iteration": self.index,
            "answer": self.answer,
            "ranking": None if self.ranking is None else list(self.ranking),
            "selected": list(self.selected),
        }


def stop_reason(
    rule: StopRule, start: Sequence[int], iterations: Sequence[Iteration]
) -> str | None:
    """Why the loop stops after ``iterations`` (``None`` to go on). ``start`` is the set
    iteration 1 answered from (every candidate)."""
    if not iterations:
        return None
    last = iterations[-1]
    previous_set = iterations[-2].selected if len(iterations) > 1 else tuple(start)
    if set(last.selected) == set(previous_set):
        return "set_unchanged"
    if rule.rouge_threshold is not None and len(iterations) > 1:
        a, b = iterations[-2].answer, last.answer
        if a is not None and b is not None and rouge_l(b, a).f > rule.rouge_threshold:
            return "rouge_l"
    if len(iterations) >= rule.max_iterations:
        return "max_iterations"
    return None


# Steps of one iteration: each returns a value or None when the call ended missing.
AnswerStep = Callable[[int, Sequence[Candidate]], Awaitable[str | None]]
RankStep = Callable[[int, str, Sequence[Candidate]], Awaitable[list[int] | None]]
JudgeStep = Callable[[int, str, Sequence[Candidate]], Awaitable[list[int] | None]]


@dataclass(frozen=True)
class LoopResult:
    iterations: tuple[Iteration, ...]
    stop: str
    missing_reason: str | None = None

    @property
    def final(self) -> Iteration | None:
        return self.iterations[-1] if self.iterations else None


async def run_loop(
    variant: str,
    candidates: Sequence[Candidate],
    rule: StopRule,
    *,
    answer: AnswerStep,
    judge: JudgeStep,
    rank_relevance: RankStep,
    rank_utility: RankStep,
    k: int = 5,
    why_missing: Callable[[], str | None] = lambda: None,
) -> LoopResult:
    """Iterate ``variant`` (``item-as``, ``item-ars`` or ``item-ar``) over ``candidates``.

    A step that ends missing stops the loop (``stop="missing"``); the iterations completed
    before it are kept and the last of them is the result.
    """
    by_id = {c.id: c for c in candidates}
    start = tuple(c.id for c in candidates)
    current = start
    done: list[Iteration] = []

    def missing() -> LoopResult:
        return LoopResult(tuple(done), "missing", why_missing() or "a step ended missing")

    for index in range(1, rule.max_iterations + 1):
        pseudo = await answer(index, [by_id[cid] for cid in current])
        if pseudo is None:
            return missing()
        ranking: list[int] | None = None
        if variant == "item-as":
            selected = await judge(index, pseudo, candidates)
        elif variant == "item-ars":
            ranking = await rank_relevance(index, pseudo, candidates)
            if ranking is None:
                return missing()
            selected = await judge(index, pseudo, [by_id[cid] for cid in ranking])
            if selected is not None:
                selected = [cid for cid in ranking if cid in selected]
        elif variant == "item-ar":
            ranking = await rank_utility(index, pseudo, candidates)
            selected = None if ranking is None else ranking[:k]
        else:
            raise ConfigError(f"unknown ITEM variant {variant!r}; expected one of {VARIANTS}")
        if selected is None:
            return missing()
        it = Iteration(index, pseudo, None if ranking is None else tuple(ranking), tuple(selected))
        done.append(it)
        reason = stop_reason(rule, start, done)
        if reason is not None:
            return LoopResult(tuple(done), reason)
        current = it.selected
    raise AssertionError("unreachable: stop_reason ends the loop at max_iterations")
