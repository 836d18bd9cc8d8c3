"""Meta-evaluation of a judge's labels: how they compare with the sessions' gold labels.

:func:`score_labels` compares a judge's labels with the sessions' gold annotations (URGE: expert link-usefulness labels, the user's
and the annotators' useful-text marks, the user's query and session satisfaction):

- ``link_usefulness``: Spearman and Kendall (bootstrap 95% intervals), Cohen's kappa on the
  binarised scale (2-3 useful vs 0-1) and linearly weighted on 0-3, MAE, pairwise AUC, the
  confusion matrix, ``n`` and ``missing``;
- ``spans``: precision, recall and F1 of the units the judge marks against the user's marks
  and the annotators', micro (pooled units) and macro (mean over turns), and the user's
  marks against the annotators' as the human reference;
- ``satisfaction``: Pearson, Spearman, Kendall with query- and session-level satisfaction,
  overall and per task type, and the same after z-score combining the session scores with
  ``sdcg_urge`` computed from link labels (URGE's combination); a link judge gets the
  ``sdcg_urge`` of its own labels;
- ``citation_support``: the judge's support verdict per (statement, cited link) pair against
  ``gold.citation_support``: accuracy, Cohen's kappa (unweighted and linearly weighted on
  none < partial < full), kappa on "fully supported or not", the confusion matrix, and
  each citation measure from the judge's labels beside the same from the gold ones;
- ``orderings``: RBO and Kendall tau between the judge's and the gold ordering of the
  hardest queries (lowest gold query satisfaction), as Thomas et al. compare rankings.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from genir_eval.columns import TextColumn
from genir_eval.errors import ConfigError
from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldBlock, GoldContext, judge_kind
from genir_eval.kind_names import SPANS
from genir_eval.meta.calibration import agreement, cross_validated_calibration
from genir_eval.meta.degenerate import degeneracy
from genir_eval.meta.ppi import ppi_block
from genir_eval.meta.stats import (
    PRF,
    binarize,
    binary_agreement,
    cohen_kappa,
    confusion_matrix,
    correlations,
    kendall_tau,
    mae,
    pairwise_auc,
    rbo,
)
from genir_eval.metrics import (
    DEFAULT_CITATION_MEASURES,
    SDCG_URGE,
    cited_statements,
    gold_cited_statements,
    gold_statement_usefulness,
    parse_measure,
    statement_usefulness,
    zscore_combine,
)
from genir_eval.records import SUPPORT_LEVELS, SUPPORT_VALUE, Session

__all__ = [
    "META_VERSION",
    "score_labels",
    "link_usefulness_scores",
    "spans_scores",
    "satisfaction_scores",
    "ordering_scores",
    "link_label_map",
    "sdcg_from_labels",
    "citation_support_scores",
    "GoldComparison",
    "degeneracy_block",
    "link_pairs_block",
    "span_block",
    "satisfaction_block",
    "citation_support_block",
    "ordering_block",
    "thumbs_block",
    "session_means_block",
    "gold_sdcg",
    "expected_value",
    "LinkPairs",
    "link_pairs",
    "degenerate_scores",
    "ppi_scores",
    "judge_instructions",
    "SATISFACTION_SCALE",
    "JUDGE_SATISFACTION_SCALE",
    "FEEDBACK_TARGET",
    "on_gold_scale",
]

META_VERSION = 1
HARDEST_FRACTION = 0.5
#: How many of the hardest queries ``ordering`` lists (by gold and by the judge): the
#: orderings cover half the queries, 100,000 ids a list in a run of 100,000 sessions.
LISTED_HARDEST = 100
#: The users' query and session satisfaction ratings (URGE: 1-5).
SATISFACTION_SCALE = (1, 5)
#: The satisfaction judges' ratings (G-Eval, URS, GAH and their offline twins: 1-10).
JUDGE_SATISFACTION_SCALE = (1, 10)


def on_gold_scale(values: Any) -> Any:
    """Satisfaction judges' 1-10 ratings mapped linearly onto the users' 1-5 scale
    (1 -> 1, 10 -> 5), so a mean, an absolute error or a rounded kappa compares like with
    like. Rank figures are unchanged by it; a judge that uses the scale differently from
    the users is what calibration (an isotonic map fitted on gold) corrects."""
    (lo, hi), (g_lo, g_hi) = JUDGE_SATISFACTION_SCALE, SATISFACTION_SCALE
    return g_lo + (np.asarray(values, dtype=float) - lo) * (g_hi - g_lo) / (hi - lo)


#: What the feedback blocks compare scores with.
FEEDBACK_TARGET = "thumbs (1 = up, 0 = down), per turn"
#: At most this many replies are kept per judge to check its reasons for copying.
MAX_REASONS = 2000


def _by_key(labels: Sequence[Label]) -> dict[tuple[str, int | None, str], Label]:
    return {(lb.key.session_id, lb.key.turn, lb.key.item): lb for lb in labels}


def _gold_position(session: Session, turn_index: int) -> int | None:
    for position, turn in enumerate(session.turns):
        if turn.index == turn_index:
            return position
    return None


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


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _optional(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values.tolist()]


def _corr(
    x: Sequence[float | None] | np.ndarray,
    y: Sequence[float | None] | np.ndarray,
    n_boot: int,
    seed: int,
) -> dict:
    out = correlations(x, y, n_boot=n_boot, seed=seed)
    return {k: out[k] for k in ("pearson", "spearman", "kendall", "n", "ci95")}


# How a satisfaction label is read: its overall rating, its dimensions' mean, and the
# probability-weighted rating (when the provider gave token log-probabilities).
_READERS: dict[str, Callable[[Label], float | None]] = {
    "overall": lambda lb: float(lb.value) if lb.value is not None else None,
    "dimension_mean": lambda lb: lb.extra.get("dimension_mean"),
    "weighted": lambda lb: lb.extra.get("weighted"),
    "expected": expected_value,
}


class _SatisfactionColumns:
    """Judge and gold satisfaction per query and per session (and each session's
    ``sdcg_urge`` from link labels), as columns of numbers gathered window by window."""

    def __init__(self, with_sdcg: bool) -> None:
        self.with_sdcg = with_sdcg
        self.has_scores = False
        self.types: dict[str, int] = {}
        self.s_gold: array[float] = array("d")
        self.s_type: array[int] = array("q")
        self.sdcg: array[float] = array("d")
        self.q_gold: array[float] = array("d")
        self.q_type: array[int] = array("q")
        # the session of each session and query row, numbered in order of appearance
        self.s_group: array[int] = array("q")
        self.q_group: array[int] = array("q")
        self.s_pred: dict[str, array[float]] = {name: array("d") for name in _READERS}
        self.q_pred: dict[str, array[float]] = {name: array("d") for name in _READERS}

    def add(
        self,
        sessions: Sequence[Session],
        labels: Sequence[Label],
        link_labels: Sequence[Label] | None,
    ) -> None:
        self.has_scores = self.has_scores or any(
            lb.key.item in {"turn", "session"} for lb in labels
        )
        if self.with_sdcg:
            self.sdcg.extend(_nan(v) for v in sdcg_from_labels(sessions, link_labels or ()))
        by = _by_key(labels)
        for session in sessions:
            code = self.types.setdefault(session.task_type or "unknown", len(self.types))
            gold = session.gold
            self.s_gold.append(_nan(gold.session_satisfaction if gold is not None else None))
            self.s_type.append(code)
            self.s_group.append(len(self.s_group))
            label = by.get((session.session_id, None, "session"))
            for name, read in _READERS.items():
                value = read(label) if label is not None and label.value is not None else None
                self.s_pred[name].append(_nan(value))
            qs = gold.query_satisfaction if gold is not None else None
            for position, turn in enumerate(session.turns):
                label = by.get((session.session_id, turn.index, "turn"))
                for name, read in _READERS.items():
                    value = read(label) if label is not None and label.value is not None else None
                    self.q_pred[name].append(_nan(value))
                self.q_gold.append(
                    _nan(qs[position] if qs is not None and position < len(qs) else None)
                )
                self.q_type.append(code)
                self.q_group.append(self.s_group[-1])

    def result(self, link_source: str | None, n_boot: int, seed: int) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        s_gold, q_gold = np.asarray(self.s_gold), np.asarray(self.q_gold)
        sdcg = np.asarray(self.sdcg)
        if self.with_sdcg:
            out["sdcg_urge"] = {
                "link_labels": link_source,
                "session_level": _corr(sdcg, s_gold, n_boot, seed),
            }
        if not self.has_scores:
            return out or None
        s_type, q_type = np.asarray(self.s_type), np.asarray(self.q_type)
        for name in _READERS:
            s_pred, q_pred = np.asarray(self.s_pred[name]), np.asarray(self.q_pred[name])
            if np.isnan(s_pred).all() and np.isnan(q_pred).all():
                continue
            block: dict[str, Any] = {
                "query_level": _corr(q_pred, q_gold, n_boot, seed),
                "session_level": _corr(s_pred, s_gold, n_boot, seed),
                "calibration": {
                    "query_level": cross_validated_calibration(
                        _optional(on_gold_scale(q_pred)),
                        _optional(q_gold),
                        self.q_group.tolist(),
                        scale=SATISFACTION_SCALE,
                    ),
                    "session_level": cross_validated_calibration(
                        _optional(on_gold_scale(s_pred)),
                        _optional(s_gold),
                        self.s_group.tolist(),
                        scale=SATISFACTION_SCALE,
                    ),
                },
            }
            if self.with_sdcg:
                combined = zscore_combine(_optional(s_pred), _optional(sdcg))
                block["combined_with_sdcg_urge"] = {
                    "link_labels": link_source,
                    "session_level": _corr(combined, s_gold, n_boot, seed),
                }
            per_type: dict[str, Any] = {}
            for task_type in sorted(self.types):
                in_s, in_q = s_type == self.types[task_type], q_type == self.types[task_type]
                per_type[task_type] = {
                    "query_level": _corr(q_pred[in_q], q_gold[in_q], n_boot, seed),
                    "session_level": _corr(s_pred[in_s], s_gold[in_s], n_boot, seed),
                }
            block["per_task_type"] = per_type
            out[name] = block
        return out


def satisfaction_scores(
    sessions: Sequence[Session],
    labels: Sequence[Label],
    *,
    link_labels: Sequence[Label] | None = None,
    link_source: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Correlations of the judge's satisfaction scores with the users' (``None`` when the
    judge gives no satisfaction scores and there are no link labels)."""
    columns = _SatisfactionColumns(with_sdcg=link_labels is not None)
    columns.add(sessions, labels, link_labels)
    return columns.result(link_source, n_boot, seed)


