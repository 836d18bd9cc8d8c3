"""The ITEM judges (variants and baselines), registered by name.

See :mod:`genir_eval.judges.item` for the method."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from genir_eval.errors import ConfigError
from genir_eval.judges.base import JudgeStats, Label, ask, register_judge
from genir_eval.judges.common import generate_config
from genir_eval.judges.item.candidates import (
    PROMPT_VERSION,
    Candidate,
    candidates_for_turn,
    format_candidates,
    render_prompt,
)
from genir_eval.judges.item.loop import (
    VARIANTS,
    Iteration,
    LoopResult,
    RankStep,
    StopRule,
    run_loop,
)
from genir_eval.judges.item.replies import (
    joint_parser,
    parse_answer,
    parse_pointwise,
    ranking_parser,
    useful_parser,
)
from genir_eval.judges.options import (
    LANGUAGE,
    MAX_TOKENS,
    MODEL,
    TEMPERATURE,
    Option,
    check_judge_options,
    option_values,
)
from genir_eval.judges.prompting import fence, load_template, session_language, template_version
from genir_eval.llm.providers.base import Completion, JudgmentKey
from genir_eval.records import Session, Turn

if TYPE_CHECKING:
    from genir_eval.llm.engine import Engine
else:
    Engine = Any

__all__ = ["BASELINES", "JUDGES", "TURN_ITEM", "ItemJudge"]

BASELINES = ("item-vanilla", "item-joint", "item-ksample")
#: Every ITEM judge: the one-shot baselines, then the loops.
JUDGES = BASELINES + VARIANTS
TURN_ITEM = "item"


def _usage_extra(completion: Completion, _value: Any) -> Mapping[str, Any]:
    return {
        "input_tokens": completion.usage.input_tokens,
        "output_tokens": completion.usage.output_tokens,
    }


@dataclass
class _TurnRun:
    """The calls of one turn, for the trace: step, item, whether missing, tokens."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def note(self, step: str, label: Label) -> None:
        self.calls.append(
            {
                "step": step,
                "item": label.key.item,
                "missing": label.missing_reason,
                "resumed": bool(label.extra.get("resumed")),
                "input_tokens": int(label.extra.get("input_tokens", 0) or 0),
                "output_tokens": int(label.extra.get("output_tokens", 0) or 0),
            }
        )
        if label.missing_reason:
            self.reasons.append(f"{label.key.item}: {label.missing_reason}")

    def summary(self) -> dict[str, int]:
        return {
            "calls": len(self.calls),
            "fresh_calls": sum(1 for c in self.calls if not c["resumed"]),
            "input_tokens": sum(c["input_tokens"] for c in self.calls),
            "output_tokens": sum(c["output_tokens"] for c in self.calls),
        }


class _TurnSteps:
    """The steps of one turn's loop (answer, judge, rank), each one judgment through
    :func:`ask` with its own journal key, prompt and parser."""

    def __init__(
        self, judge: ItemJudge, session: Session, turn: Turn, engine: Engine, language: str
    ) -> None:
        self.owner, self.session, self.turn, self.engine = judge, session, turn, engine
        self.language = language
        self.candidates = candidates_for_turn(turn)
        self.known = [c.id for c in self.candidates]
        self.version = judge.prompt_version(language)
        self.config = generate_config(engine, judge.values, response_format="json")
        self.run = _TurnRun()

    def key(self, item: str, repeat: int = 0) -> JudgmentKey:
        return JudgmentKey(
            self.session.session_id, self.turn.index, item, self.owner.name, self.version, repeat
        )

    def _context(self, step: str, shown: Sequence[Candidate], **more: Any) -> dict[str, Any]:
        return {
            "step": step,
            "query": self.turn.query,
            "intent": self.session.intent,
            "language": self.language,
            "candidates": list(shown),
            "all_candidates": list(self.candidates),
            "offline": self.owner.offline,
            **more,
        }

    async def call(
        self,
        step: str,
        item: str,
        prompt: str,
        shown: Sequence[Candidate],
        parse: Callable[[str], Any],
        *,
        answer: str | None = None,
        repeat: int = 0,
        **more: Any,
    ) -> Any:
        values = {
            "query": fence(self.turn.query, "QUERY"),
            "candidates": format_candidates(shown, self.language),
        }
        if answer is not None:
            values["answer"] = fence(answer, "ANSWER")
        label = await ask(
            self.engine,
            self.key(item, repeat),
            render_prompt(prompt, self.language, **values),
            self.config,
            f"item.{step}",
            self._context(step, shown, answer=answer, **more),
            parse,
            stats=self.owner.stats,
            language=self.language,
            extra=_usage_extra,
        )
        self.run.note(step, label)
        return label.value

    async def answer(self, index: int, selected: Sequence[Candidate]) -> str | None:
        mode = self.owner.answer_mode
        return await self.call(
            "answer", f"iter{index}:answer", f"item_answer_{mode}", selected, parse_answer,
            mode=mode,
        )  # fmt: skip

    async def judge(self, index: int, answer: str, shown: Sequence[Candidate]) -> Any:
        if self.owner.judgment == "listwise":
            return await self.call(
                "judge", f"iter{index}:judge", "item_judge_listwise", shown,
                useful_parser(self.known), answer=answer,
            )  # fmt: skip
        verdicts = await asyncio.gather(
            *(
                self.call(
                    "judge_pointwise",
                    f"iter{index}:judge:link:{c.id}",
                    "item_judge_pointwise",
                    [c],
                    parse_pointwise,
                    answer=answer,
                )  # fmt: skip
                for c in shown
            )
        )
        if any(v is None for v in verdicts):
            return None
        return [c.id for c, v in zip(shown, verdicts, strict=True) if v]

    def rank(self, kind: str) -> RankStep:
        async def rank(index: int, answer: str, shown: Sequence[Candidate]) -> Any:
            return await self.call(
                f"rank_{kind}", f"iter{index}:rank_{kind}", f"item_rank_{kind}", shown,
                ranking_parser([c.id for c in shown]), answer=answer,
            )  # fmt: skip

        return rank


