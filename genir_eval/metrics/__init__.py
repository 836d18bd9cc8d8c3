"""genir-eval metrics stage: statement usefulness -> query and session scores; citation
support -> citation precision, recall and the unsupported-claim rate; nugget assignments ->
nugget recall (TREC 2024 RAG).

Measures are value objects (``SDCG_URGE(br=1.35, bq=1.05)`` prints as
``sDCG-URGE(br=1.35,bq=1.05)`` and :func:`parse_measure` reads it back); ``MEASURES`` holds
them by short name.
"""

from genir_eval.metrics.aggregate import AGGREGATIONS, aggregate, zscore_combine
from genir_eval.metrics.citations import (
    CITATION_MEASURES,
    DEFAULT_CITATION_MEASURES,
    CitationMeasure,
    CitationPrecision,
    CitationRecall,
    CitedStatement,
    UnsupportedClaims,
    cited_statements,
    gold_cited_statements,
    needs_support,
)
from genir_eval.metrics.measures import (
    MEASURES,
    RSDCG_URGE,
    RSRBP_URGE,
    SDCG,
    SDCG_URGE,
    SRBP,
    SRBP_URGE,
    WEIGHTINGS,
    Decreasing,
    Equal,
    Increasing,
    Measure,
    MiddleHigh,
    MiddleLow,
    QueryMeasure,
    SessionMeasure,
    positional_weights,
)
from genir_eval.metrics.nuggets import (
    DEFAULT_NUGGET_MEASURES,
    NUGGET_MEASURES,
    AssignedNugget,
    NuggetMeasure,
    NuggetRecall,
    VitalNuggetRecall,
    WeightedNuggetRecall,
)
from genir_eval.metrics.parse import parse_measure
from genir_eval.metrics.usefulness import gold_statement_usefulness, statement_usefulness

__all__ = [
    "DEFAULT_NUGGET_MEASURES",
    "NUGGET_MEASURES",
    "AssignedNugget",
    "NuggetMeasure",
    "NuggetRecall",
    "VitalNuggetRecall",
    "WeightedNuggetRecall",
    "AGGREGATIONS",
    "CITATION_MEASURES",
    "DEFAULT_CITATION_MEASURES",
    "CitationMeasure",
    "CitationPrecision",
    "CitationRecall",
    "CitedStatement",
    "UnsupportedClaims",
    "cited_statements",
    "gold_cited_statements",
    "needs_support",
    "MEASURES",
    "WEIGHTINGS",
    "Measure",
    "QueryMeasure",
    "SessionMeasure",
    "Decreasing",
    "Increasing",
    "Equal",
    "MiddleHigh",
    "MiddleLow",
    "SDCG_URGE",
    "SRBP_URGE",
    "RSDCG_URGE",
    "RSRBP_URGE",
    "SDCG",
    "SRBP",
    "aggregate",
    "gold_statement_usefulness",
    "parse_measure",
    "positional_weights",
    "statement_usefulness",
    "zscore_combine",
]
