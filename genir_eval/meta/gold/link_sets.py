"""What the ITEM and RUBRIC kinds' comparisons with gold share: the gold links of a turn,
nDCG@k with the gold labels as gains, and the set agreement (precision, recall, F1) of a
judge's useful links with the gold ones."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.meta.stats import precision_recall_f1
from genir_eval.records import Session

__all__ = [
    "ndcg_at",
    "gold_links",
]


def ndcg_at(ranking: Sequence[Any], gains: Mapping[Any, float], k: int) -> float | None:
    """nDCG@k (Järvelin & Kekäläinen, 2002) with linear gains and ``log2(rank + 1)``
    discounts, as trec_eval's ``ndcg_cut``: items without a gain count 0 but keep their
    place; the ideal ranking orders all of ``gains``. ``None`` when no gain is positive."""
    if k < 1:
        raise ValueError("k must be >= 1")
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg <= 0:
        return None
    dcg = sum(gains.get(item, 0.0) / math.log2(i + 2) for i, item in enumerate(ranking[:k]))
    return dcg / idcg


def gold_links(session: Session, turn_index: int) -> dict[int, int]:
    """Gold usefulness (0-3) of the links of turn ``turn_index`` (1-based); ``{}`` if none."""
    gold = session.gold
    if gold is None or gold.link_usefulness is None:
        return {}
    position = turn_index - 1
    if not 0 <= position < len(gold.link_usefulness):
        return {}
    return {int(k): int(v) for k, v in gold.link_usefulness[position].items()}


def _by_turn(labels: Iterable[Label]) -> dict[tuple[str, int], dict[str, Label]]:
    out: dict[tuple[str, int], dict[str, Label]] = defaultdict(dict)
    for label in labels:
        if label.key.turn is not None:
            out[(label.key.session_id, int(label.key.turn))][label.key.item] = label
    return out


class _Mean:
    """The mean of the values given that are not ``None`` (``None`` when none is)."""

    __slots__ = ("total", "n")

    def __init__(self) -> None:
        self.total, self.n = 0.0, 0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.total += value
            self.n += 1

    def result(self) -> float | None:
        return self.total / self.n if self.n else None


class _SetAgreement:
    """Micro (pooled counts) and macro (mean over turns) precision, recall and F1 of
    predicted sets against gold sets, one pair of sets per turn, kept as sums."""

    def __init__(self) -> None:
        self.turns = self.tp = self.n_pred = self.n_gold = 0
        self.macro = {"precision": _Mean(), "recall": _Mean(), "f1": _Mean()}

    def add(self, predicted: set[int], gold: set[int]) -> None:
        self.turns += 1
        self.tp += len(predicted & gold)
        self.n_pred += len(predicted)
        self.n_gold += len(gold)
        prf = precision_recall_f1(predicted, gold)
        for name, mean in self.macro.items():
            mean.add(getattr(prf, name))

    def result(self) -> dict[str, float | None]:
        if not self.turns:
            return {"precision": None, "recall": None, "f1": None, "macro_f1": None}
        precision = self.tp / self.n_pred if self.n_pred else None
        recall = self.tp / self.n_gold if self.n_gold else None
        f1 = None
        if precision is not None and recall is not None:
            f1 = 0.0 if self.tp == 0 else 2 * precision * recall / (precision + recall)
        return {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            **{f"macro_{name}": mean.result() for name, mean in self.macro.items()},
        }


_COST = ("calls", "fresh_calls", "input_tokens", "output_tokens")


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)
