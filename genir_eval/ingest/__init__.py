"""genir-eval ingest stage: logs in, :class:`~genir_eval.records.Session` records out.

Reads the URGE dataset's CSV (Perplexity response HTML with citations and gold labels), the
canonical JSONL format, a Markdown format for logs of your own RAG system, CrowdRAG's folder
of answers people compared, and the canonical preferences file.
"""

from genir_eval.ingest.crowdrag import CROWDRAG_CRITERIA, convert_crowdrag, read_crowdrag
from genir_eval.ingest.html import parse_response_html
from genir_eval.ingest.jsonl import iter_jsonl, read_jsonl, validate_session_dict, write_jsonl
from genir_eval.ingest.language import detect_language
from genir_eval.ingest.loader import FORMATS, Format, detect_format, iter_sessions, load_sessions
from genir_eval.ingest.markdown import iter_markdown, load_markdown, parse_markdown
from genir_eval.ingest.preferences import Preference, read_preferences, write_preferences
from genir_eval.ingest.response import ParsedResponse
from genir_eval.ingest.result import LoadResult
from genir_eval.ingest.segments import split_segments
from genir_eval.ingest.sources import attach_source_texts, read_source_texts
from genir_eval.ingest.stream import SessionStream
from genir_eval.ingest.urge import URGE_COLUMNS, iter_urge, load_urge
from genir_eval.ingest.validate import validate_session

__all__ = [
    "iter_sessions",
    "SessionStream",
    "load_sessions",
    "LoadResult",
    "validate_session",
    "iter_urge",
    "iter_jsonl",
    "iter_markdown",
    "FORMATS",
    "Format",
    "detect_format",
    "write_jsonl",
    "read_jsonl",
    "validate_session_dict",
    "load_urge",
    "URGE_COLUMNS",
    "load_markdown",
    "parse_markdown",
    "parse_response_html",
    "ParsedResponse",
    "split_segments",
    "detect_language",
    "read_source_texts",
    "attach_source_texts",
    "read_crowdrag",
    "convert_crowdrag",
    "CROWDRAG_CRITERIA",
    "Preference",
    "read_preferences",
    "write_preferences",
]
