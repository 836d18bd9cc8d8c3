"""The RUBRIC judges' comparison with gold: their passage labels for links (set agreement
and nDCG@k against the gold link labels) and their grades against the gold labels."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any

import numpy as np

from genir_eval.judges.base import Label
from genir_eval.meta.gold.link_sets import (
    _by_turn,
    _Mean,
    _nan,
    _SetAgreement,
    gold_links,
    ndcg_at,
)
from genir_eval.meta.stats import correlations
from genir_eval.records import Session

__all__ = [
    "RubricFigures",
]


class RubricFigures:
    """The figures of :func:`evaluate_rubric`, gathered window by window of sessions: the
    grade and coverage pairs the correlations need as float columns (8 bytes a number),
    everything else as sums."""

    def __init__(self, *, gold_min: int = 3, k: int = 5) -> None:
        self.gold_min, self.k = gold_min, k
        self.pred_grades: array[float] = array("d")  # NaN: no grade
        self.gold_grades: array[float] = array("d")
        self.coverage: array[float] = array("d")
        self.satisfaction: array[float] = array("d")
        self.binary = _SetAgreement()
        self.ndcg, self.ndcg_log = _Mean(), _Mean()
        self.turns = self.missing_links = 0

    def add(self, sessions: Iterable[Session], labels: Iterable[Label]) -> None:
        grouped = _by_turn(labels)
        k, gold_min = self.k, self.gold_min
        for session in sessions:
            gold_sat = session.gold.query_satisfaction if session.gold else None
            for turn in session.turns:
                by_item = grouped.get((session.session_id, turn.index), {})
                cov = by_item.get("coverage")
                if cov is not None and gold_sat is not None and turn.index - 1 < len(gold_sat):
                    self.coverage.append(_nan(cov.value))
                    self.satisfaction.append(_nan(gold_sat[turn.index - 1]))
                gold = gold_links(session, turn.index)
                if not gold:
                    continue
                self.turns += 1
                grades: dict[int, float] = {}
                relevant: set[int] = set()
                for cid, g in gold.items():
                    label = by_item.get(f"link:{cid}")
                    value = None if label is None else label.value
                    self.pred_grades.append(_nan(value))
                    self.gold_grades.append(float(g))
                    if value is None:
                        self.missing_links += 1
                        continue
                    grades[cid] = float(value)
                    if label is not None and label.extra.get("relevant"):
                        relevant.add(cid)
                judged = set(grades)
                if judged:
                    useful = {cid for cid in judged if gold[cid] >= gold_min}
                    self.binary.add(relevant, useful)
                order = [c.id for c in turn.links] or sorted(gold)
                by_grade = sorted(order, key=lambda cid: -grades.get(cid, -1.0))
                gains = {cid: float(g) for cid, g in gold.items()}
                self.ndcg.add(ndcg_at(by_grade, gains, k))
                self.ndcg_log.add(ndcg_at(order, gains, k))

    def result(self) -> dict[str, Any]:
        k = self.k
        return {
            "gold_min": self.gold_min,
            "k": k,
            "turns": self.turns,
            "links_missing": self.missing_links,
            "grade_vs_gold": correlations(
                np.frombuffer(self.pred_grades), np.frombuffer(self.gold_grades), n_boot=0
            ),
            "binary": self.binary.result(),
            f"ndcg@{k}": self.ndcg.result(),
            f"ndcg@{k}_log_order": self.ndcg_log.result(),
            "coverage_vs_query_satisfaction": correlations(
                np.frombuffer(self.coverage), np.frombuffer(self.satisfaction), n_boot=0
            ),
        }
