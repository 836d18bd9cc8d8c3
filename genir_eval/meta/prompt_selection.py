"""Choosing a link-usefulness prompt without fooling yourself (Thomas et al., SIGIR 2024).

Thomas, Spielman, Craswell and Mitra vary the prompt's parts (role, description, narrative,
aspects, several simulated judges) and warn that the variant best on one set of queries
need not be best on another. :func:`select_prompts` runs every variant of
``link_usefulness.dna`` (each part switched off in turn, several judges switched on, and any
user-supplied paraphrase templates) on the sessions, then over repeated seeded random 50/50
splits of the queries picks the variant with the best Spearman on one half and checks
whether it beats the baseline on the other half. It reports how often it does, and which
variant wins the selection most often.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from genir_eval.judges.base import Label, judge_sessions
from genir_eval.judges.links.dna import NAME as DNA_JUDGE
from genir_eval.judges.registry import make_judge
from genir_eval.meta.stats import correlations
from genir_eval.records import Session

__all__ = [
    "DEFAULT_VARIANTS",
    "BASELINE",
    "variants_with_paraphrases",
    "select_prompts",
    "split_selection",
]

JUDGE = DNA_JUDGE  # the judge whose prompt variants are compared
BASELINE = "baseline"
DEFAULT_VARIANTS: dict[str, dict[str, Any]] = {
    BASELINE: {},
    "no_role": {"role": False},
    "no_description": {"description": False},
    "no_narrative": {"narrative": False},
    "no_aspects": {"aspects": False},
    "multiple_judges": {"judges": 5},
}


def variants_with_paraphrases(
    paraphrases: Sequence[str | Path] = (), base: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """The default variants plus one per paraphrase template file (``paraphrase:<stem>``)."""
    variants = {k: dict(v) for k, v in (base or DEFAULT_VARIANTS).items()}
    for path in paraphrases:
        variants[f"paraphrase:{Path(path).stem}"] = {"template": str(path)}
    return variants


Query = tuple[str, int]


def _per_query(
    sessions: Sequence[Session], labels: Sequence[Label]
) -> dict[Query, list[tuple[float | None, int]]]:
    by = {(lb.key.session_id, lb.key.turn, lb.key.item): lb for lb in labels}
    out: dict[Query, list[tuple[float | None, int]]] = {}
    for session in sessions:
        if session.gold is None or session.gold.link_usefulness is None:
            continue
        for position, turn in enumerate(session.turns):
            if position >= len(session.gold.link_usefulness):
                continue
            pairs = []
            for link_id, gold in session.gold.link_usefulness[position].items():
                label = by.get((session.session_id, turn.index, f"link:{link_id}"))
                value = None if label is None or label.value is None else float(label.value)
                pairs.append((value, int(gold)))
            if pairs:
                out[(session.session_id, turn.index)] = pairs
    return out


def _spearman(
    pairs_by_query: Mapping[Query, list[tuple[float | None, int]]], queries: Sequence[Query]
) -> float:
    pred = [p for q in queries for p, _ in pairs_by_query[q]]
    gold = [g for q in queries for _, g in pairs_by_query[q]]
    value = correlations(pred, gold, n_boot=0)["spearman"]
    return float("-inf") if value is None else float(value)


def split_selection(
    per_variant: Mapping[str, Mapping[Query, list[tuple[float | None, int]]]],
    *,
    baseline: str = BASELINE,
    n_splits: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Over ``n_splits`` seeded 50/50 splits of the queries: pick the best variant on the
    selection half; does it beat ``baseline`` on the held-out half?"""
    queries = sorted(set.intersection(*(set(v) for v in per_variant.values())))
    rng = random.Random(seed)
    wins: Counter[str] = Counter()
    beats = ties = 0
    margins = []
    for _ in range(n_splits):
        shuffled = queries[:]
        rng.shuffle(shuffled)
        half = len(shuffled) // 2
        select, held_out = shuffled[:half], shuffled[half:]
        scores = {name: _spearman(pairs, select) for name, pairs in per_variant.items()}
        best = max(sorted(scores), key=lambda name: scores[name])
        wins[best] += 1
        held_best = _spearman(per_variant[best], held_out)
        held_base = _spearman(per_variant[baseline], held_out)
        margins.append(held_best - held_base)
        if best == baseline or held_best == held_base:
            ties += 1
        elif held_best > held_base:
            beats += 1
    finite = [m for m in margins if m not in (float("inf"), float("-inf"))]
    return {
        "n_queries": len(queries),
        "n_splits": n_splits,
        "seed": seed,
        "baseline": baseline,
        "best_beats_baseline_rate": beats / n_splits if n_splits else None,
        "tie_or_baseline_rate": ties / n_splits if n_splits else None,
        "mean_heldout_margin": sum(finite) / len(finite) if finite else None,
        "selection_wins": dict(wins.most_common()),
        "most_frequent_winner": wins.most_common(1)[0][0] if wins else None,
    }


async def select_prompts(
    sessions: Sequence[Session],
    engine: Any,
    *,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
    paraphrases: Sequence[str | Path] = (),
    baseline: str = BASELINE,
    n_splits: int = 200,
    seed: int = 0,
    common: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run every prompt variant of ``link_usefulness.dna`` and compare them over splits.
    ``common`` options (e.g. ``model``) go to every variant."""
    chosen = variants_with_paraphrases(paraphrases, variants)
    if baseline not in chosen:
        raise ValueError(f"baseline variant {baseline!r} is not among {sorted(chosen)}")
    per_variant: dict[str, dict[Query, list[tuple[float | None, int]]]] = {}
    full: dict[str, Any] = {}
    for name, options in chosen.items():
        judge = make_judge(JUDGE, **{**dict(common or {}), **options})
        labels = await judge_sessions(judge, sessions, engine)
        per_variant[name] = _per_query(sessions, labels)
        every = sorted(per_variant[name])
        full[name] = {
            "options": dict(judge.options),
            "spearman": _spearman(per_variant[name], every) if every else None,
            "missing": sum(1 for lb in labels if lb.value is None),
        }
    result = split_selection(per_variant, baseline=baseline, n_splits=n_splits, seed=seed)
    result["judge"] = JUDGE
    result["variants"] = full
    return result
