"""The span judge's comparison with gold: the text units it marks useful against the
units people marked (micro-averaged precision, recall and F1 per reference).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldBlock
from genir_eval.kind_names import SPANS
from genir_eval.meta.gold.links import _by_key
from genir_eval.meta.stats import (
    PRF,
)
from genir_eval.records import Session

__all__ = [
    "spans_scores",
    "span_block",
]


def _prf_of(hit: int, n_pred: int, n_gold: int) -> PRF:
    """:func:`~genir_eval.meta.stats.precision_recall_f1` from the set sizes alone."""
    if not n_pred and not n_gold:
        return PRF(1.0, 1.0, 1.0)
    if not n_pred or not n_gold:
        return PRF(0.0, 0.0, 0.0)
    precision, recall = hit / n_pred, hit / n_gold
    f1 = 0.0 if hit == 0 else 2 * precision * recall / (precision + recall)
    return PRF(precision, recall, f1)


class _SetCounts:
    """Per turn: |picked & gold|, |picked|, |gold|; enough for micro and macro P/R/F1."""

    def __init__(self) -> None:
        self.hit: array[int] = array("q")
        self.pred: array[int] = array("q")
        self.gold: array[int] = array("q")

    def add(self, picked: set[str], gold: set[str]) -> None:
        self.hit.append(len(picked & gold))
        self.pred.append(len(picked))
        self.gold.append(len(gold))

    def __len__(self) -> int:
        return len(self.hit)

    def result(self) -> dict[str, float | int | None]:
        if not self.hit:
            return {"precision": None, "recall": None, "f1": None, "n_turns": 0}
        # turns never share a unit, so the pooled sets' sizes are the sums
        micro = _prf_of(sum(self.hit), sum(self.pred), sum(self.gold))
        macro = [_prf_of(*c) for c in zip(self.hit, self.pred, self.gold, strict=True)]
        return {
            "precision": micro.precision,
            "recall": micro.recall,
            "f1": micro.f1,
            "macro_precision": sum(m.precision for m in macro) / len(macro),
            "macro_recall": sum(m.recall for m in macro) / len(macro),
            "macro_f1": sum(m.f1 for m in macro) / len(macro),
            "n_turns": len(macro),
        }


def _marks(value: Sequence[str]) -> set[str]:
    return {m.strip() for m in value if m.strip()}


class _SpanCounts:
    """A spans judge's marks (its labels of item ``item``) against the user's and the
    annotators', window by window."""

    def __init__(self, item: str = SPANS) -> None:
        self.item = item
        self.vs_user, self.vs_ext, self.human = _SetCounts(), _SetCounts(), _SetCounts()
        self.missing = 0

    def add(self, sessions: Sequence[Session], labels: Sequence[Label]) -> None:
        by = _by_key(labels)
        for session in sessions:
            gold = session.gold
            if gold is None or (
                gold.useful_spans_user is None and gold.useful_spans_external is None
            ):
                continue
            for position, turn in enumerate(session.turns):
                user = gold.useful_spans_user
                ext = gold.useful_spans_external
                user_marks = _marks(user[position]) if user and position < len(user) else None
                ext_marks = _marks(ext[position]) if ext and position < len(ext) else None
                if user_marks is not None and ext_marks is not None:
                    self.human.add(user_marks, ext_marks)
                label = by.get((session.session_id, turn.index, self.item))
                if label is None or label.value is None:
                    self.missing += 1
                    continue
                picked = {
                    turn.segments[i].text.strip() for i in label.value if i < len(turn.segments)
                }
                if user_marks is not None:
                    self.vs_user.add(picked, user_marks)
                if ext_marks is not None:
                    self.vs_ext.add(picked, ext_marks)

    def result(self) -> dict[str, Any] | None:
        if not (len(self.vs_user) or len(self.vs_ext) or len(self.human)):
            return None
        return {
            "vs_user": self.vs_user.result(),
            "vs_annotators": self.vs_ext.result(),
            "human_reference_user_vs_annotators": self.human.result(),
            "missing": self.missing,
        }


def spans_scores(sessions: Sequence[Session], labels: Sequence[Label]) -> dict[str, Any] | None:
    """Units the judge marks vs the user's and the annotators' marks (text units match by
    their stripped text); the user vs the annotators is the human reference."""
    counts = _SpanCounts()
    counts.add(sessions, labels)
    return counts.result()


def span_block(name: str) -> GoldBlock:
    """The units marked useful against the gold marks (:func:`spans_scores`)."""
    counts = _SpanCounts(name)
    return GoldBlock(
        name, lambda sessions, labels, link_labels: counts.add(sessions, labels), counts.result
    )
