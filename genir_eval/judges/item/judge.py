"""ITEM: iterative utility judgments of a turn's cited links (answer -> judge -> rank, iterated).

Zhang et al. (2024), "Iterative Utility Judgments Framework via LLMs Inspired by Relevance
in Philosophy" (ITEM), judge the *utility* of passages for answering a query by iterating
three components: a pseudo-answer, a utility judgment, and a ranking. Here the passages are
a turn's cited links, each shown as title + url + the response statements citing it.

Variants (registered judges, kind ``"item"``):

- ``item-as``: answer from the selected links, then judge utility; repeat.
- ``item-ars``: answer, rank all links by relevance, judge utility over that order; repeat.
- ``item-ar``: answer, rank all links by utility; the top ``k`` (default 5) are the set.

Iteration 1 answers from every candidate in the log's own citation order; iteration ``i``
answers from the set of iteration ``i - 1``. The loop stops after ``max_iterations``
(default 3), as soon as the selected set equals the previous one (the set the iteration
started from, so iteration 1 selecting everything stops at once: the next answer would be
the same), or, when ``rouge_threshold`` is set, when ROUGE-L F of two successive
pseudo-answers exceeds it.

Baselines: ``item-vanilla`` (one listwise judgment, no answer), ``item-joint`` (answer and
judgment in one call) and ``item-ksample`` (``k`` vanilla judgments over seeded shuffles of
the candidates, majority vote).

Each judge returns a label per link (item ``link:<id>``, value 1 if in the utility set else
0, ``extra["rank"]`` and ``extra["graded"]`` from the final ranking when there is one) and a
turn label (item ``item``, value = the selected ids) whose ``extra["iterations"]`` keeps
every iteration's answer, ranking and set.

Every call goes through :func:`genir_eval.judges.base.ask` (journal, parse, one repair). The
offline twin is the same loop answered by the offline provider's handlers registered below:
an extractive pseudo-answer (the text of the selected links), lexical utility against query +
pseudo-answer, and BM25 ranking, i.e. pseudo-relevance feedback iterated under the same
stop rules.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from genir_eval.errors import ConfigError
from genir_eval.judges.base import JudgeStats, Label, ask, register_judge
from genir_eval.judges.common import generate_config
from genir_eval.judges.lexical import BM25, key_terms, rouge_l, tokenize
from genir_eval.judges.parsing import ReplyError, expect_key, extract_object
from genir_eval.judges.prompting import (
    fence,
    load_template,
    render_messages,
    session_language,
    template_version,
)
from genir_eval.llm.base import Completion, JudgmentKey, Message
from genir_eval.llm.offline import register_offline
from genir_eval.records import Session, Turn

if TYPE_CHECKING:
    from genir_eval.llm.engine import Engine
else:
    Engine = Any

__all__ = [
    "PROMPT_VERSION",
    "VARIANTS",
    "BASELINES",
    "Candidate",
    "Iteration",
    "StopRule",
    "LoopResult",
    "candidates_for_turn",
    "render_prompt",
    "stop_reason",
    "run_loop",
    "ItemJudge",
    "OFFLINE_TASKS",
    "offline_reply",
]

PROMPT_VERSION = "item-v1"
VARIANTS = ("item-as", "item-ars", "item-ar")
BASELINES = ("item-vanilla", "item-joint", "item-ksample")
TURN_ITEM = "item"


# --- candidates and prompts ---------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A cited link as the judge sees it: title, url and the statements citing it."""

    id: int
    title: str
    url: str
    statements: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join((self.title, *self.statements)).strip()


def candidates_for_turn(turn: Turn) -> tuple[Candidate, ...]:
    """The turn's links in the log's citation order (order of first citation, then the
    links no statement cites, by id), each with the distinct statements citing it."""
    citing: dict[int, list[str]] = {}
    for statement in turn.statements:
        for cid in statement.citations:
            texts = citing.setdefault(cid, [])
            if statement.text not in texts:
                texts.append(statement.text)
    order = list(turn.cited_link_ids)
    order += sorted(link.id for link in turn.links if link.id not in citing)
    out = []
    for cid in order:
        link = turn.link(cid)
        if link is None:
            # Cited but absent from the link list: judged on its statements alone.
            out.append(Candidate(cid, "", "", tuple(citing.get(cid, ()))))
        else:
            out.append(Candidate(cid, link.title, link.url, tuple(citing.get(cid, ()))))
    return tuple(out)


