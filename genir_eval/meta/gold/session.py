"""Comparisons with gold that the link and the satisfaction kinds share: session and turn
scores against the users' satisfaction ratings, the hardest queries' ordering, thumbs,
session means with prediction-powered intervals, and degenerate labellings. Each is a
:class:`~genir_eval.judges.kinds.GoldBlock` a kind's comparison picks (as
``link_sets.py`` holds what the kinds that pick useful links share).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from genir_eval.columns import TextColumn
from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldBlock, GoldContext
from genir_eval.meta.calibration import cross_validated_calibration
from genir_eval.meta.degenerate import degeneracy
from genir_eval.meta.gold.links import (
    _by_key,
    _nan,
    expected_value,
    link_label_map,
    sdcg_from_labels,
)
from genir_eval.meta.ppi import ppi_block
from genir_eval.meta.stats import (
    binary_agreement,
    correlations,
    kendall_tau,
    rbo,
)
from genir_eval.metrics import (
    SDCG_URGE,
    gold_statement_usefulness,
    zscore_combine,
)
from genir_eval.records import Session

__all__ = [
    "HARDEST_FRACTION",
    "LISTED_HARDEST",
    "SATISFACTION_SCALE",
    "JUDGE_SATISFACTION_SCALE",
    "on_gold_scale",
    "FEEDBACK_TARGET",
    "MAX_REASONS",
    "satisfaction_scores",
    "ordering_scores",
    "gold_sdcg",
    "degeneracy_block",
    "satisfaction_block",
    "ordering_block",
    "thumbs_block",
    "session_means_block",
]

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


def _gold_position(session: Session, turn_index: int) -> int | None:
    for position, turn in enumerate(session.turns):
        if turn.index == turn_index:
            return position
    return None


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
