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

__all__ = ["run_status", "failure_lines", "raise_if_failed", "TOP_REASONS"]

#: How many distinct failure reasons the summary lists.
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
    reasons: list[str] = []
    for judge, counts in label_counts.items():
        total, missing = int(counts.get("labels", 0)), int(counts.get("missing", 0))
        if total and missing / total > max_missing:
            reasons.append(
                f"judge {judge}: {missing} of {total} labels missing "
                f"({missing / total:.1%} > {max_missing:.1%} allowed)"
            )
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
    counter: Counter[tuple[str, str]] = Counter()
    for failure in failures:
        judge = str(failure.get("judge", ""))
        where = endpoints.get(judge, judge)
        counter[(where, _short(str(failure.get("reason", "missing"))))] += int(
            failure.get("count", 1)
        )
    top = [
        {"count": count, "reason": reason, "endpoint": endpoint}
        for (endpoint, reason), count in counter.most_common(TOP_REASONS)
    ]
    return {
        "ok": not reasons,
        "reasons": reasons,
        "top_failures": top,
        "distinct_failure_reasons": len(counter),
        "max_missing": max_missing,
        "allow_permanent": allow_permanent,
    }


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
        lines.append("most frequent reasons for missing labels:")
        for row in top:
            lines.append(f"  {row['count']} x [{row['endpoint']}] {row['reason']}")
        more = int(status.get("distinct_failure_reasons", 0)) - len(top)
        if more > 0:
            lines.append(f"  ... and {more} other reasons (see failures in run.json)")
    return lines


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
