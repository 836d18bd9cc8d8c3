"""The link judges' comparison with gold: each link label beside the experts' 0-3 label
(correlations with bootstrap intervals, kappa, MAE, AUC, calibration, and the same for the
probability-weighted label when the judge gave one), and the helpers other kinds' comparisons
read link labels with (:func:`link_label_map`, :func:`sdcg_from_labels`).
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from genir_eval.columns import TextColumn
from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldBlock, GoldContext
from genir_eval.meta.calibration import agreement, cross_validated_calibration
from genir_eval.meta.stats import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    correlations,
    mae,
    pairwise_auc,
)
from genir_eval.metrics import (
    SDCG_URGE,
    statement_usefulness,
)
from genir_eval.records import Session

__all__ = [
    "link_label_map",
    "sdcg_from_labels",
    "expected_value",
    "LinkPairs",
    "link_pairs",
    "link_usefulness_scores",
    "link_pairs_block",
]


def _by_key(labels: Sequence[Label]) -> dict[tuple[str, int | None, str], Label]:
    return {(lb.key.session_id, lb.key.turn, lb.key.item): lb for lb in labels}


def link_label_map(labels: Sequence[Label]) -> dict[tuple[str, int], dict[int, float]]:
    """``{(session_id, turn): {link_id: label}}`` from a link judge's present labels."""
    out: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    for lb in labels:
        if lb.key.item.startswith("link:") and lb.value is not None and lb.key.turn is not None:
            out[(lb.key.session_id, lb.key.turn)][int(lb.key.item[5:])] = float(lb.value)
    return dict(out)


def sdcg_from_labels(sessions: Sequence[Session], labels: Sequence[Label]) -> list[float | None]:
    """URGE's ``sDCG`` of each session from link labels (statement usefulness = the best
    label among a statement's citations)."""
    by_turn = link_label_map(labels)
    measure = SDCG_URGE()
    out: list[float | None] = []
    for session in sessions:
        u = [
            statement_usefulness(turn, by_turn.get((session.session_id, turn.index), {}))
            for turn in session.turns
        ]
        out.append(measure.compute(u))
    return out


def _rounded(value: float | None) -> int | None:
    return None if value is None else int(min(3, max(0, math.floor(value + 0.5))))


def expected_value(label: Label | None) -> float | None:
    """A present label's probability-weighted value (``extra["expected"]``: the expected
    label over the label tokens' probabilities, or the mean of k samples), if the judge
    gave one."""
    if label is None or label.value is None:
        return None
    value = label.extra.get("expected")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class LinkPairs:
    """The judge's link labels beside the experts', one entry per gold-labelled link, in
    session, turn and link order: ``pred`` the label (``None`` when missing), ``expected``
    the probability-weighted label (``None`` when not given), ``groups`` the session id."""

    pred: list[float | None]
    expected: list[float | None]
    gold: list[int]
    groups: list[str]


def link_pairs(sessions: Sequence[Session], labels: Sequence[Label]) -> LinkPairs:
    """Pair a link judge's labels with the gold link labels (see :class:`LinkPairs`)."""
    pairs = _LinkPairs()
    pairs.add(sessions, labels)
    return pairs.pairs()


