from __future__ import annotations

import pytest

from genir_eval.runner.testing import assert_run


def test_assert_run_bounds(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    run = make_scores_run("a", {"s1": 0.2, "s2": 0.4, "s3": None})
    # mean of the scored sessions 0.2 and 0.4 (by hand)
    assert assert_run(run, metric="sdcg_urge", at_least=0.3, at_most=0.3 + 1e-9) == pytest.approx(
        0.3
    )
    with pytest.raises(
        AssertionError,
        match=r"mean sdcg_urge \(session level, 2 of 3 sessions scored\) is 0.3, expected at least 0.5",
    ):
        assert_run(run, metric="sdcg_urge", at_least=0.5)
    with pytest.raises(AssertionError, match="expected at most 0.1"):
        assert_run(run, metric="sdcg_urge", at_most=0.1)
    with pytest.raises(AssertionError, match="no score 'ndcg'"):
        assert_run(run, metric="ndcg", at_least=0)
    with pytest.raises(ValueError, match="at_least and/or at_most"):
        assert_run(run, metric="sdcg_urge")
