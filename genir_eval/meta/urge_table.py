"""URGE's link-based correlation table: how well usefulness measures track user satisfaction.

Query level: each turn's positional weighting of its gold statement usefulness ``u_k``
(:mod:`genir_eval.metrics.usefulness`) against the user's satisfaction with that turn,
pooled over all turns of all sessions. Session level: URGE's session measures of the gold
``u`` per turn, and query -> session aggregations of the gold query satisfaction, against
the user's satisfaction with the session. Correlations and their bootstrap intervals come
from :func:`genir_eval.meta.stats.correlations`; one seed resamples the same pairs for
every measure, so measures are compared on the same resamples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from genir_eval.errors import InputError
from genir_eval.meta.stats import correlations
from genir_eval.metrics.aggregate import AGGREGATIONS, aggregate
from genir_eval.metrics.measures import MEASURES, WEIGHTINGS, QueryMeasure, SessionMeasure
from genir_eval.metrics.usefulness import gold_statement_usefulness
from genir_eval.records import Session

__all__ = [
    "QUERY_LEVEL",
    "SESSION_MEASURES",
    "QUERY_TO_SESSION",
    "SESSION_LEVEL",
    "USERS_OWN_RATINGS",
    "session_metrics",
    "urge_table",
]

QUERY_LEVEL: tuple[str, ...] = WEIGHTINGS
"""Query-level rows: URGE's positional weightings of a turn's ``u``."""

SESSION_MEASURES: tuple[str, ...] = ("sdcg_urge", "srbp_urge", "rsdcg_urge", "rsrbp_urge")
"""Session-level rows computed from ``u`` per turn, with URGE's published parameters."""

QUERY_TO_SESSION: tuple[str, ...] = tuple(f"q2s_{how}" for how in AGGREGATIONS)
"""Session-level rows aggregating the gold query satisfaction over turns: the users' own
ratings, not a metric. How well they track the users' session satisfaction is a ceiling for
any metric (how far per-query judgments, even the users' own, can tell a session); the table
keeps them apart, under ``users_own_ratings``."""

USERS_OWN_RATINGS = (
    "the users' own query satisfaction averaged per session (each q2s_ aggregation): a "
    "ceiling for any metric, not a metric"
)

SESSION_LEVEL: tuple[str, ...] = SESSION_MEASURES + QUERY_TO_SESSION


def _query_satisfaction(session: Session) -> list[float | None]:
    gold = session.gold
    given = () if gold is None or gold.query_satisfaction is None else gold.query_satisfaction
    return [given[i] if i < len(given) else None for i in range(len(session.turns))]


def _session_satisfaction(session: Session) -> float | None:
    return None if session.gold is None else session.gold.session_satisfaction


def session_metrics(session: Session) -> dict[str, float | None]:
    """The session-level values of :data:`SESSION_LEVEL` for one session (``None`` = no value)."""
    u = gold_statement_usefulness(session)
    values: dict[str, float | None] = {}
    for name in SESSION_MEASURES:
        measure = MEASURES[name]()
        assert isinstance(measure, SessionMeasure)
        values[name] = measure.compute(u)
    satisfaction = _query_satisfaction(session)
    for how in AGGREGATIONS:
        values[f"q2s_{how}"] = aggregate(satisfaction, how)
    return values


def _table(
    sessions: Sequence[Session],
    per_session: dict[str, dict[str, float | None]],
    *,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    query_level: dict[str, Any] = {}
    for name in QUERY_LEVEL:
        measure = MEASURES[name]()
        assert isinstance(measure, QueryMeasure)
        scores: list[float | None] = []
        satisfaction: list[float | None] = []
        for session in sessions:
            scores.extend(measure.compute(u) for u in gold_statement_usefulness(session))
            satisfaction.extend(_query_satisfaction(session))
        query_level[name] = correlations(scores, satisfaction, n_boot=n_boot, seed=seed)
    targets = [_session_satisfaction(s) for s in sessions]

    def against_users(names: Sequence[str]) -> dict[str, Any]:
        return {
            name: correlations(
                [per_session[s.session_id][name] for s in sessions],
                targets,
                n_boot=n_boot,
                seed=seed,
            )
            for name in names
        }

    return {
        "query_level": query_level,
        "session_level": against_users(SESSION_MEASURES),
        "users_own_ratings": against_users(QUERY_TO_SESSION),
    }


def urge_table(sessions: Iterable[Session], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """URGE's link-based correlation table for ``sessions`` with gold labels.

    Returns ``{"query_level": {NAME: stats}, "session_level": {NAME: stats},
    "users_own_ratings": {NAME: stats}, "users_own_ratings_are": text, "sessions":
    {SESSION_ID: {METRIC: value}}, "by_task_type": {TYPE: {"query_level", "session_level",
    "users_own_ratings"}}}``
    where ``stats`` is :func:`~genir_eval.meta.stats.correlations`'s dict (``pearson``,
    ``spearman``, ``kendall``, ``n``, ``ci95``). Query-level names are :data:`QUERY_LEVEL`
    (``n`` counts turns), session-level names :data:`SESSION_MEASURES` and, apart as the users'
    own ratings (a ceiling, not metrics), :data:`QUERY_TO_SESSION` (``n`` counts sessions);
    turns or sessions without a value or a satisfaction rating are left out of ``n``.
    ``by_task_type`` has one entry per task type present (sessions without one only count
    overall). Session ids must be unique.
    """
    sessions = list(sessions)
    per_session: dict[str, dict[str, float | None]] = {}
    for session in sessions:
        if session.session_id in per_session:
            raise InputError(f"session id {session.session_id!r} occurs twice")
        per_session[session.session_id] = session_metrics(session)
    out = _table(sessions, per_session, n_boot=n_boot, seed=seed)
    out["users_own_ratings_are"] = USERS_OWN_RATINGS
    out["sessions"] = per_session
    task_types = sorted({s.task_type for s in sessions if s.task_type is not None})
    out["by_task_type"] = {
        task: _table(
            [s for s in sessions if s.task_type == task], per_session, n_boot=n_boot, seed=seed
        )
        for task in task_types
    }
    return out