def _turn_scores(sessions: Sequence[Session], labels: Sequence[Label]) -> dict[str, float]:
    """One score per query: the satisfaction label, else the mean of its link labels."""
    by = _by_key(labels)
    links = link_label_map(labels)
    out: dict[str, float] = {}
    for session in sessions:
        for turn in session.turns:
            ident = f"{session.session_id}#{turn.index}"
            label = by.get((session.session_id, turn.index, "turn"))
            if label is not None and label.value is not None:
                out[ident] = float(label.value)
            elif (session.session_id, turn.index) in links:
                values = links[(session.session_id, turn.index)].values()
                out[ident] = sum(values) / len(values)
    return out


class _QueryOrder:
    """The queries with both a judge score and a gold satisfaction, in log order."""

    def __init__(self) -> None:
        self.ids = TextColumn()
        self.score: array[float] = array("d")
        self.gold: array[float] = array("d")

    def add(self, sessions: Sequence[Session], labels: Sequence[Label]) -> None:
        scores = _turn_scores(sessions, labels)
        for session in sessions:
            qs = session.gold.query_satisfaction if session.gold else None
            for position, turn in enumerate(session.turns):
                ident = f"{session.session_id}#{turn.index}"
                if qs is None or position >= len(qs) or qs[position] is None:
                    continue
                if ident in scores:
                    self.ids.append(ident)
                    self.score.append(scores[ident])
                    self.gold.append(float(qs[position]))  # type: ignore[arg-type]

    def result(self, fraction: float) -> dict[str, Any] | None:
        n = len(self.ids)
        if n < 2:
            return None
        depth = max(2, int(math.ceil(fraction * n)))
        gold, score = np.asarray(self.gold), np.asarray(self.score)
        # stable sorts: ties keep log order (session, then position)
        gold_order = np.argsort(gold, kind="stable")
        judge_order = np.argsort(score, kind="stable")
        hardest = np.sort(gold_order[:depth])
        judged_hardest = hardest[np.argsort(score[hardest], kind="stable")]
        hardest = gold_order[:depth]
        ids, listed = self.ids, min(depth, LISTED_HARDEST)
        return {
            "n_queries": n,
            "depth": depth,
            # over the queries' row numbers (one per query, as their ids are)
            "rbo": rbo(judge_order[:depth].tolist(), hardest.tolist(), p=0.9),
            "kendall_tau": kendall_tau(judged_hardest.tolist(), hardest.tolist()),
            # the first of each ordering: the figures above cover the whole depth
            "listed": listed,
            "hardest_gold": [ids[i] for i in hardest[:listed]],
            "hardest_judge": [ids[i] for i in judge_order[:listed]],
        }


