"""The ITEM judges' comparison with gold: their utility sets (precision, recall, F1 against
the links whose gold label is at least ``gold_min``) and rankings (nDCG@k), with the loop's
iterations, calls and tokens, and the set figures of the first iteration."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.judges.item.judge import TURN_ITEM
from genir_eval.meta.gold.link_sets import (
    _COST,
    _by_turn,
    _Mean,
    _SetAgreement,
    gold_links,
    ndcg_at,
)
from genir_eval.records import Session

__all__ = [
    "ItemFigures",
]


class ItemFigures:
    """The figures of :func:`evaluate_item`, gathered window by window of sessions (each
    window with its own labels): sums and counts only, so memory does not grow with the
    sessions."""

    def __init__(self, *, gold_min: int = 3, k: int = 5) -> None:
        self.gold_min, self.k = gold_min, k
        self.final, self.first = _SetAgreement(), _SetAgreement()
        self.ndcg, self.ndcg_first, self.ndcg_log = _Mean(), _Mean(), _Mean()
        self.iterations = 0
        self.stops: Counter[str] = Counter()
        self.cost: Counter[str] = Counter()
        self.turns = self.missing = self.changed = 0
        # The base rate: the precision of selecting every labelled link (recall 1).
        self.labelled = self.useful_total = 0

    def add(self, sessions: Iterable[Session], labels: Iterable[Label]) -> None:
        grouped = _by_turn(labels)
        k, gold_min = self.k, self.gold_min
        for session in sessions:
            for turn in session.turns:
                gold = gold_links(session, turn.index)
                if not gold:
                    continue
                turn_label = grouped.get((session.session_id, turn.index), {}).get(TURN_ITEM)
                self.turns += 1
                if turn_label is not None:
                    for name in _COST:
                        self.cost[name] += int(turn_label.extra.get(name, 0) or 0)
                if turn_label is None or turn_label.value is None:
                    self.missing += 1
                    continue
                trace = turn_label.extra
                its = list(trace.get("iterations") or [])
                order = [int(c) for c in trace.get("candidates") or []]
                useful = {cid for cid, g in gold.items() if g >= gold_min}
                self.labelled += len(gold)
                self.useful_total += len(useful)
                gains = {cid: float(g) for cid, g in gold.items()}
                selected = {int(c) for c in turn_label.value} & set(gold)
                self.final.add(selected, useful)
                first = its[0] if its else {"selected": turn_label.value, "ranking": None}
                first_set = {int(c) for c in first["selected"]} & set(gold)
                self.first.add(first_set, useful)
                self.changed += first_set != selected
                self.ndcg.add(ndcg_at(_ranking(its[-1] if its else first, order), gains, k))
                self.ndcg_first.add(ndcg_at(_ranking(first, order), gains, k))
                self.ndcg_log.add(ndcg_at(order, gains, k))
                self.iterations += len(its)
                self.stops[str(trace.get("stop"))] += 1

    def result(self) -> dict[str, Any]:
        k, evaluated = self.k, self.final.turns
        return {
            "gold_min": self.gold_min,
            "k": k,
            "turns": self.turns,
            "turns_missing": self.missing,
            "final": self.final.result(),
            "first_iteration": self.first.result(),
            "turns_changed_by_iterating": self.changed,
            f"ndcg@{k}": self.ndcg.result(),
            f"ndcg@{k}_first_iteration": self.ndcg_first.result(),
            f"ndcg@{k}_log_order": self.ndcg_log.result(),
            "mean_iterations": (self.iterations / evaluated) if evaluated else None,
            "stop_reasons": dict(self.stops),
            "gold_useful_share": (self.useful_total / self.labelled) if self.labelled else None,
            **{name: self.cost[name] for name in _COST},
        }


def _ranking(iteration: Mapping[str, Any], order: Sequence[int]) -> list[int]:
    ranking = iteration.get("ranking")
    if ranking:
        ranked = [int(c) for c in ranking]
        return ranked + [c for c in order if c not in ranked]
    selected = [int(c) for c in iteration.get("selected") or []]
    return selected + [c for c in order if c not in selected]
