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

from collections.abc import Sequence
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.judges.base import Label
from genir_eval.judges.kinds import GoldContext, judge_kind
from genir_eval.meta.gold import gold_blocks
from genir_eval.meta.gold.citations import citation_support_block, citation_support_scores
from genir_eval.meta.gold.links import (
    LinkPairs,
    expected_value,
    link_label_map,
    link_pairs,
    link_pairs_block,
    link_usefulness_scores,
    sdcg_from_labels,
)
from genir_eval.meta.gold.session import (
    FEEDBACK_TARGET,
    HARDEST_FRACTION,
    JUDGE_SATISFACTION_SCALE,
    SATISFACTION_SCALE,
    degeneracy_block,
    gold_sdcg,
    on_gold_scale,
    ordering_block,
    ordering_scores,
    satisfaction_block,
    satisfaction_scores,
    session_means_block,
    thumbs_block,
)
from genir_eval.meta.gold.spans import span_block, spans_scores
from genir_eval.records import Session

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
    for block in gold_blocks(judge_kind(kind), context):
        if block.name == name:
            block.add(sessions, labels, None)
            found = block.result()
            return dict(found) if found is not None else None
    return None


def degenerate_scores(
    labels: Sequence[Label], kind: str, instructions: Sequence[str] = ()
) -> dict[str, Any] | None:
    """Whether the judge's graded labels are (nearly) constant or its reasons copy its
    instructions (:func:`genir_eval.meta.degenerate.degeneracy`), over its link labels for
    a link judge and its turn and session labels for a satisfaction judge (``None`` for
    other kinds)."""
    context = GoldContext(instructions=tuple(instructions))
    return _one_block(kind, "degenerate", context, (), labels)


class GoldComparison:
    """One judge's labels against the gold ones, gathered window by window of sessions.

    The blocks are the judge kind's comparison's (:func:`genir_eval.meta.gold.gold_blocks`,
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
        self.blocks = gold_blocks(judge_kind(kind), context)

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