def ordering_scores(
    sessions: Sequence[Session], labels: Sequence[Label], *, fraction: float = HARDEST_FRACTION
) -> dict[str, Any] | None:
    """How well the judge finds the hardest queries: the gold ordering is the queries by
    ascending query satisfaction (ties by position), the judge's by its ascending per-query
    score; RBO (p = 0.9, extrapolated, in [0, 1]) compares the hardest ``fraction`` of both
    and Kendall tau the judge's and the gold ordering of those gold-hardest queries."""
    order = _QueryOrder()
    order.add(sessions, labels)
    return order.result(fraction)


def gold_sdcg(session: Session) -> float | None:
    """URGE's ``sDCG`` of ``session`` from its expert labels (``None`` without them)."""
    if session.gold is None or session.gold.link_usefulness is None:
        return None
    return SDCG_URGE().compute(gold_statement_usefulness(session))


class _SessionMeans:
    """Per session, the judge's value of a system-level metric and its gold value: mean
    ``sdcg_urge`` for a link judge (``links``), mean session satisfaction for a
    satisfaction judge."""

    def __init__(self, links: bool) -> None:
        self.metric = "sdcg_urge" if links else "session_satisfaction"
        self.links = links
        self.judged: array[float] = array("d")
        self.gold: array[float] = array("d")

    def add(self, sessions: Sequence[Session], labels: Sequence[Label]) -> None:
        if self.links:
            self.judged.extend(_nan(v) for v in sdcg_from_labels(sessions, labels))
            self.gold.extend(_nan(gold_sdcg(s)) for s in sessions)
            return
        by = _by_key(labels)
        for session in sessions:
            label = by.get((session.session_id, None, "session"))
            value = label.value if label is not None else None
            # On the users' 1-5 scale, so the judge's mean and PPI's rectifier (judge minus
            # gold) compare like with like.
            self.judged.append(
                float(on_gold_scale(value)) if isinstance(value, int | float) else math.nan
            )
            self.gold.append(_nan(session.gold.session_satisfaction if session.gold else None))

    def result(self, labelled: int | None, splits: int, seed: int) -> dict[str, Any] | None:
        judged = _optional(np.asarray(self.judged))
        gold = _optional(np.asarray(self.gold))
        if all(g is None for g in gold) or all(j is None for j in judged):
            return None
        # the gold's scale: users' ratings 1-5; sDCG of expert labels is at least 0
        bounds = (0.0, math.inf) if self.links else SATISFACTION_SCALE
        if labelled is None:
            block = ppi_block(judged, gold, metric=self.metric, bounds=bounds)
        else:
            block = _simulated_ppi(judged, gold, self.metric, labelled, splits, seed, bounds)
        if not self.links:
            block["judge_scale"] = (
                "the judge's 1-10 session ratings mapped linearly onto the users' 1-5 "
                "(1 -> 1, 10 -> 5)"
            )
        return block


