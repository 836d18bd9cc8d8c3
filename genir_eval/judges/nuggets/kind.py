"""The nugget kind: per turn, the query's nuggets with the answer's assignment of each
(item ``nuggets``), scored by the nugget measures (:mod:`genir_eval.metrics.nuggets`); its
own score is TREC 2024 RAG's "all" score. Its scores meet gold as every session score does
(people's preferences: pair agreement; ratings: correlations, in ``meta.json``); its own
block of ``meta.json`` (:mod:`genir_eval.meta.gold.nuggets`) gives each system's mean scores
with 95% intervals (a system is the answers' ``meta.system``, as CrowdRAG's carry it, else the
run), shown in the summary and the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.judges.kinds import (
    Interval,
    JudgeCell,
    JudgeKind,
    JudgeTable,
    interval_text,
)
from genir_eval.records import NUGGETS as EVIDENCE

__all__ = ["Nuggets", "KIND", "NAME", "SCORES", "turn_scores", "label_nuggets"]

NAME = "nuggets"
#: The scores a system is summarised by, TREC 2024 RAG's four and the weighted recall:
#: (name, vital only, partial, weighted).
SCORES = (
    ("nugget_recall", False, 0.5, False),
    ("nugget_recall(partial=0)", False, 0.0, False),
    ("vital_nugget_recall", True, 0.5, False),
    ("vital_nugget_recall(partial=0)", True, 0.0, False),
    ("weighted_nugget_recall", False, 0.5, True),
)
_GAIN = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
#: A nugget's weight without a grade (the AutoNuggetizer's weighted score).
_WEIGHT = {"vital": 1.0, "okay": 0.5}


def _weight(nugget: Mapping[str, Any]) -> float:
    grade = nugget.get("grade")
    if isinstance(grade, (int, float)) and not isinstance(grade, bool):
        return float(grade)
    return _WEIGHT.get(str(nugget.get("importance")), 0.0)


def label_nuggets(value: Any) -> list[Mapping[str, Any]]:
    """A turn label's nuggets, each with its id, text, importance (and grade) and the
    answer's assignment; none for a value that is not a nugget label."""
    listed = value.get(NAME) if isinstance(value, Mapping) else None
    return [n for n in listed if isinstance(n, Mapping)] if isinstance(listed, list) else []


def turn_scores(value: Any) -> dict[str, float | None]:
    """A turn label's scores (the nugget measures at those parameters; a test checks they
    agree); ``None`` where no nugget counts or one is unassigned."""
    out: dict[str, float | None] = {name: None for name, *_ in SCORES}
    if not isinstance(value, Mapping) or not isinstance(value.get("nuggets"), list):
        return out
    nuggets = [n for n in value["nuggets"] if isinstance(n, Mapping)]
    for name, vital_only, partial, weighted in SCORES:
        counted = [n for n in nuggets if not vital_only or n.get("importance") == "vital"]
        words = [str(n.get("assignment")) for n in counted]
        if not counted or not all(w in _GAIN for w in words):
            continue
        weights = [_weight(n) if weighted else 1.0 for n in counted]
        if sum(weights) <= 0:
            continue
        gains = [
            1.0 if w == "support" else partial if w == "partial_support" else 0.0 for w in words
        ]
        out[name] = sum(g * w for g, w in zip(gains, weights, strict=True)) / sum(weights)
    return out


class Nuggets(JudgeKind):
    name = NAME
    evidence = EVIDENCE
    own_items = frozenset({"nuggets"})
    judges_nuggets = True
    own_score = (
        "0-1",
        "the coverage of the query's nuggets: the share of them the answer supports, a "
        "partial support counting half (TREC 2024 RAG 'all')",
    )

    def turn_value(self, value: Any, n_segments: int) -> float | None:
        return turn_scores(value)["nugget_recall"]

    def _table(self, blocks: Mapping[str, Mapping[str, Any]], key: str) -> JudgeTable | None:
        rows = []
        for judge, block in blocks.items():
            for system, scores in (block.get("systems") or {}).items():
                rows.append(
                    [
                        JudgeCell(judge, after=f" · {system}"),
                        scores.get("answers"),
                        *(Interval.of(scores, name) for name, *_ in SCORES),
                    ]
                )
        if not rows:
            return None
        return JudgeTable(
            "Coverage of the nuggets per system (mean over answers, 95% interval over queries)",
            ("judge · system", "answers", "all", "all strict", "vital", "vital strict", "weighted"),
            rows,
            key=key,
            note=(
                "Coverage of the nuggets (TREC 2024 RAG's scores): the share of a query's "
                "nuggets (all, or vital only) the answer supports, a partial support counting "
                "half (strict: nothing); weighted: each nugget weighing its importance grade "
                "as given, else vital 1 and okay 0.5. A query without vital nuggets has no "
                "vital score."
            ),
        )

    def quality_lines(self, block: Mapping[str, Any]) -> list[str]:
        """The judge's nugget assignments against people's labels, where the input has them
        (``meta.json``'s ``people``, :mod:`genir_eval.meta.gold.nuggets`)."""
        own = block.get(NAME)
        people = own.get("people") if isinstance(own, Mapping) else None
        if not isinstance(people, Mapping):
            return []
        lines = [
            "nugget assignments vs people's labels (gives the nugget = support or partial; "
            f"95% intervals over queries): {_figures(people)} over {people['n']} (nugget, "
            f"answer) pairs of {people['queries']} queries; people say it gives "
            f"{_share(people.get('people_give'))}, the judge {_share(people.get('judge_gives'))}"
        ]
        for grade, figures in (people.get("by_importance") or {}).items():
            lines.append(f"  importance {grade}: {_figures(figures)} over {figures['n']} pairs")
        ppi = people.get("ppi") or {}
        estimate = ppi.get("ppi") or ppi.get("gold_mean")
        if isinstance(estimate, Mapping):
            how = "PPI" if ppi.get("ppi") else "people's labels only"
            lines.append(
                f"  nugget recall, {how}: {estimate['estimate']:.3f}{interval_text(estimate['ci'])} "
                f"from {ppi['n_labelled']} labelled and {ppi['n_unlabelled']} unlabelled turns "
                f"(the judge alone: {_share(ppi.get('judge_mean'))})"
            )
        elif ppi.get("reason"):
            lines.append(f"  nugget recall, PPI: none ({ppi['reason']})")
        return lines

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        return self._table(blocks, "")

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        return self._table(blocks, "nugget-systems")


def _share(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _figures(block: Mapping[str, Any]) -> str:
    ci = block.get("ci95") or {}
    return (
        f"kappa {_share(block.get('kappa'))}{interval_text(ci.get('kappa'))}, "
        f"3-level kappa {_share(block.get('kappa_3'))}{interval_text(ci.get('kappa_3'))}, "
        f"F1 {_share(block.get('f1'))}{interval_text(ci.get('f1'))}"
    )


KIND = Nuggets()
