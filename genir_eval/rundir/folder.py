"""The run directory: what a run writes, and reading it back.

A run directory holds three tables, each as JSONL and as CSV, plus two JSON documents:

``links.jsonl`` / ``links.csv``
    one row per link of a turn: session, turn, link id, url, each link judge's label (and
    why it is missing), the gold usefulness where known;
``turns.jsonl`` / ``turns.csv``
    one row per turn: query, response, every judge and metric score, gold satisfaction;
``sessions.jsonl`` / ``sessions.csv``
    one row per session likewise;
``citations.jsonl`` / ``citations.csv``
    present when a citation judge ran: one row per (statement, cited link) pair and judge,
    with the support verdict, the evidence quoted from the source, the basis judged on and
    why a verdict is missing;
``meta.json``
    the meta-evaluation (scores against gold), present when gold labels exist;
``evidence.jsonl``
    one row per turn: statements and citations, text units, useful spans (gold and
    judged), every judgment with its reason and raw reply (what the report shows per turn);
``failures.jsonl``
    one row per missing judgment (judge, session, turn, item, repeat, reason), written as
    the run goes, so a run with a million failures neither holds them in memory nor lists
    them in ``run.json``;
``repeats.jsonl``
    present after ``run --repeats K``: one row per (sampled session, repeat) with the
    scores the repeated judges feed, for the session and each of its turns, in that repeat
    (repeat 0 is the run's own judgment), and the judgments missing from it;
``run.json``
    the scenario, versions, provider and model per judge, usage, cost, duration, cache
    hits, the status, and the failures: their total and the first
    :data:`MAX_LISTED_FAILURES` (all of them in a run folder without ``failures.jsonl``).

Every JSONL row, CSV row and JSON document carries ``version`` (:data:`OUTPUT_VERSION`).
JSONL rows nest ``labels`` and ``scores``; CSV flattens them into ``label:<judge>``,
``missing:<judge>`` and ``score:<name>`` columns. :func:`load_run` reads the JSONL.

The parts, one question each: the file names and table rows (:mod:`.rows`), a run read back
(:mod:`.run`), writing and reading a file safely (:mod:`.files`), the writer (:mod:`.writer`),
the reader (:mod:`.reader`) and the checks of a folder before it is read (:mod:`.verify`).
Every name stays importable from here.
"""

from __future__ import annotations

from genir_eval.rundir.files import (  # noqa: F401 - the former module's names
    _FORMULA_STARTS,
    _check_version,
    _flatten,
    _iter_jsonl,
    _read_json,
    _replace,
    _temporary,
    _unreadable,
    csv_cell,
    file_digest,
    write_json,
    write_text_atomic,
)
from genir_eval.rundir.reader import (  # noqa: F401 - the former module's names
    load_run,
)
from genir_eval.rundir.rows import (  # noqa: F401 - the former module's names
    CITATIONS_FILE,
    EVIDENCE_FILE,
    FAILURES_FILE,
    LINKS_FILE,
    MAX_LISTED_FAILURES,
    META_FILE,
    OUTPUT_VERSION,
    REPEATS_FILE,
    REPORT_FILE,
    RUN_FILE,
    RUN_FILES,
    SESSIONS_FILE,
    TABLES,
    TURNS_FILE,
    CitationRow,
    Level,
    LinkRow,
    SessionRow,
    TableName,
    TurnRow,
    _citation_row_from_dict,
    _clean_number,
    _link_row_from_dict,
    _number_or_none,
    _session_row_from_dict,
    _turn_row_from_dict,
    citation_row_to_dict,
    link_row_to_dict,
    session_row_to_dict,
    turn_row_to_dict,
)
from genir_eval.rundir.run import (  # noqa: F401 - the former module's names
    Run,
)
from genir_eval.rundir.verify import (  # noqa: F401 - the former module's names
    _check_files,
    _check_status,
    _count_failures,
    _label_counts,
    check_writable_folder,
)
from genir_eval.rundir.writer import (  # noqa: F401 - the former module's names
    RunWriter,
    _csv_value,
    _Part,
    _Table,
    write_run,
)
from genir_eval.stale import remove_stale_parts

__all__ = [
    "OUTPUT_VERSION",
    "FAILURES_FILE",
    "REPEATS_FILE",
    "MAX_LISTED_FAILURES",
    "RUN_FILES",
    "LinkRow",
    "TurnRow",
    "SessionRow",
    "CitationRow",
    "Run",
    "Level",
    "write_run",
    "RunWriter",
    "TABLES",
    "write_json",
    "write_text_atomic",
    "file_digest",
    "csv_cell",
    "load_run",
    "check_writable_folder",
    "remove_stale_parts",
    "link_row_to_dict",
    "turn_row_to_dict",
    "session_row_to_dict",
    "citation_row_to_dict",
]