def _simulated_ppi(
    judged: list[float | None],
    gold: list[float | None],
    metric: str,
    labelled: int,
    splits: int,
    seed: int,
    bounds: tuple[float, float] | None = None,
) -> dict[str, Any]:
    both = [
        i
        for i, (j, g) in enumerate(zip(judged, gold, strict=True))
        if j is not None and g is not None
    ]
    if not 2 <= labelled <= len(both) - 2:
        raise ValueError(
            f"labelled sessions for PPI must be between 2 and {len(both) - 2} "
            f"(sessions with gold and a judged {metric}: {len(both)}), got {labelled}"
        )
    in_both = set(both)
    target = float(np.mean([gold[i] for i in both]))
    rng = np.random.default_rng(seed)
    hits = {"ppi": 0, "ppi_tuned": 0, "gold_mean": 0}
    widths: dict[str, list[float]] = {name: [] for name in hits}
    example: dict[str, Any] | None = None
    for _ in range(splits):
        keep = set(rng.choice(both, size=labelled, replace=False).tolist())
        hidden = [g if (i in keep or i not in in_both) else None for i, g in enumerate(gold)]
        block = ppi_block(judged, hidden, metric=metric, bounds=bounds)
        example = example or block
        for name in hits:
            lo, hi = block[name]["ci"]
            hits[name] += lo <= target <= hi
            widths[name].append(hi - lo)
    assert example is not None
    example["simulated"] = {
        "labelled": labelled,
        "splits": splits,
        "seed": seed,
        "target_mean": target,
        "target": f"mean {metric} over the {len(both)} sessions with gold",
        "coverage": {name: hits[name] / splits for name in hits},
        "mean_width": {name: sum(w) / len(w) for name, w in widths.items()},
    }
    return example