def _format_candidates(candidates: Sequence[Candidate], language: str) -> str:
    """Each candidate as its citation number and a fenced block (title, url, citing
    statements): everything copied from the log stays inside a fence."""
    cited = "被引用于" if language == "zh" else "cited for"
    blocks = []
    for c in candidates:
        lines = [f"title: {c.title}", f"url: {c.url}"]
        lines += [f"{cited}: {s}" for s in c.statements]
        blocks.append(f"[{c.id}]\n{fence(chr(10).join(lines), f'PAGE {c.id}')}")
    if not blocks:
        return "(无)" if language == "zh" else "(none)"
    return "\n\n".join(blocks)


def render_prompt(name: str, language: str, **values: str) -> tuple[Message, ...]:
    """The messages of packaged template ``name`` (``prompts/<name>.<language>.txt``)."""
    return render_messages(load_template(name, language), values)


# --- reply parsing ---------------------------------------------------------------------------


def _parse_answer(text: str) -> str:
    obj = extract_object(text, want=dict)
    answer = expect_key(obj, "answer", "information")
    if not isinstance(answer, str) or not answer.strip():
        raise ReplyError("field 'answer' must be a non-empty string")
    return answer.strip()


def _ids(value: Any, known: Sequence[int], what: str) -> list[int]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ReplyError(f"{what} must be a list of citation numbers")
    out: list[int] = []
    for v in value:
        digits = re.sub(r"[^\d]", "", str(v)) if not isinstance(v, bool) else ""
        if not digits:
            raise ReplyError(f"{what}: {v!r} is not a citation number")
        cid = int(digits)
        if cid not in known:
            raise ReplyError(f"{what}: unknown citation number {cid}")
        if cid not in out:
            out.append(cid)
    return out


def _useful_parser(known: Sequence[int]) -> Callable[[str], list[int]]:
    def parse(text: str) -> list[int]:
        obj = extract_object(text)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "useful", "utility", "selected")
        return sorted(_ids(obj, known, "useful"), key=list(known).index)

    return parse


def _joint_parser(known: Sequence[int]) -> Callable[[str], dict[str, Any]]:
    useful = _useful_parser(known)

    def parse(text: str) -> dict[str, Any]:
        obj = extract_object(text, want=dict)
        answer = expect_key(obj, "answer")
        if not isinstance(answer, str) or not answer.strip():
            raise ReplyError("field 'answer' must be a non-empty string")
        return {"answer": answer.strip(), "useful": useful(json.dumps(obj, ensure_ascii=False))}

    return parse


def _ranking_parser(known: Sequence[int]) -> Callable[[str], list[int]]:
    """A permutation of ``known``. Ids the reply leaves out are appended in the order they
    were shown (as RankGPT does), so a long list cut short still ranks; unknown ids are an
    error, and so is a ranking naming none of the candidates."""

    def parse(text: str) -> list[int]:
        obj = extract_object(text)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "ranking", "ranked", "order")
        ranked = _ids(obj, known, "ranking")
        if known and not ranked:
            raise ReplyError("ranking is empty")
        return ranked + [cid for cid in known if cid not in ranked]

    return parse


_YES = {"true", "yes", "1", "useful", "是", "有", "有用"}
_NO = {"false", "no", "0", "not useful", "否", "无", "没有", "无用"}


def _parse_pointwise(text: str) -> bool:
    obj = extract_object(text, want=dict)
    value = expect_key(obj, "useful", "utility")
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise ReplyError(f"field 'useful' must be true or false, got {value!r}")


# --- loop control ----------------------------------------------------------------------------


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


# --- the judge -------------------------------------------------------------------------------


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


_OPTIONS = {
    "model",
    "max_tokens",
    "answer",
    "judgment",
    "max_iterations",
    "rouge_threshold",
    "k",
    "samples",
    "seed",
    "offline_threshold",
    "offline_feedback",
    "language",
    "temperature",
}


