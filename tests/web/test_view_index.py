"""The viewer's index, queries and comparisons on a four-session run whose every figure is
worked out by hand (tests/web/view_helpers.py's table)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest
from view_helpers import tiny_run

from genir_eval.errors import InputError
from genir_eval.runner.web.compare import compare_runs
from genir_eval.runner.web.index import RunIndex, open_index
from genir_eval.runner.web.query import Query, QueryError, Range, parse_query, query_string, select

TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def index(small_run: Path) -> RunIndex:
    return open_index(small_run)


def ids(index: RunIndex, query: Query) -> list[str]:
    return [index.ids[int(i)] for i in select(query, index)]


def parsed(index: RunIndex, text: str) -> Query:
    return parse_query(parse_qs(text, keep_blank_values=True), index)


def test_the_columns_are_the_tables(index: RunIndex) -> None:
    assert index.ids == ["s0", "s1", "s2", "s3"]
    assert index.tasks == ["A", "B", "A", "B"]
    np.testing.assert_array_equal(index.columns["sdcg_urge"], [1.0, 2.0, np.nan, 0.5])
    # s2's one failed judgment (failures.jsonl) and its one missing score
    np.testing.assert_array_equal(index.columns["failed"], [0, 0, 1, 0])
    np.testing.assert_array_equal(index.columns["missing"], [0, 0, 1, 0])
    assert index.failed_by["dna"].tolist() == [0, 0, 1, 0]


def test_disagreement_with_the_annotators_is_the_mean_gap_by_hand(index: RunIndex) -> None:
    # s0: |3-1| and |2-2| -> 1; s1: |1-1| -> 0; s2: |0-3| -> 3; s3: no annotators' label
    np.testing.assert_allclose(
        index.columns["disagree:annotators:dna"], [1.0, 0.0, 3.0, np.nan], atol=TOLERANCE
    )


def test_disagreement_with_the_users_is_the_gap_of_percentile_ranks_by_hand(
    index: RunIndex,
) -> None:
    # users 2, 4, 3, 5 rank 0, 2/3, 1/3, 1; URS 8, 6, 4, 2 rank 1, 2/3, 1/3, 0
    np.testing.assert_allclose(
        index.columns["disagree:users:satisfaction.urs"], [1.0, 0.0, 0.0, 1.0], atol=TOLERANCE
    )
    # sdcg_urge 1, 2, -, 0.5 ranks 1/2, 1, -, 0 among the three present
    np.testing.assert_allclose(
        index.columns["disagree:users:sdcg_urge"], [0.5, 1 / 3, np.nan, 1.0], atol=TOLERANCE
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ["s0", "s1", "s2", "s3"]),
        ("col=sdcg_urge&lo=0.9", ["s0", "s1"]),  # s2's missing value is in no range
        ("col=sdcg_urge&lo=&hi=1", ["s0", "s3"]),
        ("col=sdcg_urge&lo=0.9&col=satisfaction.urs&lo=7", ["s0"]),
        ("sort=sdcg_urge&desc=1", ["s1", "s0", "s3", "s2"]),  # missing last
        ("sort=sdcg_urge", ["s3", "s0", "s1", "s2"]),
        ("sort=session_id&desc=1", ["s3", "s2", "s1", "s0"]),
        # a disagreement filter orders by its size, the largest first
        ("dis=disagree:annotators:dna&dis_min=1", ["s2", "s0"]),
        ("dis=disagree:users:satisfaction.urs&dis_min=0.5", ["s0", "s3"]),
        ("task=A", ["s0", "s2"]),
        ("judge=dna&failed=1", ["s2"]),
        ("missing=1", ["s2"]),
        ("q=GARDEN", ["s0", "s2"]),
        ("q=garden&sort=satisfaction.urs", ["s2", "s0"]),
        ("q=%3Cscript%3E", ["s2"]),
    ],
)
def test_filters_and_sorts(index: RunIndex, text: str, expected: list[str]) -> None:
    assert ids(index, parsed(index, text)) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("col=nope&lo=1", "col: no 'nope'"),
        ("lo=1&col=", "col: name the column"),
        ("col=sdcg_urge&lo=x", "lo: a number"),
        ("col=sdcg_urge&lo=nan", "lo: a finite number"),
        ("page=0", "page: a whole number"),
        ("size=501", "size: a whole number from 1 to 500"),
        ("desc=2", "desc: 1 or 0"),
        ("dis=disagree:users:nope", "dis: no"),
        ("sort=nope", "sort: no 'nope'"),
        ("task=Z", "task: no 'Z'"),
        ("q=" + "x" * 501, "q: at most 500"),
    ],
)
def test_a_wrong_parameter_is_named(index: RunIndex, text: str, named: str) -> None:
    with pytest.raises(QueryError, match=named.replace("(", r"\(")):
        parsed(index, text)


def test_a_view_is_one_link_and_reads_back(index: RunIndex) -> None:
    query = Query(
        text="garden",
        task="A",
        failed=True,
        disagree="disagree:annotators:dna",
        disagree_min=0.5,
        ranges=(Range("sdcg_urge", 0.25, None),),
        sort="satisfaction.urs",
        desc=True,
        page=2,
        size=10,
    )
    link = query_string(query)
    assert link == (
        "q=garden&task=A&failed=1&dis=disagree%3Aannotators%3Adna&dis_min=0.5&col=sdcg_urge"
        "&lo=0.25&hi=&sort=satisfaction.urs&desc=1&size=10&page=2"
    )
    assert parsed(index, link) == query
    assert query_string(Query()) == ""


def test_two_runs_align_on_the_sessions_both_have(small_run: Path, tmp_path: Path) -> None:
    other = tiny_run(
        tmp_path / "b", name="tiny-b", shift={"s0": 0.5, "s1": -1.5}, without=frozenset({"s3"})
    )
    cmp = compare_runs([open_index(small_run), open_index(other)])
    assert cmp.common.tolist() == [True, True, True, False]
    # changes of sdcg_urge: s0 +0.5, s1 -1.5, s2 missing in both: largest first, unknown last
    assert [cmp.base.ids[int(i)] for i in cmp.rows(Query())] == ["s1", "s0", "s2"]
    row = cmp.row_json(1, "sdcg_urge")
    assert row["values"] == [2.0, 0.5] and row["deltas"] == [-1.5]
    assert row["changed_scores"] == 1  # URS is the same in both
    # the same filters apply, on the base run
    assert [cmp.base.ids[int(i)] for i in cmp.rows(Query(task="A"))] == ["s0", "s2"]


def test_runs_with_no_session_in_common_are_refused(small_run: Path, tmp_path: Path) -> None:
    other = tiny_run(tmp_path / "c", prefix="x-")
    with pytest.raises(InputError, match="share no session"):
        compare_runs([open_index(small_run), open_index(other)])


def test_percentile_ranks_share_ties_as_scipy_does() -> None:
    from scipy.stats import rankdata

    from genir_eval.runner.web.index import _percentile_ranks

    values = np.array([3.0, 1.0, np.nan, 3.0, 2.0, 1.0, 3.0])
    present = ~np.isnan(values)
    expected = np.full(values.shape, np.nan)
    expected[present] = (rankdata(values[present]) - 1) / (present.sum() - 1)
    # by hand: 1, 1 share places 1-2 (1.5), 2 is 3rd, the three 3s share 4-6 (5); over 5 gaps
    np.testing.assert_allclose(expected, [0.8, 0.1, np.nan, 0.8, 0.4, 0.1, 0.8], atol=TOLERANCE)
    np.testing.assert_allclose(_percentile_ranks(values), expected, atol=TOLERANCE)


def test_marked_segments_beside_the_annotators_by_hand() -> None:
    from genir_eval.runner.web.session import _spans

    evidence = {
        "segments": [[0, 5], [5, 9], [9, 14], [14, 20]],
        "spans": {"gold:annotators": [0, 1], "spans": [1, 2], "gold:user": []},
    }
    # the span judge shares segment 1 of the three either marked: 1/3; the user marked none
    assert _spans(evidence) == [
        {"by": "gold:annotators", "marked": 2, "segments": 4, "jaccard_annotators": 1.0},
        {"by": "spans", "marked": 2, "segments": 4, "jaccard_annotators": 1 / 3},
        {"by": "gold:user", "marked": 0, "segments": 4, "jaccard_annotators": 0.0},
    ]
