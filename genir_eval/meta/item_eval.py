"""Meta-evaluation of the ITEM and RUBRIC judges against gold link usefulness (URGE, 0-3).

:func:`evaluate_item` scores an ITEM judge's utility sets (precision, recall, F1 against the
links whose gold label is at least ``gold_min``) and rankings (nDCG@k with the gold labels
as gains), with the loop's iterations and the calls and tokens it used, and the same set
figures for the *first* iteration, so a run shows whether iterating changed anything.
:func:`evaluate_rubric` scores a rubric judge's passage labels for links the same way, and
its response coverage against the user's query satisfaction.

:func:`genir_eval.runner.judge_eval.compare_item` runs several judges on the same sessions
and engine and lays the figures side by side (``python -m genir_eval.cli.item_eval SESSIONS``
does it offline).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from genir_eval.judges.base import Label
from genir_eval.judges.item.judge import JUDGES as ITEM_JUDGES
from genir_eval.judges.item.judge import TURN_ITEM
from genir_eval.judges.rubric.grading import JUDGES as RUBRIC_JUDGES
from genir_eval.meta.stats import correlations, precision_recall_f1
from genir_eval.records import Session

__all__ = [
    "ndcg_at",
    "gold_links",
    "evaluate_item",
    "evaluate_rubric",
    "ItemFigures",
    "RubricFigures",
    "format_item_table",
    "format_rubric_table",
    "ITEM_JUDGES",
    "RUBRIC_JUDGES",
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


def evaluate_item(
    sessions: Iterable[Session],
    labels: Iterable[Label],
    *,
    gold_min: int = 3,
    k: int = 5,
) -> dict[str, Any]:
    """Figures of one ITEM judge's labels against gold link usefulness.

    Only turns with gold link labels count, and only links with a gold label enter the
    sets (an unlabelled link is unknown, not useless). A link is useful in gold when its
    label is ``>= gold_min`` (3: "very useful" only; 2: useful or better). Rankings come
    from the turn trace: the final iteration's ranking, or for set-only judges the set
    first then the rest in citation order. ``ndcg_log_order`` is the log's own citation
    order, the reference any ranking should beat. Turns whose judgment is missing are
    counted in ``turns_missing`` and left out of the figures, never scored as empty sets.
    A run gathers the same figures window by window with :class:`ItemFigures`.
    """
    figures = ItemFigures(gold_min=gold_min, k=k)
    figures.add(sessions, labels)
    return figures.result()


def _ranking(iteration: Mapping[str, Any], order: Sequence[int]) -> list[int]:
    ranking = iteration.get("ranking")
    if ranking:
        ranked = [int(c) for c in ranking]
        return ranked + [c for c in order if c not in ranked]
    selected = [int(c) for c in iteration.get("selected") or []]
    return selected + [c for c in order if c not in selected]


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


def evaluate_rubric(
    sessions: Iterable[Session],
    labels: Iterable[Label],
    *,
    gold_min: int = 3,
    k: int = 5,
) -> dict[str, Any]:
    """Figures of a rubric (or direct-grading) judge's link labels against gold usefulness.

    Link labels are items ``link:<id>`` whose value is a grade (0-5 for the rubric, 0-2 or
    0/1 for the direct baselines) and ``extra["relevant"]`` the thresholded binary label.
    Reports the correlation of grades with gold labels over all labelled links, P/R/F1 of
    the binary labels against ``gold >= gold_min``, nDCG@k of the links ordered by grade
    (citation order breaks ties), and the correlation of the turn coverage (item
    ``coverage``) with the user's query satisfaction. A run gathers the same figures window
    by window with :class:`RubricFigures`.
    """
    figures = RubricFigures(gold_min=gold_min, k=k)
    figures.add(sessions, labels)
    return figures.result()


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def format_item_table(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table: one row per judge, the figures :func:`evaluate_item` returns."""
    header = [
        "judge",
        "P",
        "R",
        "F1",
        "macroF1",
        "F1@it1",
        "nDCG",
        "nDCG@it1",
        "iters",
        "calls",
        "tokens",
    ]
    rows = [header]
    for name, r in reports.items():
        k = r["k"]
        rows.append(
            [
                name,
                _fmt(r["final"]["precision"]),
                _fmt(r["final"]["recall"]),
                _fmt(r["final"]["f1"]),
                _fmt(r["final"]["macro_f1"]),
                _fmt(r["first_iteration"]["f1"]),
                _fmt(r[f"ndcg@{k}"]),
                _fmt(r[f"ndcg@{k}_first_iteration"]),
                _fmt(r["mean_iterations"]),
                _fmt(r["calls"]),
                _fmt(r["input_tokens"] + r["output_tokens"]),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def format_rubric_table(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table of :func:`evaluate_rubric` reports, one row per judge."""
    header = ["judge", "P", "R", "F1", "kendall", "spearman", "nDCG", "cov~sat"]
    rows = [header]
    for name, r in reports.items():
        grade = r["grade_vs_gold"]
        rows.append(
            [
                name,
                _fmt(r["binary"]["precision"]),
                _fmt(r["binary"]["recall"]),
                _fmt(r["binary"]["f1"]),
                _fmt(grade["kendall"]),
                _fmt(grade["spearman"]),
                _fmt(r[f"ndcg@{r['k']}"]),
                _fmt(r["coverage_vs_query_satisfaction"]["kendall"]),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(line.rstrip() for line in lines)