def ppi_scores(
    sessions: Sequence[Session],
    labels: Sequence[Label],
    *,
    kind: str,
    labelled: int | None = None,
    splits: int = 200,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Prediction-powered estimate of a system-level mean (:mod:`genir_eval.meta.ppi`):
    mean ``sdcg_urge`` over sessions for a link judge (gold: the experts' link labels),
    mean session satisfaction for a satisfaction judge (gold: the users' ratings); ``None``
    for other judges or without any gold.

    With ``labelled=K`` the sample is treated as if only K sessions carried gold: ``splits``
    seeded random draws of K labelled sessions (the rest unlabelled) give the coverage of
    the mean over every gold-labelled session and the mean interval widths of PPI, PPI++
    and the gold-only interval; the first draw is reported with them. This is how PPI's
    promise is checked on a sample where every session has gold."""
    context = GoldContext(seed=seed, ppi_labelled=labelled, ppi_splits=splits)
    return _one_block(kind, "ppi", context, sessions, labels)


def _one_block(
    kind: str,
    name: str,
    context: GoldContext,
    sessions: Sequence[Session],
    labels: Sequence[Label],
) -> dict[str, Any] | None:
    """The block ``name`` of a ``kind`` judge's comparison with gold (``None`` when the kind
    has no such block or it has nothing to say)."""
    for block in judge_kind(kind).gold_blocks(context):
        if block.name == name:
            block.add(sessions, labels, None)
            found = block.result()
            return dict(found) if found is not None else None
    return None


def _graded(labels: Sequence[Label], links: bool) -> list[Label]:
    if links:
        return [lb for lb in labels if lb.key.item.startswith("link:")]
    return [lb for lb in labels if lb.key.item in {"turn", "session"}]


class _Degeneracy:
    """A graded judge's label counts and (up to :data:`MAX_REASONS`) its replies."""

    def __init__(self, links: bool) -> None:
        self.links = links
        self.values: Counter[Any] = Counter()
        self.missing = 0
        self.raws: list[str | None] = []

    def add(self, labels: Sequence[Label]) -> None:
        for label in _graded(labels, self.links):
            if isinstance(label.value, int | float | str):
                self.values[label.value] += 1
                if len(self.raws) < MAX_REASONS:
                    self.raws.append(label.raw)
            else:
                self.missing += 1

    def result(self, instructions: Sequence[str]) -> dict[str, Any] | None:
        if not self.values and not self.missing:
            return None
        return degeneracy(list(self.values.elements()), self.raws, instructions)


def degenerate_scores(
    labels: Sequence[Label], kind: str, instructions: Sequence[str] = ()
) -> dict[str, Any] | None:
    """Whether the judge's graded labels are (nearly) constant or its reasons copy its
    instructions (:func:`genir_eval.meta.degenerate.degeneracy`), over its link labels for
    a link judge and its turn and session labels for a satisfaction judge (``None`` for
    other kinds)."""
    context = GoldContext(instructions=tuple(instructions))
    return _one_block(kind, "degenerate", context, (), labels)


class _Thumbs:
    """Each turn's score from the judge beside the user's thumbs on that answer: the turn
    label (and its expected value) for a satisfaction judge; the mean link label (and mean
    expected label) of the turn's links for a link judge."""

    def __init__(self, links: bool) -> None:
        self.links = links
        self.thumbs: array[float] = array("d")
        self.scores: dict[str, array[float]] = {"label": array("d"), "expected": array("d")}

    def add(self, sessions: Sequence[Session], labels: Sequence[Label]) -> None:
        by = _by_key(labels)
        for session in sessions:
            thumbs = session.gold.thumbs if session.gold is not None else None
            if thumbs is None:
                continue
            for position, turn in enumerate(session.turns):
                if position >= len(thumbs):
                    break
                self.thumbs.append(_nan(thumbs[position]))
                if self.links:
                    found = [
                        by.get((session.session_id, turn.index, f"link:{link_id}"))
                        for link_id in turn.cited_link_ids
                    ]
                    present = [lb for lb in found if lb is not None and lb.value is not None]
                    values = [float(lb.value) for lb in present]  # type: ignore[arg-type]
                    expected = [lb.extra.get("expected") for lb in present]
                    self.scores["label"].append(float(np.mean(values)) if values else math.nan)
                    self.scores["expected"].append(
                        float(np.mean(expected))  # type: ignore[arg-type]
                        if expected and all(e is not None for e in expected)
                        else math.nan
                    )
                    continue
                label = by.get((session.session_id, turn.index, "turn"))
                value = label.value if label is not None else None
                self.scores["label"].append(
                    float(value) if isinstance(value, int | float) else math.nan
                )
                self.scores["expected"].append(
                    _nan(expected_value(label)) if label is not None else math.nan
                )

    def result(self, n_boot: int, seed: int) -> dict[str, Any] | None:
        thumbs = _optional(np.asarray(self.thumbs))
        if all(t is None for t in thumbs):
            return None
        turn = {
            name: binary_agreement(_optional(np.asarray(column)), thumbs, n_boot=n_boot, seed=seed)
            for name, column in self.scores.items()
            if not np.isnan(np.asarray(column)).all()
        }
        what = "mean link label of the turn" if self.links else "turn label"
        return {"target": FEEDBACK_TARGET, "score": what, "turn": turn}


class GoldComparison:
    """One judge's labels against the gold ones, gathered window by window of sessions.

    The blocks are the judge kind's (:meth:`genir_eval.judges.kinds.JudgeKind.gold_blocks`,
    built from the pieces below). ``add(sessions, labels, link_labels)`` keeps only numbers
    (label/gold pairs, per-query and per-session columns, span set sizes), so a run of any
    size keeps memory linear in its queries at 8 bytes a number (a citation support judge's
    sessions and labels are kept whole: its figures need each turn's statements);
    ``result()`` gives the blocks :func:`score_labels` documents, the same figures as
    scoring all sessions at once. A link judge is its own source of ``sdcg_urge``; a
    satisfaction judge is combined with ``link_labels`` when ``with_link_labels`` is set
    (``link_source`` names them).
    """

    def __init__(
        self,
        kind: str,
        *,
        with_link_labels: bool = False,
        link_source: str | None = None,
        n_boot: int = 1000,
        seed: int = 0,
        fraction: float = HARDEST_FRACTION,
        instructions: Sequence[str] = (),
        ppi_labelled: int | None = None,
    ) -> None:
        self.kind = kind
        context = GoldContext(
            with_link_labels=with_link_labels,
            link_source=link_source,
            n_boot=n_boot,
            seed=seed,
            fraction=fraction,
            instructions=tuple(instructions),
            ppi_labelled=ppi_labelled,
        )
        self.blocks = judge_kind(kind).gold_blocks(context)

    def add(
        self,
        sessions: Sequence[Session],
        labels: Sequence[Label],
        link_labels: Sequence[Label] | None = None,
    ) -> None:
        for block in self.blocks:
            block.add(sessions, labels, link_labels)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for block in self.blocks:
            found = block.result()
            if found is not None:
                out[block.name] = found
        return out


# The pieces a kind's comparison with gold is built from, one block each.


def degeneracy_block(context: GoldContext, *, links: bool) -> GoldBlock:
    """``degenerate``: the graded labels (per link with ``links``, else per turn and
    session) for collapse and copied instructions (:func:`degenerate_scores`)."""
    found = _Degeneracy(links)
    return GoldBlock(
        "degenerate",
        lambda sessions, labels, link_labels: found.add(labels),
        lambda: found.result(context.instructions),
    )


def link_pairs_block(name: str, context: GoldContext) -> GoldBlock:
    """The link labels against the experts' (:func:`link_usefulness_scores`)."""
    pairs = _LinkPairs()
    return GoldBlock(
        name,
        lambda sessions, labels, link_labels: pairs.add(sessions, labels),
        lambda: pairs.result(context.n_boot, context.seed),
    )


def span_block(name: str) -> GoldBlock:
    """The units marked useful against the gold marks (:func:`spans_scores`)."""
    counts = _SpanCounts(name)
    return GoldBlock(
        name, lambda sessions, labels, link_labels: counts.add(sessions, labels), counts.result
    )


def satisfaction_block(name: str, context: GoldContext, *, own_links: bool) -> GoldBlock:
    """Satisfaction labels against the users' (:func:`satisfaction_scores`), combined with
    ``sdcg_urge`` from link labels: the judge's own with ``own_links`` (a link judge), else
    the ``link_labels`` given when ``context.with_link_labels``."""
    columns = _SatisfactionColumns(with_sdcg=own_links or context.with_link_labels)
    source = "judge" if own_links else context.link_source

    def add(
        sessions: Sequence[Session], labels: Sequence[Label], link_labels: Sequence[Label] | None
    ) -> None:
        columns.add(sessions, labels, labels if own_links else link_labels)

    return GoldBlock(
        name, add, lambda: columns.result(source, context.n_boot, context.seed) or None
    )


def citation_support_block(name: str) -> GoldBlock:
    """Support verdicts against the gold ones (:func:`citation_support_scores`); the
    sessions and labels are kept whole, each turn's statements being needed."""
    sessions_kept: list[Session] = []
    labels_kept: list[Label] = []

    def add(
        sessions: Sequence[Session], labels: Sequence[Label], link_labels: Sequence[Label] | None
    ) -> None:
        sessions_kept.extend(sessions)
        labels_kept.extend(labels)

    return GoldBlock(name, add, lambda: citation_support_scores(sessions_kept, labels_kept))


def ordering_block(context: GoldContext) -> GoldBlock:
    """``orderings``: the hardest queries by the judge and by gold (:func:`ordering_scores`)."""
    order = _QueryOrder()
    return GoldBlock(
        "orderings",
        lambda sessions, labels, link_labels: order.add(sessions, labels),
        lambda: order.result(context.fraction),
    )


def thumbs_block(context: GoldContext, *, links: bool) -> GoldBlock:
    """``feedback``: each turn's label (the mean link label with ``links``) against the
    users' thumbs."""
    thumbs = _Thumbs(links)
    return GoldBlock(
        "feedback",
        lambda sessions, labels, link_labels: thumbs.add(sessions, labels),
        lambda: thumbs.result(context.n_boot, context.seed),
    )


def session_means_block(context: GoldContext, *, links: bool) -> GoldBlock:
    """``ppi``: the prediction-powered mean of ``sdcg_urge`` (``links``) or of session
    satisfaction (:func:`ppi_scores`)."""
    means = _SessionMeans(links)
    return GoldBlock(
        "ppi",
        lambda sessions, labels, link_labels: means.add(sessions, labels),
        lambda: means.result(context.ppi_labelled, context.ppi_splits, context.seed),
    )


def citation_support_scores(
    sessions: Sequence[Session], labels: Sequence[Label]
) -> dict[str, Any] | None:
    """The judge's support verdicts against the gold ones (``None`` without gold support
    labels). Pairs the gold leaves out are not scored; a pair the judge left missing counts
    under ``missing`` with its reason."""
    by = _by_key(labels)
    pred: list[int | None] = []
    gold: list[int] = []
    reasons: dict[str, int] = defaultdict(int)
    judge_turns: list[list[Any]] = []
    gold_turns: list[list[Any]] = []
    for session in sessions:
        gold_statements = gold_cited_statements(session)
        if gold_statements is None or session.gold is None or not session.gold.citation_support:
            continue
        gold_statements_by_turn = iter(gold_statements)
        for position, turn in enumerate(session.turns):
            verdicts = session.gold.citation_support[position]
            judged: dict[tuple[int, int], int | None] = {}
            for s_position, per_link in enumerate(verdicts, start=1):
                for link_id, level in sorted(per_link.items()):
                    label = by.get((session.session_id, turn.index, f"cite:{s_position}:{link_id}"))
                    if label is None or label.value is None:
                        reasons[(label.missing_reason if label else None) or "not judged"] += 1
                        pred.append(None)
                    else:
                        pred.append(int(label.value))
                        judged[(s_position, link_id)] = int(label.value)
                    gold.append(SUPPORT_VALUE[level])
            judge_turns.append(cited_statements(turn, judged))
            gold_turns.append(next(gold_statements_by_turn))
    if not gold:
        return None
    scale = [SUPPORT_VALUE[level] for level in reversed(SUPPORT_LEVELS)]  # 0 none .. 2 full
    paired = [(p, g) for p, g in zip(pred, gold, strict=True) if p is not None]
    measures: dict[str, Any] = {}
    for text in DEFAULT_CITATION_MEASURES:
        measure: Any = parse_measure(text)
        judge_values = [measure.compute([t]) for t in judge_turns]
        gold_values = [measure.compute([t]) for t in gold_turns]
        both = [
            (j, g)
            for j, g in zip(judge_values, gold_values, strict=True)
            if j is not None and g is not None
        ]
        measures[str(measure)] = {
            "judge": measure.compute(judge_turns),
            "gold": measure.compute(gold_turns),
            "n_turns": len(both),
            "mae_per_turn": mae([j for j, _ in both], [g for _, g in both]),
        }
    return {
        "accuracy": sum(p == g for p, g in paired) / len(paired) if paired else None,
        "cohen_kappa": cohen_kappa(pred, gold, labels=scale),
        "cohen_kappa_weighted": cohen_kappa(pred, gold, weights="linear", labels=scale),
        "cohen_kappa_binary": cohen_kappa(
            binarize(pred, threshold=2), binarize(gold, threshold=2), labels=[0, 1]
        ),
        "confusion_matrix": {
            "labels": [level for level in reversed(SUPPORT_LEVELS)],
            "rows": "gold",
            "columns": "judge",
            "matrix": confusion_matrix(pred, gold, labels=scale),
        },
        "measures": measures,
        "n": len(paired),
        "missing": sum(1 for p in pred if p is None),
        "missing_reasons": dict(reasons),
    }


def score_labels(
    sessions: Sequence[Session],
    labels: Sequence[Label],
    *,
    kind: str,
    link_labels: Sequence[Label] | None = None,
    link_source: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    instructions: Sequence[str] = (),
    ppi_labelled: int | None = None,
) -> dict[str, Any]:
    """Every applicable block of the meta-evaluation for labels of a judge of ``kind``.

    ``instructions`` are the judge's prompt templates, against which its reasons are
    checked for copying (``degenerate``); ``ppi_labelled`` asks the ``ppi`` block to
    simulate a sample where only that many sessions carry gold (see :func:`ppi_scores`)."""
    comparison = GoldComparison(
        kind,
        with_link_labels=link_labels is not None,
        link_source=link_source,
        n_boot=n_boot,
        seed=seed,
        instructions=instructions,
        ppi_labelled=ppi_labelled,
    )
    comparison.add(sessions, labels, link_labels)
    return comparison.result()


def judge_instructions(judge: Any) -> list[str]:
    """The judge's prompt templates (English and Chinese) for the copying check; empty for
    a judge that does not expose them."""
    template_text = getattr(judge, "template_text", None)
    if template_text is None:
        return []
    out = []
    for language in ("en", "zh"):
        try:
            out.append(str(template_text(language)))
        except (OSError, ValueError, KeyError, ConfigError):
            continue
    return out
