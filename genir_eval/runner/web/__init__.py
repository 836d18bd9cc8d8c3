"""The viewer (``genir-eval view``): run folders indexed in memory, their session tables,
sessions and comparisons as pages and a JSON API, on one server with the labelling page,
and a static copy of a view (``--bundle``)."""

from __future__ import annotations

from genir_eval.runner.web.app import LabelOptions, make_viewer_app
from genir_eval.runner.web.bundle import write_bundle
from genir_eval.runner.web.compare import Comparison, compare_runs
from genir_eval.runner.web.index import RunIndex, open_index
from genir_eval.runner.web.query import Query, QueryError, parse_query, query_string

__all__ = [
    "RunIndex",
    "open_index",
    "Query",
    "QueryError",
    "parse_query",
    "query_string",
    "Comparison",
    "compare_runs",
    "make_viewer_app",
    "LabelOptions",
    "write_bundle",
]