class _LinkPairs:
    """The judge's link labels paired with the experts', gathered window by window."""

    def __init__(self) -> None:
        self.pred: array[float] = array("d")  # NaN: no label (its reason is counted)
        self.expected: array[float] = array("d")  # NaN: no expected label
        self.entropy: array[float] = array("d")
        self.gold: array[int] = array("q")
        self.group: array[int] = array("q")  # the session, numbered in order of appearance
        self.sessions = TextColumn()  # their ids, in that order
        self.reasons: dict[str, int] = defaultdict(int)

    def pairs(self) -> LinkPairs:
        names = list(self.sessions)
        return LinkPairs(
            pred=[None if math.isnan(p) else p for p in self.pred],
            expected=[None if math.isnan(e) else e for e in self.expected],
            gold=self.gold.tolist(),
            groups=[names[g] for g in self.group],
        )

    def add(self, sessions: Sequence[Session], labels: Sequence[Label]) -> None:
        by = _by_key(labels)
        for session in sessions:
            if session.gold is None or session.gold.link_usefulness is None:
                continue
            group = len(self.sessions)  # a session id comes once in a log (readers refuse
            self.sessions.append(session.session_id)  # a repeated one)
            for position, turn in enumerate(session.turns):
                if position >= len(session.gold.link_usefulness):
                    continue
                for link_id, value in sorted(session.gold.link_usefulness[position].items()):
                    label = by.get((session.session_id, turn.index, f"link:{link_id}"))
                    if label is None or label.value is None:
                        reason = (label.missing_reason if label else None) or "not judged"
                        self.reasons[reason] += 1
                        self.pred.append(math.nan)
                    else:
                        self.pred.append(float(label.value))
                        entropy = label.extra.get("entropy_bits")
                        if isinstance(entropy, int | float):
                            self.entropy.append(float(entropy))
                    self.expected.append(_nan(expected_value(label)))
                    self.gold.append(int(value))
                    self.group.append(group)

    def result(self, n_boot: int, seed: int) -> dict[str, Any] | None:
        if not self.gold:
            return None
        pred: list[float | None] = [None if math.isnan(p) else p for p in self.pred]
        gold = self.gold.tolist()
        groups = self.group.tolist()
        corr = correlations(np.asarray(self.pred), np.asarray(gold), n_boot=n_boot, seed=seed)
        ints = [_rounded(p) for p in pred]
        return {
            "spearman": corr["spearman"],
            "kendall": corr["kendall"],
            "pearson": corr["pearson"],
            "ci95": {k: corr["ci95"][k] for k in ("spearman", "kendall", "pearson")},
            "cohen_kappa_binary": cohen_kappa(binarize(ints), binarize(gold), weights=None),
            "cohen_kappa_weighted": cohen_kappa(ints, gold, weights="linear"),
            "mae": mae(pred, gold),
            "pairwise_auc": pairwise_auc(pred, gold),
            "confusion_matrix": {
                "labels": [0, 1, 2, 3],
                "rows": "gold",
                "columns": "judge (rounded)",
                "matrix": confusion_matrix(ints, gold),
            },
            "n": corr["n"],
            "missing": sum(1 for p in pred if p is None),
            "missing_reasons": dict(self.reasons),
            "calibration": cross_validated_calibration(pred, gold, groups, scale=(0, 3)),
            **self._expected_block(gold, groups, n_boot, seed),
        }

    def _expected_block(
        self, gold: list[int], groups: list[int], n_boot: int, seed: int
    ) -> dict[str, Any]:
        expected: list[float | None] = [None if math.isnan(e) else e for e in self.expected]
        if all(e is None for e in expected):
            return {}
        block = agreement(expected, gold, scale=(0, 3), n_boot=n_boot, seed=seed)
        entropies = self.entropy
        block["mean_entropy_bits"] = sum(entropies) / len(entropies) if entropies else None
        block["calibration"] = cross_validated_calibration(expected, gold, groups, scale=(0, 3))
        return {"expected": block}


def link_usefulness_scores(
    sessions: Sequence[Session], labels: Sequence[Label], *, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any] | None:
    """The judge's link labels against the experts' (``None`` without gold link labels).

    Besides the label's own figures: ``calibration``, the same agreement before and after
    an isotonic map fitted leaving sessions out
    (:func:`~genir_eval.meta.calibration.cross_validated_calibration`); and, when the
    judge gave probability-weighted labels, ``expected`` with the same figures for them
    (the top-level figures are then those of the argmax label)."""
    pairs = _LinkPairs()
    pairs.add(sessions, labels)
    return pairs.result(n_boot, seed)


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def link_pairs_block(name: str, context: GoldContext) -> GoldBlock:
    """The link labels against the experts' (:func:`link_usefulness_scores`)."""
    pairs = _LinkPairs()
    return GoldBlock(
        name,
        lambda sessions, labels, link_labels: pairs.add(sessions, labels),
        lambda: pairs.result(context.n_boot, context.seed),
    )
