"""genir-eval meta stage: how well scores track what users and annotators said.

:mod:`~genir_eval.meta.stats` holds the generic statistics (correlations with bootstrap
intervals, agreement, overlap; calibration, degenerate labellings, prediction-powered means,
the session bootstrap and Wilson's interval beside it), which know no judge, label or session;
:mod:`~genir_eval.meta.gold` each judge kind's comparison with gold, :mod:`~genir_eval.meta.evaluate` what runs those
comparisons; :mod:`~genir_eval.meta.urge_table` URGE's link-based correlation table.
"""

from genir_eval.meta.stats import (
    PRF,
    binarize,
    cohen_kappa,
    confusion_matrix,
    correlations,
    kendall_tau,
    mae,
    pairwise_auc,
    precision_recall_f1,
    rbo,
)
from genir_eval.meta.urge_table import (
    QUERY_LEVEL,
    QUERY_TO_SESSION,
    SESSION_LEVEL,
    SESSION_MEASURES,
    session_metrics,
    urge_table,
)

__all__ = [
    "PRF",
    "QUERY_LEVEL",
    "QUERY_TO_SESSION",
    "SESSION_LEVEL",
    "SESSION_MEASURES",
    "binarize",
    "cohen_kappa",
    "confusion_matrix",
    "correlations",
    "kendall_tau",
    "mae",
    "pairwise_auc",
    "precision_recall_f1",
    "rbo",
    "session_metrics",
    "urge_table",
]