class ItemJudge:
    """One ITEM variant or baseline; build it with ``make_judge("item-as", ...)``.

    Options: ``answer`` ``"explicit"`` | ``"implicit"``; ``judgment`` ``"listwise"`` |
    ``"pointwise"``; ``max_iterations`` (3); ``rouge_threshold`` (off); ``k`` (top-k of
    ``item-ar``, 5); ``samples`` and ``seed`` (``item-ksample``: 5 shuffles, seed 0);
    ``model`` and ``max_tokens`` for the calls; ``offline_threshold`` (0.5) and
    ``offline_feedback`` (0.5) tune the offline twin's lexical judgment.
    """

    kind = "item"

    def __init__(self, name: str, **options: Any) -> None:
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ConfigError(f"{name}: unknown options {sorted(unknown)}")
        if name not in VARIANTS + BASELINES:
            raise ConfigError(f"unknown ITEM judge {name!r}")
        self.name = name
        self.options: Mapping[str, Any] = dict(options)
        self.answer_mode = str(options.get("answer", "explicit"))
        if self.answer_mode not in ("explicit", "implicit"):
            raise ConfigError("answer must be 'explicit' or 'implicit'")
        self.judgment = str(options.get("judgment", "listwise"))
        if self.judgment not in ("listwise", "pointwise"):
            raise ConfigError("judgment must be 'listwise' or 'pointwise'")
        self.rule = StopRule(
            int(options.get("max_iterations", 3)),
            None if options.get("rouge_threshold") is None else float(options["rouge_threshold"]),
        )
        self.k = int(options.get("k", 5))
        self.samples = int(options.get("samples", 5))
        self.seed = int(options.get("seed", 0))
        if self.k < 1 or self.samples < 1:
            raise ConfigError("k and samples must be >= 1")
        self.offline = {
            "threshold": float(options.get("offline_threshold", 0.5)),
            "feedback": float(options.get("offline_feedback", 0.5)),
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
        candidates = candidates_for_turn(turn)
        language = str(self.options.get("language") or session_language(session))
        version = self.prompt_version(language)
        config = generate_config(engine, self.options, response_format="json")
        run = _TurnRun()
        known = [c.id for c in candidates]

        def key(item: str, repeat: int = 0) -> JudgmentKey:
            return JudgmentKey(session.session_id, turn.index, item, self.name, version, repeat)

        def context(step: str, shown: Sequence[Candidate], **more: Any) -> dict[str, Any]:
            return {
                "step": step,
                "query": turn.query,
                "intent": session.intent,
                "language": language,
                "candidates": list(shown),
                "all_candidates": list(candidates),
                "offline": self.offline,
                **more,
            }

        async def call(
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
                "query": fence(turn.query, "QUERY"),
                "candidates": _format_candidates(shown, language),
            }
            if answer is not None:
                values["answer"] = fence(answer, "ANSWER")
            label = await ask(
                engine,
                key(item, repeat),
                render_prompt(prompt, language, **values),
                config,
                f"item.{step}",
                context(step, shown, answer=answer, **more),
                parse,
                stats=self.stats,
                language=language,
                extra=_usage_extra,
            )
            run.note(step, label)
            return label.value

        async def answer_step(index: int, selected: Sequence[Candidate]) -> str | None:
            prompt = f"item_answer_{self.answer_mode}"
            return await call(
                "answer", f"iter{index}:answer", prompt, selected, _parse_answer,
                mode=self.answer_mode,
            )  # fmt: skip

        async def judge_step(index: int, answer: str, shown: Sequence[Candidate]) -> Any:
            if self.judgment == "listwise":
                return await call(
                    "judge", f"iter{index}:judge", "item_judge_listwise", shown,
                    _useful_parser(known), answer=answer,
                )  # fmt: skip
            verdicts = await asyncio.gather(
                *(
                    call(
                        "judge_pointwise",
                        f"iter{index}:judge:link:{c.id}",
                        "item_judge_pointwise",
                        [c],
                        _parse_pointwise,
                        answer=answer,
                    )  # fmt: skip
                    for c in shown
                )
            )
            if any(v is None for v in verdicts):
                return None
            return [c.id for c, v in zip(shown, verdicts, strict=True) if v]

        def rank_step(kind: str) -> RankStep:
            async def rank(index: int, answer: str, shown: Sequence[Candidate]) -> Any:
                return await call(
                    f"rank_{kind}", f"iter{index}:rank_{kind}", f"item_rank_{kind}", shown,
                    _ranking_parser([c.id for c in shown]), answer=answer,
                )  # fmt: skip

            return rank

        if self.name in VARIANTS:
            result = await run_loop(
                self.name,
                candidates,
                self.rule,
                answer=answer_step,
                judge=judge_step,
                rank_relevance=rank_step("relevance"),
                rank_utility=rank_step("utility"),
                k=self.k,
                why_missing=lambda: "; ".join(run.reasons) or None,
            )
        else:
            result = await self._baseline(candidates, call, known)
        return self._labels(session, turn, candidates, result, run, key)

    async def _baseline(
        self,
        candidates: Sequence[Candidate],
        call: Callable[..., Awaitable[Any]],
        known: Sequence[int],
    ) -> LoopResult:
        if self.name == "item-vanilla":
            useful = await call(
                "vanilla", "vanilla", "item_vanilla", candidates, _useful_parser(known)
            )
            if useful is None:
                return LoopResult((), "missing", "the judgment ended missing")
            return LoopResult((Iteration(1, None, None, tuple(useful)),), "single_shot")
        if self.name == "item-joint":
            reply = await call("joint", "joint", "item_joint", candidates, _joint_parser(known))
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
                    _useful_parser(known),
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
        for c in candidates:
            extra: dict[str, Any] = {"in_set": c.id in selected}
            if final.ranking is not None:
                rank = final.ranking.index(c.id) + 1
                extra["rank"] = rank
                extra["graded"] = (n - rank + 1) / n
            labels.append(Label(key(f"link:{c.id}"), 1 if c.id in selected else 0, extra=extra))
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


for _name in VARIANTS + BASELINES:
    register_judge(_name)(_factory(_name))


# --- offline twin ----------------------------------------------------------------------------


def _extractive_answer(candidates: Sequence[Candidate]) -> str:
    """The pseudo-answer of the offline twin: the sentences of the selected candidates."""
    sentences: list[str] = []
    for c in candidates:
        for s in (c.title, *c.statements):
            if s and s not in sentences:
                sentences.append(s)
    return "\n".join(sentences)


def _lexical_scores(ctx: Mapping[str, Any], shown: Sequence[Candidate]) -> dict[int, float]:
    """Query + pseudo-answer against each candidate (pseudo-relevance feedback).

    ``s(c) = (1 - w) * BM25(query, c) / max + w * BM25(answer, c) / max`` with ``w`` the
    feedback weight (0 without an answer); each part is normalised by its maximum over all
    of the turn's candidates, so pointwise calls score as listwise ones do.
    """
    pool: list[Candidate] = list(ctx.get("all_candidates") or shown)
    index = BM25([tokenize(c.text) for c in pool])
    query_scores = index.scores(key_terms(ctx["query"]))
    answer = ctx.get("answer")
    weight = float(ctx["offline"]["feedback"]) if answer else 0.0
    answer_scores = index.scores(tokenize(answer)) if answer else [0.0] * len(pool)

    def normalised(values: list[float]) -> list[float]:
        top = max(values, default=0.0)
        return [v / top if top > 0 else 0.0 for v in values]

    q, a = normalised(query_scores), normalised(answer_scores)
    if not any(q):
        # A query sharing no term with any candidate: rely on the pseudo-answer alone.
        weight = 1.0 if answer else weight
    by_id = {c.id: (1 - weight) * q[i] + weight * a[i] for i, c in enumerate(pool)}
    return {c.id: by_id[c.id] for c in shown}


def offline_reply(request: Any) -> str:
    """The offline twin's reply to an ITEM request, in the format the LLM is asked for.

    Dispatches on ``request.context["step"]``: the extractive pseudo-answer, the lexical
    utility set (score >= ``offline.threshold`` of the best), BM25 rankings.
    """
    ctx: Mapping[str, Any] = request.context
    step = ctx["step"]
    shown: list[Candidate] = list(ctx["candidates"])
    if step == "answer":
        if ctx.get("mode") == "implicit":
            terms = key_terms(ctx["query"])
            text = "; ".join(terms) or ctx["query"]
        else:
            text = _extractive_answer(shown) or ctx["query"]
        return json.dumps({"answer": text}, ensure_ascii=False)
    if step == "joint":
        answer = _extractive_answer(shown)
        ctx = {**ctx, "answer": answer}
    scores = _lexical_scores(ctx, shown)
    threshold = float(ctx["offline"]["threshold"])
    if step in ("rank_relevance", "rank_utility"):
        order = sorted(shown, key=lambda c: -scores[c.id])
        return json.dumps({"ranking": [c.id for c in order]})
    if step == "judge_pointwise":
        return json.dumps({"useful": scores[shown[0].id] >= threshold})
    useful = [c.id for c in shown if scores[c.id] >= threshold]
    if step == "joint":
        return json.dumps({"answer": ctx["answer"], "useful": useful}, ensure_ascii=False)
    return json.dumps({"useful": useful})


OFFLINE_TASKS = tuple(
    f"item.{step}"
    for step in (
        "answer",
        "judge",
        "judge_pointwise",
        "rank_relevance",
        "rank_utility",
        "vanilla",
        "joint",
    )
)

for _task in OFFLINE_TASKS:
    register_offline(_task, offline_reply)
