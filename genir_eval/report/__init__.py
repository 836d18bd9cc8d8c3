"""genir-eval report stage: the run directory (tables, meta.json, run.json) and report.html."""

from genir_eval.report.html import (
    SECTIONS,
    TURN_VIEWS,
    ReportLimits,
    headline_score,
    render_report,
    write_report,
)
from genir_eval.report.scores import ScoreSummary, score_summaries
from genir_eval.rundir.folder import (
    OUTPUT_VERSION,
    CitationRow,
    LinkRow,
    Run,
    SessionRow,
    TurnRow,
    load_run,
    write_run,
)

__all__ = [
    "OUTPUT_VERSION",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "CitationRow",
    "Run",
    "write_run",
    "load_run",
    "render_report",
    "write_report",
    "headline_score",
    "ReportLimits",
    "SECTIONS",
    "TURN_VIEWS",
    "ScoreSummary",
    "score_summaries",
]
