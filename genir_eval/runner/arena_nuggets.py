"""The arena's nugget scores: each system's answers scored by the nugget judge, beside the
pairwise ranking (``genir-eval arena --nuggets``).

Every system's answers to a query are pooled to make the query's nuggets, as TREC pools the
systems compared (the query id is the session id, or the log's topic, with ``#<turn>`` in a
session of several turns: the arena's ``match="session"``); each answer is then assigned
against them through the arena's engine. Per system: the mean of TREC 2024 RAG's four nugget
scores over its answers, each with a 95% interval from the bootstrap over queries, and the
answers whose label is missing.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from genir_eval.ingest import iter_sessions
from genir_eval.judges.base import judge_sessions
from genir_eval.judges.nuggets.kind import SCORES, turn_scores
from genir_eval.judges.registry import make_judge
from genir_eval.meta.resample import session_bootstrap
from genir_eval.records import Session

__all__ = ["nugget_judge", "nugget_scores"]

#: Answers judged at once (the memory bound: their sessions and labels).
WINDOW = 200


def _mean(values: Sequence[float], _gold: Sequence[float] = ()) -> float | None:
    return sum(values) / len(values) if values else None


def nugget_judge(systems: Sequence[Any], options: Mapping[str, Any]) -> Any:
    """The nugget judge with ``options``, bound to every system's answers (the pools read,
    a given nugget file checked against their queries): a bad option or file is refused
    here, before the arena judges a pair."""
    judge: Any = make_judge("nuggets", **{"pool": "run", **dict(options)})

    def every() -> Iterator[Session]:
        for system in systems:
            yield from iter_sessions(system.path)

    judge.bind_run(every, None)
    return judge


async def nugget_scores(
    systems: Sequence[Any],
    judge: Any,
    engine: Any,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Each system's nugget scores (see the module docstring); ``systems`` have ``name`` and
    ``path``, ``judge`` is :func:`nugget_judge`'s."""
    table: dict[str, Any] = {}
    for system in systems:
        values: dict[str, list[tuple[str, float]]] = defaultdict(list)
        answers = missing = 0
        stream = iter(iter_sessions(system.path))
        while batch := list(itertools.islice(stream, WINDOW)):
            for label in await judge_sessions(judge, batch, engine):
                answers += 1
                if label.value is None:
                    missing += 1
                    continue
                query = str(label.value.get("qid"))
                for name, value in turn_scores(label.value).items():
                    if value is not None:
                        values[name].append((query, value))
        row: dict[str, Any] = {"name": system.name, "answers": answers, "missing": missing}
        row["ci95"] = {}
        for name, *_ in SCORES:
            pairs = values.get(name, [])
            numbers = [v for _, v in pairs]
            row[name] = _mean(numbers)
            row["ci95"][name] = session_bootstrap(
                _mean, numbers, numbers, [q for q, _ in pairs], n_boot=resamples, seed=seed
            )
        table[system.name] = row
    return {"options": dict(judge.options), "systems": table}
