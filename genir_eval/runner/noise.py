"""Judge noise measured in a run (``--repeats K``, ``--repeat-sample N``): a seeded random
sample of the sessions judged ``K`` times by every judge, each repeat a fresh sample from
the model (its requests' keys carry the repeat's index, so neither the cache nor the journal
hands an earlier repeat's reply back), and each judge's noise computed from its labels
(:mod:`genir_eval.meta.noise`). Repeat 0 is the run's own judgment (from the journal: it
costs nothing again). An offline twin is deterministic: it is not repeated, and says so.

Each repeat's labels are also scored as the run scores its own (:func:`repeat_rows`): the
rows of ``repeats.jsonl``, one per (sampled session, repeat), with the values of every score
the repeated judges' labels feed, so ``compare`` can resample a session's repeats.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator, Sequence
from typing import Any

from genir_eval.judges.base import Judge, judge_sessions
from genir_eval.llm.engine import Engine
from genir_eval.llm.providers.base import Completion, Failure, Request
from genir_eval.meta.decide import noise_words
from genir_eval.meta.noise import judge_noise
from genir_eval.records import Session
from genir_eval.runner.assemble import JudgeInfo, build_tables
from genir_eval.runner.scenario import AggregateSpec

__all__ = ["Reservoir", "RepeatEngine", "Repeated", "measure_noise", "repeat_rows", "DETERMINISTIC"]

#: What the noise block says of a judge the offline provider answers.
DETERMINISTIC = "deterministic: an offline twin gives an item the same label every time"


class Reservoir:
    """A seeded uniform sample of ``size`` sessions from a stream seen once (Vitter's
    Algorithm R), fed window by window as the run reads them."""

    def __init__(self, size: int, seed: int = 0) -> None:
        self.size = size
        self.seen = 0
        self.items: list[Session] = []
        self._rng = random.Random(seed)

    def feed(self, sessions: list[Session]) -> list[Session]:
        for session in sessions:
            self.seen += 1
            if len(self.items) < self.size:
                self.items.append(session)
            else:
                slot = self._rng.randrange(self.seen)
                if slot < self.size:
                    self.items[slot] = session
        return sessions

    def windows(self, stream: Iterator[list[Session]]) -> Iterator[list[Session]]:
        return (self.feed(window) for window in stream)


class RepeatEngine:
    """``engine`` with every request's key under repeat index ``repeat``: the same question
    asked again as a new judgment (cached and journaled apart from the others)."""

    def __init__(self, engine: Engine, repeat: int) -> None:
        self._engine = engine
        self._repeat = repeat
        self._made: dict[int, tuple[Request, Request]] = {}

    def _again(self, request: Request) -> Request:
        known = self._made.get(id(request))
        if known is not None and known[0] is request:
            return known[1]
        again = dataclasses.replace(
            request, key=dataclasses.replace(request.key, repeat=self._repeat)
        )
        self._made[id(request)] = (request, again)
        return again

    async def complete(self, request: Request) -> Completion | Failure:
        return await self._engine.complete(self._again(request))

    async def record(self, request: Request, result: Completion | Failure, **more: Any) -> None:
        await self._engine.record(self._again(request), result, **more)

    def resume(self, request: Request) -> Any:
        return self._engine.resume(self._again(request))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


def _numbers(labels: Sequence[Any]) -> dict[tuple[str, str], float | None]:
    values: dict[tuple[str, str], float | None] = {}
    for label in labels:
        key = label.key
        value = label.value
        number = (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
        values[(key.session_id, f"{key.turn}:{key.item}")] = number
    return values


@dataclasses.dataclass
class Repeated:
    """What the repeats gave: each judge's noise block, and each repeated judge's labels
    per repeat (repeat 0 first; an offline twin is not repeated, so it has none)."""

    blocks: dict[str, dict[str, Any]]
    labels: dict[str, list[list[Any]]] = dataclasses.field(default_factory=dict)


async def measure_noise(
    judges: dict[str, Judge],
    engines: dict[str, Engine],
    sample: Sequence[Session],
    repeats: int,
) -> Repeated:
    """Each judge's noise block for ``meta.json``: its labels on ``sample`` asked
    ``repeats`` times (repeat 0 the run's own), or why there is none; and the labels."""
    result = Repeated({})
    for judge_id, judge in judges.items():
        engine = engines[judge_id]
        if engine.provider.name == "offline":
            result.blocks[judge_id] = {"deterministic": True, "note": DETERMINISTIC}
            continue
        runs = [await judge_sessions(judge, sample, engine)]  # type: ignore[arg-type]
        for repeat in range(1, repeats):
            again = RepeatEngine(engine, repeat)
            runs.append(await judge_sessions(judge, sample, again))  # type: ignore[arg-type]
        result.labels[judge_id] = [list(labels) for labels in runs]
        per_repeat = [_numbers(labels) for labels in runs]
        values = {key: [r.get(key) for r in per_repeat] for key in per_repeat[0]}
        noise = judge_noise(values)  # type: ignore[arg-type]
        result.blocks[judge_id] = (
            {"deterministic": False, **noise.to_dict()}
            if noise is not None
            else {
                "deterministic": False,
                "note": "no noise figure: fewer than two items with a number in every repeat",
            }
        )
    return result


def _fed(
    sample: Sequence[Session],
    labels: dict[str, list[list[Any]]],
    infos: Sequence[JudgeInfo],
    spec: AggregateSpec,
) -> set[str]:
    """The scores the repeated judges feed: those a row has no value of without any label
    and has one of with the repeated judges' repeat-0 labels (a gold score, or a judge's
    that is not repeated, is neither)."""
    bare = build_tables(sample, {}, infos, spec, combine=False)
    judged = build_tables(
        sample, {j: runs[0] for j, runs in labels.items()}, infos, spec, combine=False
    )
    pairs: list[tuple[Any, Any]] = [
        *zip(bare.sessions, judged.sessions, strict=True),
        *zip(bare.turns, judged.turns, strict=True),
    ]
    return {
        name
        for row_without, row in pairs
        for name, value in row.scores.items()
        if value is not None and row_without.scores.get(name) is None
    }


def repeat_rows(
    sample: Sequence[Session],
    labels: dict[str, list[list[Any]]],
    infos: Sequence[JudgeInfo],
    spec: AggregateSpec,
) -> list[dict[str, Any]]:
    """The rows of ``repeats.jsonl``: per sampled session and repeat, the values of the
    scores the repeated judges feed (:func:`_fed`) for the session and each turn, scored
    from that repeat's labels as the run scores its own (``None``: no value), and the
    judgments missing from that repeat with their reasons. Empty without a repeated judge."""
    if not labels:
        return []
    fed = _fed(sample, labels, infos, spec)
    repeats = min(len(runs) for runs in labels.values())
    rows: list[dict[str, Any]] = []
    for repeat in range(repeats):
        tables = build_tables(
            sample, {j: runs[repeat] for j, runs in labels.items()}, infos, spec, combine=False
        )
        turns: dict[str, list[dict[str, Any]]] = {}
        for turn in tables.turns:
            turns.setdefault(turn.session_id, []).append(
                {"turn": turn.turn, "scores": _kept(turn.scores, fed)}
            )
        missing: dict[str, list[dict[str, Any]]] = {}
        for failure in tables.failures:
            missing.setdefault(str(failure["session_id"]), []).append(
                {k: failure[k] for k in ("judge", "turn", "item", "reason")}
            )
        rows.extend(
            {
                "session_id": session.session_id,
                "repeat": repeat,
                "scores": _kept(session.scores, fed),
                "turns": turns.get(session.session_id, []),
                "missing": missing.get(session.session_id, []),
            }
            for session in tables.sessions
        )
    return rows


def _kept(scores: Any, fed: set[str]) -> dict[str, float | None]:
    """The fed scores of a row, an undefined number (NaN, infinite) written as ``None``."""
    return {
        name: None if value is None or not math.isfinite(value) else float(value)
        for name, value in scores.items()
        if name in fed
    }


async def noise_of_run(
    judging: Any, judges: dict[str, Judge], sample: Sequence[Session], repeats: int
) -> Repeated:
    """The run's judge-noise blocks and repeated labels, through the local judging step's
    engines (a Ray run's engines live on its workers: no block, said so, and no labels)."""
    groups = getattr(judging, "groups", None)
    engines = {
        spec.id: group.engine
        for group in groups or ()
        for spec in group.specs
        if group.engine is not None
    }
    if set(engines) != set(judges):
        note = "not measured: --repeats needs the local executor"
        return Repeated({judge_id: {"note": note} for judge_id in judges})
    return await measure_noise(judges, engines, sample, repeats)


def noise_line(blocks: dict[str, dict[str, Any]]) -> str:
    """One line for the terminal: each judge's noise in the report's words."""
    return "; ".join(f"{judge_id}: {noise_words(block)}" for judge_id, block in blocks.items())
