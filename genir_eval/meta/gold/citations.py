"""The citation support judge's comparison with gold: its support verdicts against the
gold support labels (accuracy, kappa) and the citation measures computed from either.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldBlock
from genir_eval.meta.gold.links import _by_key
from genir_eval.meta.stats import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    mae,
)
from genir_eval.metrics import (
    DEFAULT_CITATION_MEASURES,
    cited_statements,
    gold_cited_statements,
    parse_measure,
)
from genir_eval.records import SUPPORT_LEVELS, SUPPORT_VALUE, Session

__all__ = [
    "citation_support_scores",
    "citation_support_block",
]


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
