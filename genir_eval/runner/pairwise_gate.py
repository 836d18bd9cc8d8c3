"""A pairwise CI gate: is a candidate's win rate against the baseline significantly below a
threshold the user sets?

A system's win rate against the baseline is the mean over their judged pairs of 1 (win),
0.5 (tie) or 0 (loss). Its interval is a percentile bootstrap over queries (all pairs of a
query drawn together); the gate fails when the whole ``1 - alpha`` interval lies below the
threshold (significantly below it, at level ``alpha / 2`` one-sided).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["gate_against", "gate_markdown", "gate_text"]


def _win_rates(
    rows: Sequence[Mapping[str, Any]], baseline: str, candidate: str
) -> dict[tuple[str, int], list[float]]:
    by_query: dict[tuple[str, int], list[float]] = defaultdict(list)
    for row in rows:
        winner = row.get("winner")
        if winner is None or {row["a"], row["b"]} != {baseline, candidate}:
            continue
        if winner == "tie":
            score = 0.5
        else:
            score = 1.0 if row[winner] == candidate else 0.0
        by_query[(str(row["session_id"]), int(row["turn"]))].append(score)
    return by_query


def _interval(
    by_query: Mapping[Any, Sequence[float]], alpha: float, resamples: int, seed: int
) -> tuple[float, float, float]:
    sums = np.array([sum(v) for v in by_query.values()])
    counts = np.array([len(v) for v in by_query.values()], dtype=float)
    rate = float(sums.sum() / counts.sum())
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(sums), size=(resamples, len(sums)))
    rates = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
    lo, hi = np.percentile(rates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return rate, float(lo), float(hi)


def gate_against(
    rows: Sequence[Mapping[str, Any]],
    *,
    baseline: str,
    systems: Sequence[str],
    threshold: float,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Each other system's win rate against ``baseline`` with its interval, and whether it is
    significantly below ``threshold`` (``passed`` is false when any is)."""
    candidates = []
    for name in systems:
        if name == baseline:
            continue
        by_query = _win_rates(rows, baseline, name)
        if not by_query:
            candidates.append(
                {"name": name, "pairs": 0, "win_rate": None, "ci": None, "failed": True}
            )
            continue
        rate, lo, hi = _interval(by_query, alpha, resamples, seed)
        candidates.append(
            {
                "name": name,
                "pairs": sum(len(v) for v in by_query.values()),
                "queries": len(by_query),
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
    }


def _line(c: Mapping[str, Any]) -> tuple[str, str, str]:
    if c["win_rate"] is None:
        return c["name"], "no judged pair", "FAIL"
    lo, hi = c["ci"]
    verdict = "FAIL" if c["failed"] else "pass"
    return c["name"], f"{c['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] over {c['pairs']} pairs", verdict


def gate_text(gate: Mapping[str, Any]) -> str:
    level = 1 - gate["alpha"]
    lines = [
        f"win rate against {gate['baseline']} (ties half, {level:.0%} interval over queries), "
        f"fail below {gate['threshold']:g}:"
    ]
    lines += [
        f"  {name}: {figure}  {verdict}" for name, figure, verdict in map(_line, gate["candidates"])
    ]
    return "\n".join(lines) + "\n"


def gate_markdown(gate: Mapping[str, Any]) -> str:
    """The gate as a pull-request comment."""
    level = 1 - gate["alpha"]
    head = "PASS" if gate["passed"] else "FAIL"
    lines = [
        f"### Pairwise gate: {head}",
        "",
        f"Win rate against `{gate['baseline']}` (ties count half; {level:.0%} bootstrap "
        f"interval over queries); fails when the interval lies below {gate['threshold']:g}.",
        "",
        "| system | win rate [interval] | verdict |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{n}` | {f} | {v} |" for n, f, v in map(_line, gate["candidates"])]
    return "\n".join(lines) + "\n"