class ItemJudge:
    """One ITEM variant or baseline; build it with ``make_judge("item-as", ...)``.

    Its options are :attr:`OPTIONS`, one table for the six judges (``k`` is read by
    ``item-ar`` only, ``samples`` and ``seed`` by ``item-ksample``).
    """

    kind = "item"

    OPTIONS = (
        Option(
            "answer",
            "explicit",
            "pseudo-answer style: explicit or implicit",
            choices=("explicit", "implicit"),
        ),
        Option(
            "judgment",
            "listwise",
            "utility judgment: listwise or pointwise",
            choices=("listwise", "pointwise"),
        ),
        Option(
            "max_iterations", 3, "iterations of the answer -> judge -> rank loop", range=(1, 100)
        ),
        Option(
            "rouge_threshold",
            None,
            "stop when answers agree this much (ROUGE-L; off)",
            type="float",
            range=(0, 1),
        ),
        Option("k", 5, "top-k links kept by item-ar", range=(1, 10_000), only=("item-ar",)),
        Option(
            "samples", 5, "shuffled samples of item-ksample", range=(1, 100), only=("item-ksample",)
        ),
        Option(
            "seed", 0, "shuffle seed of item-ksample", range=(0, 2**63 - 1), only=("item-ksample",)
        ),
        Option("offline_threshold", 0.5, "the offline twin's lexical threshold", range=(0, 1)),
        Option(
            "offline_feedback", 0.5, "weight of feedback signals in the offline twin", range=(0, 1)
        ),
        MODEL,
        TEMPERATURE,
        MAX_TOKENS,
        LANGUAGE,
    )

    def __init__(self, name: str, **options: Any) -> None:
        if name not in JUDGES:
            raise ConfigError(f"unknown ITEM judge {name!r}")
        check_judge_options(name, self.OPTIONS, options)
        self.name = name
        self.options: Mapping[str, Any] = dict(options)
        self.values: Mapping[str, Any] = option_values(self.OPTIONS, options)
        self.answer_mode = str(self.values["answer"])
        self.judgment = str(self.values["judgment"])
        threshold = self.values["rouge_threshold"]
        self.rule = StopRule(
            int(self.values["max_iterations"]), None if threshold is None else float(threshold)
        )
        self.k = int(self.values["k"])
        self.samples = int(self.values["samples"])
        self.seed = int(self.values["seed"])
        self.offline = {
            "threshold": float(self.values["offline_threshold"]),
            "feedback": float(self.values["offline_feedback"]),
        }
        self.stats = JudgeStats()

    def templates(self) -> tuple[str, ...]:
        """The prompt templates this judge renders."""
        if self.name == "item-vanilla" or self.name == "item-ksample":
            return ("item_vanilla",)
        if self.name == "item-joint":
            return ("item_joint",)
        names = [f"item_answer_{self.answer_mode}"]
        if self.name == "item-ars":
            names.append("item_rank_relevance")
        if self.name == "item-ar":
            names.append("item_rank_utility")
        else:
            names.append(f"item_judge_{self.judgment}")
        return tuple(names)

    def prompt_version(self, language: str) -> str:
        """Covers every template of the loop and the options that shape it: a later step's
        prompt depends on an earlier step's reply, so editing any template must invalidate
        every journaled step, not only its own."""
        text = "\x00".join(load_template(name, language) for name in self.templates())
        shaping = {k: v for k, v in self.options.items() if k not in {"model", "max_tokens"}}
        return f"{PROMPT_VERSION}:{template_version(text, shaping)}"

    async def __call__(self, session: Session, engine: Engine) -> list[Label]:
        turns = [t for t in session.turns if t.links or t.cited_link_ids]
        results = await asyncio.gather(*(self._turn(session, t, engine) for t in turns))
        return [label for labels in results for label in labels]

    async def _turn(self, session: Session, turn: Turn, engine: Engine) -> list[Label]:
        language = str(self.values["language"] or session_language(session))
        steps = _TurnSteps(self, session, turn, engine, language)
        if self.name in VARIANTS:
            result = await run_loop(
                self.name,
                steps.candidates,
                self.rule,
                answer=steps.answer,
                judge=steps.judge,
                rank_relevance=steps.rank("relevance"),
                rank_utility=steps.rank("utility"),
                k=self.k,
                why_missing=lambda: "; ".join(steps.run.reasons) or None,
            )
        else:
            result = await self._baseline(steps.candidates, steps.call, steps.known)
        return self._labels(session, turn, steps.candidates, result, steps.run, steps.key)

    async def _baseline(
        self,
        candidates: Sequence[Candidate],
        call: Callable[..., Awaitable[Any]],
        known: Sequence[int],
    ) -> LoopResult:
        if self.name == "item-vanilla":
            useful = await call(
                "vanilla", "vanilla", "item_vanilla", candidates, useful_parser(known)
            )
            if useful is None:
                return LoopResult((), "missing", "the judgment ended missing")
            return LoopResult((Iteration(1, None, None, tuple(useful)),), "single_shot")
        if self.name == "item-joint":
            reply = await call("joint", "joint", "item_joint", candidates, joint_parser(known))
            if reply is None:
                return LoopResult((), "missing", "the judgment ended missing")
            it = Iteration(1, reply["answer"], None, tuple(reply["useful"]))
            return LoopResult((it,), "single_shot")
        # item-ksample: the same vanilla judgment over seeded shuffles, majority vote.
        rng = random.Random(self.seed)
        orders = []
        for _ in range(self.samples):
            order = list(candidates)
            rng.shuffle(order)
            orders.append(order)
        votes_list = await asyncio.gather(
            *(
                call(
                    "vanilla",
                    "ksample",
                    "item_vanilla",
                    order,
                    useful_parser(known),
                    repeat=j,
                )  # fmt: skip
                for j, order in enumerate(orders)
            )
        )
        valid = [v for v in votes_list if v is not None]
        if not valid:
            return LoopResult((), "missing", "every sample ended missing")
        votes = {cid: sum(1 for v in valid if cid in v) for cid in known}
        selected = tuple(cid for cid in known if votes[cid] * 2 > len(valid))
        # The vote count is a ranking (most votes first, citation order breaks ties).
        ranking = tuple(sorted(known, key=lambda cid: -votes[cid]))
        it = Iteration(1, None, ranking, selected)
        return LoopResult((it,), f"majority_of_{len(valid)}")

    def _labels(
        self,
        session: Session,
        turn: Turn,
        candidates: Sequence[Candidate],
        result: LoopResult,
        run: _TurnRun,
        key: Callable[..., JudgmentKey],
    ) -> list[Label]:
        trace = {
            "variant": self.name,
            "stop": result.stop,
            "iterations": [it.to_dict() for it in result.iterations],
            "candidates": [c.id for c in candidates],
            **run.summary(),
        }
        final = result.final
        if final is None:
            reason = result.missing_reason or "no iteration completed"
            labels = [Label(key(f"link:{c.id}"), None, missing_reason=reason) for c in candidates]
            labels.append(Label(key(TURN_ITEM), None, missing_reason=reason, extra=trace))
            return labels
        selected = set(final.selected)
        n = len(candidates)
        labels = []
        rounds = len(result.iterations)
        after = f"after {rounds} iteration{'s' if rounds != 1 else ''}"
        for c in candidates:
            extra: dict[str, Any] = {"in_set": c.id in selected}
            ranked = ""
            if final.ranking is not None:
                rank = final.ranking.index(c.id) + 1
                extra["rank"] = rank
                extra["graded"] = (n - rank + 1) / n
                ranked = f", ranked {rank} of {n}"
            extra["reason"] = (
                f"{'in' if c.id in selected else 'left out of'} the useful set {after}{ranked}"
            )
            labels.append(Label(key(f"link:{c.id}"), 1 if c.id in selected else 0, extra=extra))
        trace["reason"] = (
            f"{len(selected)} of {n} cited links judged useful {after} (stopped: {result.stop})"
        )
        if result.missing_reason:
            trace["missing_after"] = result.missing_reason
        labels.append(Label(key(TURN_ITEM), list(final.selected), extra=trace))
        return labels


def _factory(name: str) -> Callable[..., ItemJudge]:
    def make(**options: Any) -> ItemJudge:
        return ItemJudge(name, **options)

    make.__name__ = name.replace("-", "_")
    make.__doc__ = f"The {name} judge (see :class:`ItemJudge`)."
    return make


for _name in JUDGES:
    register_judge(_name)(_factory(_name))
