"""What the kinds whose labels pick a turn's useful links share (ITEM, RUBRIC): their one
comparison with gold, a figures object of :mod:`genir_eval.meta.item_eval` fed the judge's
labels, and their tables, a row per judge of that block's figures. Each kind states only
its figures class, its columns and its titles."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from genir_eval.judges.kinds import GoldBlock, JudgeCell, JudgeTable

if TYPE_CHECKING:
    from genir_eval.judges.base import Label
    from genir_eval.records import Session

__all__ = [
    "SetFigures",
    "Column",
    "figures_block",
    "figures_table",
    "figure",
    "set_columns",
    "ndcg",
]

#: A table column: its head and how a judge's block gives the cell.
Column = tuple[str, Callable[[Mapping[str, Any]], Any]]


class SetFigures(Protocol):
    """A kind's figures against gold, gathered window by window (``ItemFigures``,
    ``RubricFigures``)."""

    def add(self, sessions: Iterable[Session], labels: Iterable[Label]) -> None: ...

    def result(self) -> Mapping[str, Any] | None: ...


def figures_block(name: str, figures: SetFigures) -> list[GoldBlock]:
    """The kind's one gold block ``name``: the judge's labels fed to ``figures``."""
    return [
        GoldBlock(
            name,
            lambda sessions, labels, link_labels: figures.add(sessions, labels),
            figures.result,
        )
    ]


def figure(key: str, of: str | None = None) -> Callable[[Mapping[str, Any]], Any]:
    """The block's figure ``key``, or that of its part ``of`` (``None`` where it has none)."""
    if of is None:
        return lambda m: m.get(key)
    return lambda m: (m.get(of) or {}).get(key)


def set_columns(of: str) -> list[Column]:
    """Precision, recall and F1 of the chosen sets against gold, from the block's part ``of``."""
    return [
        ("precision", figure("precision", of)),
        ("recall", figure("recall", of)),
        ("F1", figure("f1", of)),
    ]


def ndcg(suffix: str = "") -> Callable[[Mapping[str, Any]], Any]:
    """The block's ``ndcg@<k>`` figure (``k`` as the block says, 5 if it does not)."""
    return lambda m: m.get(f"ndcg@{m.get('k', 5)}{suffix}")


def figures_table(
    title: str,
    blocks: Mapping[str, Mapping[str, Any]],
    columns: Sequence[Column],
    *,
    judge_head: str = "",
    key: str = "",
) -> JudgeTable | None:
    """A row per judge: its cell, then ``columns`` read from its block; none without blocks."""
    if not blocks:
        return None
    rows = [[JudgeCell(judge), *(cell(m) for _, cell in columns)] for judge, m in blocks.items()]
    return JudgeTable(title, (judge_head, *(head for head, _ in columns)), rows, key=key)
