"""Whether a run succeeded: a run whose labels are missing is a failed run, not a result.

A run fails (exit code 3, its outputs still written with every missing label and its
reason) when a judge has more than ``max_missing`` of its labels missing, when an engine
stopped sending (:mod:`genir_eval.llm.health`), or, unless ``allow_permanent``, when any
call ended in a permanent provider error (a wrong key, no quota, an unknown model, a request
the provider refuses). :func:`run_status` says so, with the most frequent reasons, their
counts and the endpoint they came from, for the summary and ``run.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from genir_eval.errors import RunFailed
from genir_eval.rundir.causes import cause_of

__all__ = ["run_status", "failure_lines", "raise_if_failed", "TOP_REASONS"]

#: How many causes of missing labels the summary lists.
TOP_REASONS = 5
_REASON_CHARS = 300


def _short(reason: str) -> str:
    reason = " ".join(reason.split())
    return reason if len(reason) <= _REASON_CHARS else reason[: _REASON_CHARS - 1] + "…"


def run_status(
    label_counts: Mapping[str, Mapping[str, int]],
    failures: Iterable[Mapping[str, Any]],
    engines: Sequence[Mapping[str, Any]],
    *,
    endpoints: Mapping[str, str] | None = None,
    max_missing: float,
    allow_permanent: bool,
) -> dict[str, Any]:
    """The run's status: ``{"ok", "reasons", "top_failures", "max_missing", ...}``.

    ``label_counts`` maps a judge id to ``{"labels": n, "missing": m}``; ``failures`` are the
    missing labels (``judge``, ``reason``, and ``count`` when one entry stands for several);
    ``engines`` the engines' :meth:`stats`;
    ``endpoints`` maps a judge id to where its calls went (``openai/gpt-4o-mini at
    http://host/v1``)."""
    endpoints = endpoints or {}
    reasons = _missing_reasons(label_counts, max_missing)
    for stats in engines:
        where = _engine_where(stats)
        if stats.get("stopped"):
            reasons.append(f"{where}: {stats['stopped']}")
        permanent = int((stats.get("failures") or {}).get("permanent", 0))
        if permanent and not allow_permanent:
            reasons.append(
                f"{where}: {permanent} calls failed with a permanent error "
                "(--allow-permanent to accept them)"
            )
    top, distinct = _by_cause(failures, endpoints)
    return {
        "ok": not reasons,
        "reasons": reasons,
        "top_failures": top,
        "distinct_failure_reasons": distinct,
        "max_missing": max_missing,
        "allow_permanent": allow_permanent,
    }


def _missing_reasons(label_counts: Mapping[str, Mapping[str, int]], limit: float) -> list[str]:
    """The judges with more labels missing than allowed: one line for one judge, one line
    naming them all for several (a dead endpoint fails every judge at once)."""
    over = []
    for judge, counts in label_counts.items():
        total, missing = int(counts.get("labels", 0)), int(counts.get("missing", 0))
        if total and missing / total > limit:
            over.append((judge, missing, total))
    if len(over) == 1:
        judge, missing, total = over[0]
        return [
            f"judge {judge}: {missing} of {total} labels missing "
            f"({missing / total:.1%} > {limit:.1%} allowed)"
        ]
    if not over:
        return []
    each = ", ".join(f"{judge} {missing} of {total}" for judge, missing, total in over)
    return [f"{len(over)} judges have more than {limit:.1%} of their labels missing: {each}"]


def _by_cause(
    failures: Iterable[Mapping[str, Any]], endpoints: Mapping[str, str]
) -> tuple[list[dict[str, Any]], int]:
    """The missing labels grouped by endpoint and class of cause (one row per cause, with
    the judges it hit and its most frequent reason), most frequent first, and the number of
    groups."""
    counts: Counter[tuple[str, str]] = Counter()
    judges: dict[tuple[str, str], dict[str, None]] = {}
    reasons: dict[tuple[str, str], Counter[str]] = {}
    hints: dict[tuple[str, str], str] = {}
    for failure in failures:
        judge = str(failure.get("judge", ""))
        where = endpoints.get(judge, judge)
        reason = _short(str(failure.get("reason", "missing")))
        cause = cause_of(reason)
        key = (where, cause.label)
        n = int(failure.get("count", 1))
        counts[key] += n
        judges.setdefault(key, {})[judge] = None
        reasons.setdefault(key, Counter())[reason] += n
        hints[key] = cause.hint_for(where)
    top = [
        {
            "count": count,
            "cause": cause,
            "reason": reasons[(where, cause)].most_common(1)[0][0],
            "judges": sorted(judges[(where, cause)]),
            "endpoint": where,
            "hint": hints[(where, cause)],
        }
        for (where, cause), count in counts.most_common(TOP_REASONS)
    ]
    return top, len(counts)


def _engine_where(stats: Mapping[str, Any]) -> str:
    where = f"{stats.get('provider')}/{stats.get('model')}"
    if stats.get("endpoint"):
        where += f" at {stats['endpoint']}"
    return where


def failure_lines(status: Mapping[str, Any]) -> list[str]:
    """The status as lines for a terminal: why the run failed, then the top reasons."""
    if status.get("ok", True) and not status.get("top_failures"):
        return []
    lines = []
    if not status.get("ok", True):
        lines.append("RUN FAILED:")
        lines.extend(f"  {reason}" for reason in status.get("reasons", ()))
    top = status.get("top_failures") or []
    if top:
        lines.append("missing labels by cause:")
        for row in top:
            judges = row.get("judges") or ()
            hit = f" ({_plural(len(judges), 'judge')}: {', '.join(judges)})" if judges else ""
            cause = f"{row['cause']}: " if row.get("cause") else ""
            lines.append(f"  {row['count']} x {cause}[{row['endpoint']}]{hit}")
            lines.append(f"      {row['reason']}")
            if row.get("hint"):
                lines.append(f"      hint: {row['hint']}")
        more = int(status.get("distinct_failure_reasons", 0)) - len(top)
        if more > 0:
            lines.append(f"  ... and {more} other causes (each missing label is in failures.jsonl)")
    return lines


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def raise_if_failed(status: Mapping[str, Any], where: str, *, shown: bool = False) -> None:
    """:class:`~genir_eval.errors.RunFailed` (exit code 3) when ``status`` is not ok; with
    ``shown``, the reasons were printed already (:func:`failure_lines`) and are not repeated."""
    if status.get("ok", True):
        return
    if shown:
        raise RunFailed(
            f"{where}: the run failed (reasons above); its outputs are written, with every "
            "missing label and its reason, but they are not a result"
        )
    raise RunFailed(f"{where}: the run failed: {'; '.join(status.get('reasons', ()))}")
