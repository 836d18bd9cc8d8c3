"""The arena's figures besides the ranking: each system's win rate, the style-controlled
scores' intervals, the judge's agreement rates with their intervals, and a few example pairs
with the judge's reason per pair of systems.

Every interval is 95%: win rates and style-controlled scores by a percentile bootstrap over
queries (all pairs of a query drawn together, as the ranking's; seeded), the agreement
rates by Wilson's score interval (:func:`~genir_eval.meta.proportion.wilson_interval`).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genir_eval.judges.pairwise.ranking import Outcomes, bootstrap_scores
from genir_eval.meta.proportion import wilson_interval

__all__ = [
    "EXAMPLES_PER_PAIR",
    "win_rates",
    "style_intervals",
    "rate_interval",
    "example_pairs",
    "agreement_intervals",
]

#: How many pairs of each two systems the report shows with the judge's reason.
EXAMPLES_PER_PAIR = 2
_REASON_CHARS = 600


def win_rates(outcomes: Outcomes, *, resamples: int, seed: int) -> dict[str, dict[str, Any]]:
    """Each system's win rate against all the others (a win 1, a tie 0.5, a loss 0, over its
    judged pairs) with a 95% bootstrap interval over queries (``None`` without resamples or
    with one query)."""
    names = outcomes.systems
    n_queries = int(outcomes.query.max()) + 1 if len(outcomes) else 0
    # per system and query: the summed score and the pairs
    sums = np.zeros((len(names), n_queries))
    counts = np.zeros((len(names), n_queries))
    for side, score in ((outcomes.a, outcomes.result), (outcomes.b, 1.0 - outcomes.result)):
        np.add.at(sums, (side, outcomes.query), score)
        np.add.at(counts, (side, outcomes.query), 1.0)
    draws = None
    if resamples and n_queries > 1:
        rng = np.random.default_rng(seed)
        draws = np.empty((resamples, len(names)))  # resamples x systems
        with np.errstate(invalid="ignore", divide="ignore"):
            # one draw at a time: memory stays a few arrays of the queries, at any size
            for r in range(resamples):
                weights = np.bincount(rng.integers(0, n_queries, n_queries), minlength=n_queries)
                draws[r] = (sums @ weights) / (counts @ weights)
    out: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        pairs = float(counts[i].sum())
        ci = None
        if draws is not None and pairs:
            column = draws[:, i][np.isfinite(draws[:, i])]
            if column.size:
                lo, hi = np.percentile(column, [2.5, 97.5])
                ci = [float(lo), float(hi)]
        out[name] = {
            "win_rate": float(sums[i].sum() / pairs) if pairs else None,
            "ci95": ci,
            "pairs": int(pairs),
        }
    return out


def style_intervals(
    outcomes: Outcomes, *, resamples: int, seed: int
) -> dict[str, list[float]] | None:
    """The style-controlled scores' 95% bootstrap intervals over queries (``None`` without
    resamples)."""
    if not resamples or not len(outcomes):
        return None
    draws = bootstrap_scores(outcomes, resamples=resamples, seed=seed, style=True)
    return {
        name: [float(np.percentile(draws[:, i], 2.5)), float(np.percentile(draws[:, i], 97.5))]
        for i, name in enumerate(outcomes.systems)
    }


def rate_interval(successes: float, n: int) -> list[float] | None:
    """A rate's 95% Wilson interval, as ``arena.json`` holds it."""
    interval = wilson_interval(successes, n)
    return None if interval is None else [interval[0], interval[1]]


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def example_pairs(
    pairs: Path, names: Sequence[str], per_pair: int = EXAMPLES_PER_PAIR
) -> list[dict[str, Any]]:
    """Per pair of systems (in the command line's order), the ``per_pair`` judged pairs
    whose reason is shortest (``pairs.jsonl`` read once, a few rows kept per pair of
    systems): session, turn, the systems, the winner's name (or ``tie``) and the reason."""
    order = {name: i for i, name in enumerate(names)}
    kept: dict[tuple[str, str], list[tuple[int, int, dict[str, Any]]]] = {}
    for number, row in enumerate(_rows(pairs)):
        reason = row.get("reason")
        winner = row.get("winner")
        if not isinstance(reason, str) or not reason.strip() or winner is None:
            continue
        a, b = str(row["a"]), str(row["b"])
        key = (a, b) if order.get(a, 0) <= order.get(b, 0) else (b, a)
        text = " ".join(reason.split())
        entry = {
            "session_id": row["session_id"],
            "turn": row["turn"],
            "a": a,
            "b": b,
            "winner": "tie" if winner == "tie" else row[winner],
            "reason": text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…",
        }
        heap = kept.setdefault(key, [])
        # a max-heap on length (negated) keeps the shortest; the earlier row wins a tie
        item = (-len(text), -number, entry)
        if len(heap) < per_pair:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)
    out = []
    for key in sorted(kept, key=lambda k: (order.get(k[0], 0), order.get(k[1], 0))):
        out += [entry for _, _, entry in sorted(kept[key], key=lambda e: (-e[0], -e[1]))]
    return out


def agreement_intervals(block: Mapping[str, Any]) -> dict[str, Any]:
    """The gold agreement's rates with their 95% Wilson intervals (a judge's tie counted
    half in ``rate``; ``decided_rate`` over the pairs the judge decided)."""
    judged, agree, ties = int(block["judged"]), int(block["agree"]), int(block["ties"])
    return {
        "rate_ci95": rate_interval(agree + 0.5 * ties, judged),
        "decided_rate_ci95": rate_interval(agree, judged - ties),
    }
