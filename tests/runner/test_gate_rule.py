"""The gate's rule across scores (issue 48): non-inferiority by --margin, the family-wise
error held by --correction (Holm by default), McNemar's mid-p test for pass/fail scores.

Expected verdicts are worked out by hand from the rule on comparisons whose interval and
p-value are set here (``dataclasses.replace``), so they do not come from the code under
test; each case is chosen so that a known mutant decides it the other way (Holm replaced by
Bonferroni, the margin's sign flipped, mid-p replaced by the exact p-value).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.rundir.folder import SessionRow, TurnRow, write_run
from genir_eval.runner.compare import Comparison, compare_scores, gate, gate_all

KEYS = [f"s{i:02d}" for i in range(20)]


def _comparison(metric: str, *, drop: float, ci: tuple[float, float], p: float) -> Comparison:
    """20 sessions, B ``drop`` lower than A in each, with the interval and p-value given."""
    c = compare_scores({k: 0.5 for k in KEYS}, {k: 0.5 - drop for k in KEYS}, metric=metric)
    return replace(c, ci95=ci, p_value=p)


# -- non-inferiority ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "margin", "passed"),
    [
        ((-0.04, 0.02), 0.05, True),  # worse end -0.04 within 0.05
        ((-0.04, 0.02), 0.03, False),  # past 0.03
        ((-0.05, 0.02), 0.05, True),  # at the margin: not past it
        ((0.01, 0.03), 0.0, True),  # wholly better: passes a zero margin
        ((-0.001, 0.03), 0.0, False),
    ],
)
def test_non_inferiority_by_hand(ci: tuple[float, float], margin: float, passed: bool) -> None:
    c = _comparison("m", drop=0.01, ci=ci, p=0.9)
    result = gate(c, margin=margin, alpha=0.05)
    assert result.passed is passed
    if not passed:
        assert result.reasons == (
            f"m (session level): mean dropped by up to {-ci[0]:.4f} within the 95% interval of "
            f"the change, more than --margin {margin:g} (non-inferiority not shown)",
        )


def test_non_inferiority_of_a_lower_is_better_score() -> None:
    # unsupported_claims: a rise is worse; the worse end is the interval's upper end
    c = _comparison("unsupported_claims", drop=-0.01, ci=(-0.02, 0.04), p=0.9)
    assert gate(c, margin=0.05).passed
    result = gate(c, margin=0.03)
    assert not result.passed and "rose (lower is better) by up to 0.0400" in result.reasons[0]
    # an interval wholly lower (better) passes any margin
    assert gate(replace(c, ci95=(-0.08, -0.01)), margin=0.0).passed


def test_a_margin_replaces_the_significance_test() -> None:
    # significantly worse (p = 0.001) but by at most 0.02, within the margin of 0.05
    c = _comparison("m", drop=0.01, ci=(-0.02, -0.005), p=0.001)
    assert not gate(c, alpha=0.05).passed
    assert gate(c, alpha=0.05, margin=0.05).passed


# -- the error across scores -------------------------------------------------------------------


def _family(ps: list[float]) -> list[Comparison]:
    return [
        _comparison(f"m{i}", drop=0.01, ci=(-0.02, 0.0), p=p) for i, p in enumerate(ps, start=1)
    ]


def test_holm_across_scores_names_the_scores_that_failed() -> None:
    # p 0.012, 0.02, 0.3: Holm-adjusted 0.036, 0.04, 0.3 (by hand: 3p, 2p, running max):
    # m1 and m2 fail at 0.05. Bonferroni (0.036, 0.06, 0.9) would keep m2.
    results = gate_all(_family([0.012, 0.02, 0.3]), alpha=0.05)
    assert [r.passed for r in results] == [False, False, True]
    assert results[1].reasons == (
        "m2 (session level): mean dropped significantly (randomisation p = 0.02, "
        "Holm-adjusted p = 0.04 < alpha 0.05)",
    )


def test_holm_holds_what_no_correction_would_fail() -> None:
    # p 0.03, 0.04, 0.5: each below 0.05 alone; Holm-adjusted 0.09, 0.09, 0.5 (by hand)
    family = _family([0.03, 0.04, 0.5])
    assert all(r.passed for r in gate_all(family, alpha=0.05))
    assert all(r.passed for r in gate_all(family, alpha=0.05, correction="holm"))
    assert [r.passed for r in gate_all(family, alpha=0.05, correction="none")] == [
        False,
        False,
        True,
    ]
    # Benjamini-Hochberg: 0.03 * 3 / 1, 0.04 * 3 / 2 = 0.06, 0.5: running min 0.06, 0.06
    bh = gate_all(family, alpha=0.05, correction="bh")
    assert all(r.passed for r in bh)
    assert [r.passed for r in gate_all(family, alpha=0.07, correction="bh")] == [
        False,
        False,
        True,
    ]


def test_a_score_with_a_margin_leaves_the_family() -> None:
    # m3 has a margin: only m1 and m2 are tested, Holm over two: 0.03 * 2 = 0.06, 0.06
    family = _family([0.03, 0.04, 0.001])
    results = gate_all(family, alpha=0.05, margins={"m3": 0.05})
    assert all(r.passed for r in results)


# -- McNemar for pass/fail scores --------------------------------------------------------------


def test_pass_fail_scores_use_mcnemars_mid_p() -> None:
    # 30 sessions: 1 passed in A only, 9 in B only... here B is worse: 9 passed in A only,
    # 1 in B only, 20 agree. Mid-p 12/1024 = 0.01172 (by hand); exact 22/1024 = 0.02148
    a = {f"s{i}": 1.0 for i in range(30)}
    b = dict(a)
    for i in range(9):
        b[f"s{i}"] = 0.0
    a["s29"], b["s29"] = 0.0, 1.0
    c = compare_scores(a, b, metric="thumbs")
    assert c.test == "McNemar mid-p"
    assert c.p_value == pytest.approx(12 / 1024, abs=1e-12)
    # at alpha 0.015 the mid-p test calls it (0.0117), the exact one would not (0.0215)
    result = gate(c, alpha=0.015)
    assert not result.passed
    assert "McNemar mid-p p = 0.01172" in result.reasons[0]
    # a score that is not 0 or 1 everywhere keeps the randomisation test
    graded = compare_scores({**a, "s29": 0.5}, b, metric="thumbs")
    assert graded.test == "randomisation"


# -- the command line --------------------------------------------------------------------------


def _run(folder: Path, scores: dict[str, dict[str, float]]) -> Path:
    sessions = [SessionRow(s, n_turns=1, scores=v) for s, v in scores.items()]
    turns = [TurnRow(s, 1, scores=v) for s, v in scores.items()]
    info = {"version": 1, "scenario": {"name": folder.name, "meta": {"headline": "x"}}}
    return write_run(folder, links=[], turns=turns, sessions=sessions, meta=None, info=info)


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    # 16 sessions; x: B 0.05 lower in every session (exact p = 2 / 2**16); y: unchanged
    a = {f"s{i:02d}": {"x": 0.5 + 0.01 * i, "y": 0.3} for i in range(16)}
    b = {k: {"x": v["x"] - 0.05, "y": 0.3} for k, v in a.items()}
    return _run(tmp_path / "a", a), _run(tmp_path / "b", b)


def _compare(capsys: pytest.CaptureFixture[str], runs: tuple[Path, Path], *extra: str):  # type: ignore[no-untyped-def]
    code = main(["compare", str(runs[0]), str(runs[1]), "--metric", "x", "--metric", "y", *extra])
    return code, capsys.readouterr()


def test_the_command_reads_margin_and_correction(runs, capsys) -> None:  # type: ignore[no-untyped-def]
    code, captured = _compare(capsys, runs)
    assert code == 1 and "x (session level): mean dropped significantly" in captured.err
    assert "Holm-adjusted p = " in captured.err
    words = "Across 2 compared scores: Holm's step-down, family-wise error held at --alpha."
    assert words in captured.out
    code, captured = _compare(capsys, runs, "--format", "markdown")
    assert code == 1 and words in captured.out and "(adjusted " in captured.out
    assert "Holm-adjusted p = " in captured.out  # the reason, in the comment too
    code, captured = _compare(capsys, runs, "--margin", "x=0.1")
    assert code == 0 and "PASS" in captured.out
    code, captured = _compare(capsys, runs, "--margin", "0.01")
    assert code == 1 and "more than --margin 0.01 (non-inferiority not shown)" in captured.err
    code, captured = _compare(capsys, runs, "--margin", "z=0.1")
    assert code == 2 and "--margin z=...: not a compared score" in captured.err
    code, captured = _compare(capsys, runs, "--correction", "none", "--json")
    document = json.loads(captured.out)
    assert code == 1 and document["verdict"] == "regression"
    assert [c["test"] for c in document["comparisons"]] == ["randomisation", "randomisation"]


def test_max_drop_is_deprecated_to_a_margin(runs, capsys) -> None:  # type: ignore[no-untyped-def]
    code, captured = _compare(capsys, runs, "--max-drop", "0.1")
    assert code == 0
    assert "--max-drop is deprecated: it is --margin 0.1" in captured.err
    code, captured = _compare(capsys, runs, "--max-drop", "0.01")
    assert code == 1 and "more than --max-drop 0.01" in captured.err


def test_the_rule_is_in_the_help(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["compare", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in ("--correction", "Holm's step-down", "McNemar's mid-p", "non-inferiority"):
        assert words in text


def test_pass_fail_turns_of_a_session_are_not_taken_for_independent() -> None:
    # two turns a session: McNemar's test would count each turn; the session is the unit,
    # so the sign-flip test over sessions decides. 10 sessions, both turns passed in A only:
    # every session's sum -2, only the all-minus and all-plus patterns reach: p = 2/1024
    a = {f"s{s}#{t}": 1.0 for s in range(10) for t in (1, 2)}
    b = {k: 0.0 for k in a}
    c = compare_scores(a, b, metric="thumbs", level="turn")
    assert c.test == "randomisation" and c.p_value == pytest.approx(2 / 1024, abs=1e-12)
    one_turn = compare_scores(
        {f"s{s}#1": 1.0 for s in range(10)},
        {f"s{s}#1": 0.0 for s in range(10)},
        metric="thumbs",
        level="turn",
    )
    assert one_turn.test == "McNemar mid-p"
