"""A pairwise CI gate: is a candidate's win rate against the baseline significantly below a
threshold the user sets?

A system's win rate against the baseline is the mean over their judged pairs of 1 (win),
0.5 (tie) or 0 (loss). Its interval is a percentile bootstrap over queries (all pairs of a
query drawn together); the gate fails when the whole ``1 - alpha`` interval lies below the
threshold (significantly below it, at level ``alpha / 2`` one-sided).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from genir_eval.figures import code_span, counted, number_text
from genir_eval.judges.pairwise.ranking import Outcomes

__all__ = ["gate_against", "gate_markdown", "gate_text"]


def _win_rates(outcomes: Outcomes, baseline: str, candidate: str) -> tuple[np.ndarray, np.ndarray]:
    """The candidate's summed scores and pair counts against the baseline, per query (in the
    order the queries first appear among their pairs)."""
    base, cand = outcomes.systems.index(baseline), outcomes.systems.index(candidate)
    a, b = outcomes.a, outcomes.b
    mask = ((a == base) & (b == cand)) | ((a == cand) & (b == base))
    result = outcomes.result[mask]
    score = np.where(a[mask] == cand, result, 1.0 - result)
    _, first, inverse = np.unique(outcomes.query[mask], return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    group = rank[inverse.reshape(-1)]
    sums = np.bincount(group, weights=score, minlength=first.size)
    counts = np.bincount(group, minlength=first.size).astype(float)
    return sums, counts


def _interval(
    sums: np.ndarray, counts: np.ndarray, alpha: float, resamples: int, seed: int
) -> tuple[float, float, float]:
    rate = float(sums.sum() / counts.sum())
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(sums), size=(resamples, len(sums)))
    rates = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
    lo, hi = np.percentile(rates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return rate, float(lo), float(hi)


def gate_against(
    outcomes: Outcomes,
    *,
    baseline: str,
    threshold: float,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Each other system's win rate against ``baseline`` with its interval, and whether it is
    significantly below ``threshold`` (``passed`` is false when any is); ``outcomes``: the
    judged pairs (:class:`~genir_eval.judges.pairwise.ranking.Outcomes`)."""
    candidates: list[dict[str, Any]] = []
    undecided: list[str] = []
    for name in outcomes.systems:
        if name == baseline:
            continue
        sums, counts = _win_rates(outcomes, baseline, name)
        if not sums.size:
            candidates.append(
                {"name": name, "pairs": 0, "win_rate": None, "ci": None, "failed": True}
            )
            continue
        too_few = _too_few(name, sums)
        if too_few:
            undecided.append(too_few)
            candidates.append(
                {
                    "name": name,
                    "pairs": int(counts.sum()),
                    "queries": int(sums.size),
                    "win_rate": float(sums.sum() / counts.sum()),
                    "ci": None,
                    "failed": False,
                    "undecided": True,
                }
            )
            continue
        rate, lo, hi = _interval(sums, counts, alpha, resamples, seed)
        candidates.append(
            {
                "name": name,
                "pairs": int(counts.sum()),
                "queries": int(sums.size),
                "win_rate": rate,
                "ci": [lo, hi],
                "failed": hi < threshold,
            }
        )
    return {
        "baseline": baseline,
        "threshold": threshold,
        "alpha": alpha,
        "candidates": candidates,
        "passed": not any(c["failed"] for c in candidates),
        "undecided": undecided,
    }


#: Fewer queries than this are too few to decide: the interval resamples queries, and one
#: query's pairs say nothing of other queries (a bootstrap over one value is that value).
MIN_QUERIES = 2


def _too_few(name: str, sums: np.ndarray) -> str | None:
    """Why ``name``'s win rate cannot be decided: its results are not numbers, or they rest
    on fewer than :data:`MIN_QUERIES` queries; ``None`` when it can."""
    if not np.all(np.isfinite(sums)):
        return f"{name}'s judged pairs carry results that are not numbers: the gate does not decide"
    if sums.size < MIN_QUERIES:
        return (
            f"{name}'s win rate rests on {counted(int(sums.size), 'query/queries')}, fewer than "
            f"{MIN_QUERIES}: too few to tell a change from noise (the query is the unit resampled)"
        )
    return None


def _line(c: Mapping[str, Any]) -> tuple[str, str, str]:
    if c["win_rate"] is None:
        return c["name"], "no judged pair", "FAIL"
    if c.get("undecided"):
        return (
            c["name"],
            f"{number_text(c['win_rate'])} over {counted(c['pairs'], 'pair')} (no interval)",
            "TOO FEW TO DECIDE",
        )
    lo, hi = c["ci"]
    verdict = "FAIL" if c["failed"] else "pass"
    return (
        c["name"],
        f"{c['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] over {counted(c['pairs'], 'pair')}",
        verdict,
    )


def gate_text(gate: Mapping[str, Any]) -> str:
    level = 1 - gate["alpha"]
    lines = [
        f"win rate against {gate['baseline']} (ties half, {level:.0%} interval over queries), "
        f"fail below {gate['threshold']:g}:"
    ]
    lines += [
        f"  {name}: {figure}  {verdict}" for name, figure, verdict in map(_line, gate["candidates"])
    ]
    lines += [f"  too few to decide: {reason}" for reason in gate.get("undecided") or ()]
    return "\n".join(lines) + "\n"


def gate_markdown(gate: Mapping[str, Any]) -> str:
    """The gate as a pull-request comment."""
    level = 1 - gate["alpha"]
    head = (
        "FAIL" if not gate["passed"] else "TOO FEW TO DECIDE" if gate.get("undecided") else "PASS"
    )
    lines = [
        f"### Pairwise gate: {head}",
        "",
        f"Win rate against {code_span(gate['baseline'], in_table=False)} (ties count half; {level:.0%} bootstrap "
        f"interval over queries); fails when the interval lies below {gate['threshold']:g}.",
        "",
        "| system | win rate [interval] | verdict |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {code_span(n)} | {f} | {v} |" for n, f, v in map(_line, gate["candidates"])]
    if gate.get("undecided"):
        lines += ["", "**Why it cannot decide**", "", *(f"- {r}" for r in gate["undecided"])]
    return "\n".join(lines) + "\n"
