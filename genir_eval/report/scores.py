"""Every score of a run summarised without gold: mean with its interval, median, distribution,
and how many sessions (or turns) have no value, with why.

This is what a product team reads first when its logs carry no satisfaction ratings: the
report's score table and the score table ``genir-eval run`` prints come from here.

The interval of a mean is a seeded percentile bootstrap (resampling sessions, or turns);
past :data:`BOOTSTRAP_MAX_N` values it is the normal approximation ``mean +- 1.96 s/sqrt(n)``,
which the bootstrap converges to at such sizes and which costs nothing. Below
:data:`SMALL_N` values no interval is given: the summary is flagged ``small`` instead, since
a bootstrap of a handful of values (``[1.00, 1.00]`` for five equal ones) says nothing about
the uncertainty.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from genir_eval.errors import ConfigError
from genir_eval.judges.kinds import judge_kind
from genir_eval.meta.decide import MIN_N
from genir_eval.metrics.parse import parse_measure
from genir_eval.report.tables import LevelTable, LinkKeys, read_level, read_link_keys
from genir_eval.rundir.folder import Level, Run

__all__ = [
    "SMALL_N",
    "BOOTSTRAP_MAX_N",
    "HISTOGRAM_BINS",
    "ScoreSummary",
    "summarize",
    "score_summaries",
    "missing_reasons",
    "link_judge_ids",
    "scenario_measures",
    "offline_judges",
]

SMALL_N = MIN_N  # the one rule: genir_eval.meta.decide
BOOTSTRAP_MAX_N = 20_000
HISTOGRAM_BINS = 10
# Bootstrap resamples are drawn in chunks of about this many values (bounded memory).
_CHUNK_VALUES = 1_000_000


@dataclass(frozen=True)
class ScoreSummary:
    """One score at one level over a run. ``ci`` is ``None`` when ``small`` (n < 10) or
    when nothing varies; ``missing_reasons`` counts the rows without a value by reason."""

    name: str
    level: str
    n: int
    missing: int
    mean: float | None = None
    ci: tuple[float, float] | None = None
    ci_method: str | None = None
    median: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    histogram: tuple[int, ...] = ()
    missing_reasons: Mapping[str, int] = field(default_factory=dict)

    @property
    def small(self) -> bool:
        return self.n < SMALL_N


def _bootstrap_mean_ci(values: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    n = len(values)
    per_chunk = max(1, _CHUNK_VALUES // n)
    means: list[np.ndarray] = []
    done = 0
    while done < n_boot:
        size = min(per_chunk, n_boot - done)
        idx = rng.integers(0, n, size=(size, n))
        means.append(values[idx].mean(axis=1))
        done += size
    all_means = np.concatenate(means)
    lo, hi = np.percentile(all_means, [2.5, 97.5])
    return float(lo), float(hi)


def summarize(
    name: str,
    values: Sequence[float | None] | np.ndarray,
    *,
    level: str = "session",
    n_boot: int = 1000,
    seed: int = 0,
    reasons: Mapping[str, int] | None = None,
) -> ScoreSummary:
    """The summary of one score's ``values`` (``None``, or NaN in an array, = no value for
    that row)."""
    if isinstance(values, np.ndarray):
        present = values[np.isfinite(values)].astype(float)
    else:
        present = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = int(present.size)
    missing = len(values) - n
    if n == 0:
        return ScoreSummary(name, level, 0, missing, missing_reasons=dict(reasons or {}))
    mean = float(present.mean())
    lo_v, hi_v = float(present.min()), float(present.max())
    # values equal up to float noise (1 - 1e-16) count as equal: no spread to show
    varies = hi_v - lo_v > 1e-9 * max(1.0, abs(lo_v), abs(hi_v))
    ci: tuple[float, float] | None = None
    method: str | None = None
    if n >= SMALL_N and varies:
        if n <= BOOTSTRAP_MAX_N and n_boot > 0:
            ci, method = _bootstrap_mean_ci(present, n_boot, seed), "bootstrap"
        else:
            half = 1.96 * float(present.std(ddof=1)) / math.sqrt(n)
            ci, method = (mean - half, mean + half), "normal"
    if varies:
        counts, _ = np.histogram(present, bins=HISTOGRAM_BINS, range=(lo_v, hi_v))
    else:
        counts = np.array([n])
    return ScoreSummary(
        name=name,
        level=level,
        n=n,
        missing=missing,
        mean=mean,
        ci=ci,
        ci_method=method,
        median=float(np.median(present)),
        minimum=lo_v,
        maximum=hi_v,
        histogram=tuple(int(c) for c in counts),
        missing_reasons=dict(reasons or {}),
    )


def scenario_measures(run: Run) -> list[str]:
    """The link measures the scenario asked for (``aggregate.measures``)."""
    document = (run.info.get("scenario") or {}).get("document") or {}
    aggregate = document.get("aggregate") or {} if isinstance(document, Mapping) else {}
    measures = aggregate.get("measures") if isinstance(aggregate, Mapping) else None
    return [str(m) for m in measures or ()]


def link_judge_ids(run: Run) -> list[str]:
    """The judges whose link labels feed the link measures, the first giving the plain
    names (``sdcg_urge``), the others ``sdcg_urge@<judge>``."""
    document = (run.info.get("scenario") or {}).get("document") or {}
    aggregate = document.get("aggregate") or {} if isinstance(document, Mapping) else {}
    chosen = aggregate.get("link_judges") if isinstance(aggregate, Mapping) else None
    if chosen:
        return [str(j) for j in chosen]
    return [
        str(j.get("id") or j.get("name"))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping) and judge_kind(str(j.get("kind"))).feeds_link_measures
    ]


def offline_judges(run: Run) -> list[str]:
    """The judges answered by offline twins (deterministic baselines, not LLM judgments)."""
    return [
        str(j.get("id") or j.get("name"))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping) and j.get("provider") == "offline"
    ]


def _is_citation_measure(text: str) -> bool:
    try:
        return parse_measure(text).LEVEL == "citation"
    except ConfigError:
        return False


def _nugget_measure(text: str) -> bool:
    try:
        return parse_measure(text).LEVEL == "nugget"
    except ConfigError:
        return False


def nugget_judge_ids(run: Run) -> list[str]:
    """The judges whose labels feed the nugget measures, the first giving the plain names."""
    return [
        str(j.get("id") or j.get("name"))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping) and judge_kind(str(j.get("kind"))).judges_nuggets
    ]


def _short(reason: str) -> str:
    """A failure reason reduced to its class (``permanent: HTTP 400 ...`` -> ``permanent``)."""
    head = reason.split(":", 1)[0].strip()
    return head[:60] or "missing"


class FailureIndex:
    """The run's missing judgments by judge and session (and turn, at ``level="turn"``):
    the most frequent reason of each, looked up in O(log n). Kept as a sorted array of
    64-bit keys beside an array of reason codes (12 bytes a failure, whatever the number of
    failures; the distinct reasons are kept once each), read in one pass over the
    failures."""

    def __init__(self, run: Run, level: Level = "session") -> None:
        codes: dict[str, int] = {}
        keys: array[int] = array("q")
        reasons: array[int] = array("l")
        for failure in run.iter_failures():
            judge, session = str(failure.get("judge")), str(failure.get("session_id"))
            code = codes.setdefault(_short(str(failure.get("reason") or "missing")), len(codes))
            keys.append(hash((judge, session)))
            reasons.append(code)
            if level == "turn" and failure.get("turn") is not None:
                keys.append(hash((judge, session, str(failure.get("turn")))))
                reasons.append(code)
        order = np.argsort(np.frombuffer(keys, dtype=np.int64), kind="stable")
        self._keys = np.frombuffer(keys, dtype=np.int64)[order]
        self._codes = np.frombuffer(reasons, dtype=np.dtype("l"))[order]
        self._reasons = list(codes)

    def reason(self, judge: str, session_id: str, turn: int | None = None) -> str | None:
        """The most frequent reason among the judge's failures in that session (or turn;
        of equally frequent ones, the one the run met first); ``None`` when it has none."""
        key = hash((judge, session_id) if turn is None else (judge, session_id, str(turn)))
        lo = int(np.searchsorted(self._keys, key, side="left"))
        hi = int(np.searchsorted(self._keys, key, side="right"))
        if hi <= lo:
            return None
        counts = Counter(self._codes[lo:hi].tolist())
        top = max(counts.values())
        return self._reasons[min(code for code, n in counts.items() if n == top)]


def missing_reasons(
    run: Run,
    level: Level = "session",
    *,
    links: LinkKeys | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Counter[str]]:
    """Why each score has no value, per score name: counts of reasons over the sessions (or
    turns) where it is missing.

    Reasons, by where the score comes from: a nugget measure where its judge failed, else
    because the query has no (vital) nuggets; a link measure is missing for a session (turn)
    with no cited link ("no citations"), whose cited links all lack the judge's label (the
    judge's failure class), or whose cited links have no usable label otherwise; a judge's
    own score is missing where the judge failed (its failure class) or did not judge that
    turn (e.g. a response without text units for the spans judge); ``gold:`` scores where
    the expert labels are missing; combinations where one of their parts is.

    The tables are read one row at a time; ``links`` (the run's :class:`LinkKeys`) and
    ``names`` (its score names at ``level``) save a pass when the caller has them.
    """
    measures = scenario_measures(run)
    link_judges = link_judge_ids(run)
    nugget_judges = nugget_judge_ids(run)
    keys = links if links is not None else read_link_keys(run)
    failures = FailureIndex(run, level)

    def failure_reason(judge: str, session_id: str, turn: int | None) -> str | None:
        found = (turn is not None and failures.reason(judge, session_id, turn)) or (
            failures.reason(judge, session_id)
        )
        return f"{judge} failed ({found})" if found else None

    def reason_for(name: str, session_id: str, turn: int | None) -> str:
        base = name[5:] if name.startswith("gold:") else name
        base, _, at_judge = base.partition("@")
        if _nugget_measure(base):
            # a nugget measure rests on the query's nuggets, not on citations: without a
            # failure it is missing because the query has none of the nuggets it counts
            judge = at_judge or (nugget_judges[0] if nugget_judges else "")
            vital = parse_measure(base).VITAL_ONLY  # type: ignore[attr-defined]
            return failure_reason(judge, session_id, turn) or (
                "the query has no vital nuggets" if vital else "the query has no nuggets"
            )
        if base in measures or _is_citation_measure(base):
            if not keys.cited(session_id, turn):
                return "no citations"
            if _is_citation_measure(base):
                return "no usable support verdict"
            if name.startswith("gold:"):
                return "no expert link labels"
            judge = at_judge or (link_judges[0] if link_judges else "")
            if not keys.labelled(judge, session_id, turn):
                return (
                    failure_reason(judge, session_id, turn) or f"no {judge} label on a cited link"
                )
            return "no usable link label"
        if name.startswith("z(") or "+" in name:
            return "a combined part is missing"
        judge = name.split(":", 1)[0]
        return (
            failure_reason(judge, session_id, turn) or f"not judged by {judge} (nothing to judge)"
        )

    out: dict[str, Counter[str]] = {}
    wanted = run.score_names(level) if names is None else list(names)
    for row in run.iter_rows("sessions" if level == "session" else "turns"):
        scores = row.get("scores") or {}
        session_id = str(row["session_id"])
        turn = None if level == "session" else int(row["turn"])
        for name in wanted:
            if scores.get(name) is None:
                out.setdefault(name, Counter())[reason_for(name, session_id, turn)] += 1
    return out


def score_summaries(
    run: Run,
    level: Level = "session",
    *,
    n_boot: int = 1000,
    seed: int = 0,
    table: LevelTable | None = None,
    links: LinkKeys | None = None,
) -> list[ScoreSummary]:
    """Every score of ``run`` at ``level``, in the run's order, summarised; ``table`` (the
    level read by :func:`read_level`) and ``links`` save a pass when the caller has them."""
    columns = table if table is not None else read_level(run, level)
    reasons = missing_reasons(run, level, links=links, names=columns.names)
    return [
        summarize(
            name,
            values,
            level=level,
            n_boot=n_boot,
            seed=seed,
            reasons=reasons.get(name),
        )
        for name, values in columns.scores.items()
    ]
