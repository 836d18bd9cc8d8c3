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


def _failed_run(tmp_path, name="failed"):  # type: ignore[no-untyped-def]
    """A small run folder recorded as failed the way a run records it: judge j has 3 of 10
    labels missing, over the 5% allowed (tests/runner/test_gate_verdict.py has a real one)."""
    from genir_eval.rundir.folder import SessionRow, TurnRow, write_run
    from genir_eval.rundir.status import run_status

    scores = {"s1": 0.2, "s2": 0.4}
    failures = [{"judge": "j", "session_id": "s1", "turn": 1, "reason": "timeout"}] * 3
    counts = {"j": {"labels": 10, "missing": 3}}
    info = {
        "version": 1,
        "judges": [{"id": "j", **counts["j"]}],
        "failures": failures,
        "failures_total": 3,
        "status": run_status(counts, failures, [], max_missing=0.05, allow_permanent=False),
    }
    return write_run(
        tmp_path / name,
        links=[],
        turns=[TurnRow(s, 1, scores={"sdcg_urge": v}) for s, v in scores.items()],
        sessions=[SessionRow(s, n_turns=1, scores={"sdcg_urge": v}) for s, v in scores.items()],
        meta=None,
        info=info,
    )


def test_assert_run_refuses_a_failed_run_whatever_its_scores(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = _failed_run(tmp_path)
    with pytest.raises(AssertionError, match=r"failed \(judge j: 3 of 10 labels missing"):
        assert_run(run, metric="sdcg_urge", at_least=0.0)


def test_compare_refuses_a_small_failed_run(tmp_path, make_scores_run, capsys) -> None:  # type: ignore[no-untyped-def]
    from genir_eval.cli import main

    good = make_scores_run("good", {"s1": 0.2, "s2": 0.4})
    failed = _failed_run(tmp_path)
    for pair in ((good, failed), (failed, good)):
        capsys.readouterr()
        assert main(["compare", str(pair[0]), str(pair[1])]) == 2
        err = capsys.readouterr().err
        assert "a failed run (exit code 3 when it ran): judge j: 3 of 10" in err, err


def test_assert_run_bounds_are_inclusive_and_levels_differ(make_scores_run, make_turn_run) -> None:  # type: ignore[no-untyped-def]
    from genir_eval.rundir.folder import load_run

    run = make_scores_run("a", {"s1": 0.25, "s2": 0.75})  # mean 0.5 exactly
    assert assert_run(run, metric="sdcg_urge", at_least=0.5, at_most=0.5) == 0.5
    # a Run already read is taken as it is
    assert assert_run(load_run(run), metric="sdcg_urge", at_least=0.5) == 0.5
    # sessions scored 0.75 and 0.25 (mean 0.5), their turns 0.125, 0.25, 0.375, 0.25 (mean
    # 0.25): each level reads its own rows, both bounds inclusive
    levels = make_turn_run("levels", {"s1": (0.75, 0.125, 0.25), "s2": (0.25, 0.375, 0.25)})
    assert assert_run(levels, metric="sdcg_urge", at_least=0.5, at_most=0.5) == 0.5
    assert assert_run(levels, metric="sdcg_urge", at_least=0.25, at_most=0.25, level="turn") == 0.25
    with pytest.raises(
        AssertionError, match=r"\(turn level, 4 of 4 turns scored\) is 0.25, expected at least 0.5"
    ):
        assert_run(levels, metric="sdcg_urge", at_least=0.5, level="turn")
    with pytest.raises(
        AssertionError,
        match=r"\(session level, 2 of 2 sessions scored\) is 0.5, expected at most 0.25",
    ):
        assert_run(levels, metric="sdcg_urge", at_most=0.25)


def test_assert_run_says_when_no_row_has_a_score(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    run = make_scores_run("a", {"s1": None, "s2": None})
    with pytest.raises(
        AssertionError,
        match=r"mean sdcg_urge \(session level\) is undefined: no session has a "
        r"score \(2 rows\)",
    ):
        assert_run(run, metric="sdcg_urge", at_least=0.0)


def test_assert_run_lists_every_reason_a_run_failed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from genir_eval.rundir.folder import SessionRow, write_run
    from genir_eval.rundir.status import run_status

    counts = {"j": {"labels": 10, "missing": 3}, "k": {"labels": 4, "missing": 2}}
    failures = [{"judge": "j"}] * 3 + [{"judge": "k"}] * 2
    info = {
        "version": 1,
        "judges": [{"id": name, **c} for name, c in counts.items()],
        "failures": [{**f, "session_id": "s1", "reason": "x"} for f in failures],
        "failures_total": 5,
        "status": run_status(counts, failures, [], max_missing=0.05, allow_permanent=False),
    }
    run = write_run(
        tmp_path / "two",
        links=[],
        turns=[],
        sessions=[SessionRow("s1", n_turns=1, scores={"sdcg_urge": 0.5})],
        meta=None,
        info=info,
    )
    # every judge over the limit is named, in one reason (both counts, not the first only)
    with pytest.raises(AssertionError, match=r"labels missing: j 3 of 10, k 2 of 4\)"):
        assert_run(run, metric="sdcg_urge", at_least=0.0)
