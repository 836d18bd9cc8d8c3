"""Judge noise measured in a run (``--repeats K``, ``--repeat-sample N``): a seeded random
sample of the sessions judged ``K`` times by every judge, each repeat a fresh sample from
the model (its requests' keys carry the repeat's index, so neither the cache nor the journal
hands an earlier repeat's reply back), and each judge's noise computed from its labels
(:mod:`genir_eval.meta.noise`). Repeat 0 is the run's own judgment (from the journal: it
costs nothing again). An offline twin is deterministic: it is not repeated, and says so.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from typing import Any

from genir_eval.judges.base import Judge, judge_sessions
from genir_eval.llm.engine import Engine
from genir_eval.llm.providers.base import Completion, Failure, Request
from genir_eval.meta.decide import noise_words
from genir_eval.meta.noise import judge_noise
from genir_eval.records import Session

__all__ = ["Reservoir", "RepeatEngine", "measure_noise", "DETERMINISTIC"]

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


async def measure_noise(
    judges: dict[str, Judge],
    engines: dict[str, Engine],
    sample: Sequence[Session],
    repeats: int,
) -> dict[str, dict[str, Any]]:
    """Each judge's noise block for ``meta.json``: its labels on ``sample`` asked
    ``repeats`` times (repeat 0 the run's own), or why there is none."""
    blocks: dict[str, dict[str, Any]] = {}
    for judge_id, judge in judges.items():
        engine = engines[judge_id]
        if engine.provider.name == "offline":
            blocks[judge_id] = {"deterministic": True, "note": DETERMINISTIC}
            continue
        runs = [await judge_sessions(judge, sample, engine)]  # type: ignore[arg-type]
        for repeat in range(1, repeats):
            again = RepeatEngine(engine, repeat)
            runs.append(await judge_sessions(judge, sample, again))  # type: ignore[arg-type]
        per_repeat = [_numbers(labels) for labels in runs]
        values = {key: [r.get(key) for r in per_repeat] for key in per_repeat[0]}
        noise = judge_noise(values)  # type: ignore[arg-type]
        blocks[judge_id] = (
            {"deterministic": False, **noise.to_dict()}
            if noise is not None
            else {
                "deterministic": False,
                "note": "no noise figure: fewer than two items with a number in every repeat",
            }
        )
    return blocks


async def noise_of_run(
    judging: Any, judges: dict[str, Judge], sample: Sequence[Session], repeats: int
) -> dict[str, dict[str, Any]]:
    """The run's judge-noise blocks, through the local judging step's engines (a Ray run's
    engines live on its workers: no block, said so)."""
    groups = getattr(judging, "groups", None)
    engines = {
        spec.id: group.engine
        for group in groups or ()
        for spec in group.specs
        if group.engine is not None
    }
    if set(engines) != set(judges):
        note = "not measured: --repeats needs the local executor"
        return {judge_id: {"note": note} for judge_id in judges}
    return await measure_noise(judges, engines, sample, repeats)


def noise_line(blocks: dict[str, dict[str, Any]]) -> str:
    """One line for the terminal: each judge's noise in the report's words."""
    return "; ".join(f"{judge_id}: {noise_words(block)}" for judge_id, block in blocks.items())
