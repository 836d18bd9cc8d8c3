"""A run's judges against gold: each judge's labels compared with the gold ones, gathered window
by window (:class:`JudgesAgainstGold`, the code behind ``genir-eval meta``), and every turn
score against the users' thumbs (:func:`feedback_agreement`). See
:mod:`genir_eval.runner.assemble`, which assembles the meta-evaluation from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.meta.evaluate import FEEDBACK_TARGET, GoldComparison
from genir_eval.meta.stats import binary_agreement
from genir_eval.records import Session
from genir_eval.rundir.folder import (
    TurnRow,
)
from genir_eval.runner.scenario import MetaSpec

__all__ = ["JudgeInfo", "JudgesAgainstGold", "judges_against_gold", "feedback_agreement"]


@dataclass(frozen=True)
class JudgeInfo:
    """What assembly needs to know of a judge: its output id and its kind."""

    id: str
    kind: str


class JudgesAgainstGold:
    """Each judge's labels against the gold ones (see :func:`judges_against_gold`),
    gathered window by window: only numbers are kept (sums, and float columns where a
    correlation needs the pairs)."""

    def __init__(
        self, judges: Sequence[JudgeInfo], link_judges: Sequence[str], spec: MetaSpec
    ) -> None:
        self.judges = list(judges)
        self.source = link_judges[0] if link_judges else None
        self.comparisons = {
            judge.id: GoldComparison(
                judge.kind,
                with_link_labels=self.source is not None,
                link_source=self.source,
                n_boot=spec.n_boot,
                seed=spec.seed,
            )
            for judge in judges
        }

    def add(self, sessions: Sequence[Session], labels: Mapping[str, Sequence[Label]]) -> None:
        link_labels = labels.get(self.source, ()) if self.source is not None else None
        for judge in self.judges:
            own = labels.get(judge.id, ())
            self.comparisons[judge.id].add(sessions, own, link_labels)

    def result(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for judge in self.judges:
            block: dict[str, Any] = {"kind": judge.kind}
            block.update(self.comparisons[judge.id].result())
            if len(block) > 1:
                out[judge.id] = block
        return out


def _any_gold_block(judges: Mapping[str, Any]) -> bool:
    """Whether any judge met gold labels (a block with at least one compared item)."""
    return any(
        isinstance(block, Mapping) and (block.get("n") or 0) > 0
        for blocks in judges.values()
        if isinstance(blocks, Mapping)
        for block in blocks.values()
    )


def feedback_agreement(turns: Sequence[TurnRow], spec: MetaSpec) -> dict[str, Any]:
    """Every turn score against the users' thumbs (up = 1, down = 0): AUC and point-biserial
    r with bootstrap intervals (:func:`genir_eval.meta.stats.binary_agreement`), since
    Pearson's r on a binary target assumes what AUC does not."""
    names: dict[str, None] = {}
    for row in turns:
        for name in row.scores:
            names.setdefault(name, None)
    thumbs = [row.thumbs for row in turns]
    return {
        "target": FEEDBACK_TARGET,
        "turn": {
            name: binary_agreement(
                [row.scores.get(name) for row in turns], thumbs, n_boot=spec.n_boot, seed=spec.seed
            )
            for name in names
        },
    }


def judges_against_gold(
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
    link_judges: Sequence[str],
    spec: MetaSpec,
) -> dict[str, dict[str, Any]]:
    """Each judge's labels against the gold ones, by judge id, exactly as ``genir-eval meta``
    scores them (:class:`genir_eval.meta.evaluate.GoldComparison`, the code behind
    ``score_labels``, plus :func:`~genir_eval.meta.item_eval.evaluate_item` /
    ``evaluate_rubric`` for ITEM and RUBRIC judges), so both commands give the same figures
    under the same names.

    A satisfaction judge is combined with ``sdcg_urge`` from the labels of the scenario's
    first link judge (``link_labels`` in its blocks names it), where ``genir-eval meta``
    uses an offline twin.
    """
    gathered = JudgesAgainstGold(judges, link_judges, spec)
    gathered.add(sessions, labels)
    return gathered.result()
