"""TREC qrels and run files from the RUBRIC judge's passage labels (for trec_eval / ir_measures)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

from genir_eval.errors import ConfigError
from genir_eval.judges.base import Label
from genir_eval.judges.rubric.grading import GRADE_MAX
from genir_eval.judges.rubric.kind import KIND as RUBRIC
from genir_eval.paths import output_file

__all__ = ["trec_query_id", "write_qrels", "write_run"]


def trec_query_id(session_id: str, turn: int | None) -> str:
    """``<session id>:<turn>``, whitespace and ``%`` percent-encoded (TREC files split on
    whitespace). Encoding, unlike replacing whitespace with ``_``, keeps two sessions
    apart: ``a b`` is ``a%20b`` and ``a_b`` stays ``a_b``, so their labels never merge."""
    sid = re.sub(r"[%\s]", _percent, session_id) or "_"
    return f"{sid}:{'all' if turn is None else turn}"


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8"))


def _passage_labels(labels: Iterable[Label]) -> list[tuple[Label, float]]:
    """The graded passages' labels with their grade (missing ones left out)."""
    return [
        (lb, float(lb.value))
        for lb in labels
        if lb.value is not None
        and (lb.key.item.startswith(("stmt:", "link:")) or lb.key.item == "response")
    ]


def _opened(target: str | Path | IO[str]) -> contextlib.AbstractContextManager[IO[str]]:
    """A file path written as a new regular file (genir_eval.paths.output_file), or the
    caller's own stream, left open."""
    if isinstance(target, (str, Path)):
        return output_file(target, "the TREC file")
    return contextlib.nullcontext(target)


def write_qrels(
    labels: Iterable[Label], target: str | Path | IO[str], *, binary: bool = False
) -> int:
    """TREC qrels, one ``query_id 0 doc_id label`` line per graded passage (missing labels
    are left out: unjudged, not irrelevant). ``binary`` writes ``extra["relevant"]`` as
    0/1 instead of the grade. Returns the number of lines."""
    rows = []
    for lb, grade in _passage_labels(labels):
        value = int(bool(lb.extra.get("relevant"))) if binary else int(grade)
        rows.append((trec_query_id(lb.key.session_id, lb.key.turn), lb.key.item, value))
    with _opened(target) as stream:
        for qid, doc, value in sorted(rows):
            stream.write(f"{qid} 0 {doc} {value}\n")
    return len(rows)


def _score(label: Label, grade: float) -> float:
    """The passage's grade, ties broken by its mean grade over the questions."""
    grades = label.extra.get("grades")
    mean = (sum(grades.values()) / len(grades)) if isinstance(grades, Mapping) and grades else 0.0
    return grade + mean / (GRADE_MAX + 1)


def write_run(
    labels: Iterable[Label], target: str | Path | IO[str], *, tag: str = RUBRIC.name
) -> int:
    """A TREC run, ``query_id Q0 doc_id rank score tag``: each turn's passages by grade
    (mean grade over the questions breaks ties, then the passage order). Returns the number
    of lines."""
    if not re.fullmatch(r"\S+", tag):
        raise ConfigError("a run tag cannot contain whitespace")
    by_query: dict[str, list[tuple[str, float]]] = {}
    for lb, grade in _passage_labels(labels):
        qid = trec_query_id(lb.key.session_id, lb.key.turn)
        by_query.setdefault(qid, []).append((lb.key.item, _score(lb, grade)))
    n = 0
    with _opened(target) as stream:
        for qid in sorted(by_query):
            ranked = sorted(by_query[qid], key=lambda pair: -pair[1])
            for rank, (doc, score) in enumerate(ranked, start=1):
                stream.write(f"{qid} Q0 {doc} {rank} {score:.4f} {tag}\n")
                n += 1
    return n
