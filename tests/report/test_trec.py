"""TREC qrels and run export of the RUBRIC judge's passage labels."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "judges"))
from judge_helpers import bread_session, judge_session  # noqa: E402

from genir_eval.errors import ConfigError
from genir_eval.judges.base import Label
from genir_eval.llm.providers.base import JudgmentKey
from genir_eval.report.trec import write_qrels, write_run

_QRELS_LINE = re.compile(r"^\S+ 0 \S+ -?\d+$")
_RUN_LINE = re.compile(r"^\S+ Q0 \S+ [1-9]\d* -?\d+(\.\d+)? \S+$")


def _write(labels: list[Label]) -> tuple[str, str]:
    qrels, run = io.StringIO(), io.StringIO()
    write_qrels(labels, qrels)
    write_run(labels, run, tag="rubric-offline")
    return qrels.getvalue(), run.getvalue()


def test_qrels_and_run_are_strict_trec_format() -> None:
    labels = judge_session("rubric", bread_session("session one"))
    qrels, run = _write(labels)
    assert all(_QRELS_LINE.match(line) for line in qrels.splitlines())
    assert all(_RUN_LINE.match(line) for line in run.splitlines())
    assert len(qrels.splitlines()) == len(run.splitlines()) == 4
    assert qrels.splitlines()[0].startswith("session%20one:1 0 ")
    scores = [float(line.split()[4]) for line in run.splitlines()]
    assert scores == sorted(scores, reverse=True)
    with pytest.raises(ConfigError):
        write_run(labels, io.StringIO(), tag="two words")


def test_missing_labels_are_left_out_of_qrels() -> None:
    key = JudgmentKey("s", 1, "link:1", "rubric", "v")
    missing = Label(key, None, missing_reason="x")
    assert write_qrels([missing], io.StringIO()) == 0


def test_qrels_and_run_are_readable_by_ir_measures(tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    labels = judge_session("rubric", bread_session())
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    write_qrels(labels, qrels_path)
    write_run(labels, run_path)
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    assert {q.doc_id for q in qrels} == {"stmt:1", "stmt:2", "link:1", "link:2"}
    assert len(run) == 4
    # The run ranks by the same grades the qrels hold, so it is an ideal ranking.
    result = ir_measures.calc_aggregate([ir_measures.nDCG @ 4], qrels, run)
    assert result[ir_measures.nDCG @ 4] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(
    ("first", "second"),
    [("a b", "a_b"), ("a\tb", "a b"), ("a%20b", "a b"), ("a\u3000b", "a b"), ("x", "x ")],
)
def test_two_session_ids_never_share_a_query_id(first, second):
    """Whitespace used to become ``_``: sessions ``a b`` and ``a_b`` shared one query id
    and their passages' labels merged in the qrels."""
    from genir_eval.report.trec import trec_query_id

    assert trec_query_id(first, 1) != trec_query_id(second, 1)
    for sid in (first, second):
        assert not any(ch.isspace() for ch in trec_query_id(sid, 1))


def test_a_plain_session_id_is_kept_as_it_is():
    from genir_eval.report.trec import trec_query_id

    assert trec_query_id("urge-3", 2) == "urge-3:2"
    assert trec_query_id("a b", None) == "a%20b:all"
