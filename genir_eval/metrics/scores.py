"""A session's measure values: each measure of its turns and of the session, from the turns'
statement usefulness (:func:`measure_scores`) or cited statements (:func:`citation_scores`).
The runner names the values (one name per judge and measure) and puts them in its tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from genir_eval.metrics.aggregate import aggregate
from genir_eval.metrics.measures import QueryMeasure

__all__ = ["measure_scores", "citation_scores"]


def measure_scores(
    u_per_turn: Sequence[Sequence[float]], measures: Sequence[Any], names: Sequence[str], how: str
) -> tuple[list[dict[str, float | None]], dict[str, float | None]]:
    """Each statement-usefulness measure of a session's turns (one list of statement
    usefulness values a turn), as ``names`` name them: one dict of values a turn, and the
    session's values (a query measure's turn values aggregated ``how``, a session measure
    over all the turns)."""
    per_turn: list[dict[str, float | None]] = [{} for _ in u_per_turn]
    per_session: dict[str, float | None] = {}
    for measure, name in zip(measures, names, strict=True):
        if isinstance(measure, QueryMeasure):
            values = [measure.compute(u) for u in u_per_turn]
            per_session[name] = aggregate(values, how)
        else:
            values = [measure.compute([u]) if u else None for u in u_per_turn]
            per_session[name] = measure.compute(u_per_turn)
        for position, value in enumerate(values):
            per_turn[position][name] = value
    return per_turn, per_session


def citation_scores(
    statements: Sequence[Sequence[Any]], measures: Sequence[Any], names: Sequence[str]
) -> tuple[list[dict[str, float | None]], dict[str, float | None]]:
    """Each citation measure of a session's turns (one list of cited statements a turn), as
    ``names`` name them: one dict of values a turn, and the session's values (the measure
    over all its turns' statements together)."""
    per_turn: list[dict[str, float | None]] = [{} for _ in statements]
    per_session: dict[str, float | None] = {}
    for measure, name in zip(measures, names, strict=True):
        for position, turn_statements in enumerate(statements):
            per_turn[position][name] = measure.compute([turn_statements])
        per_session[name] = measure.compute(statements)
    return per_turn, per_session
