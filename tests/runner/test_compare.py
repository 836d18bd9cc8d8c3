from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.runner.compare import (
    cohen_dz,
    compare_runs,
    gate,
    paired_bootstrap,
    randomization_test,
)

BASE = {f"s{i}": float(v) for i, v in enumerate([0.5, 0.7, 0.9, 0.4, 0.6, 0.8, 0.3, 0.5])}


def test_cohen_dz_by_hand() -> None:
    # deltas 1, 2, 3: mean 2, sample sd 1 -> d_z 2 (computed by hand)
    assert cohen_dz([1.0, 2.0, 3.0]) == pytest.approx(2.0, abs=1e-12)
    assert cohen_dz([0.0, 0.0]) == 0.0
    assert cohen_dz([1.0, 1.0]) is None
    assert cohen_dz([1.0]) is None


def test_exact_randomization_test_by_enumeration() -> None:
    deltas = [0.3, -0.1, 0.2, 0.4, 0.05]
    observed = abs(np.mean(deltas))
    flips = [abs(np.dot(s, deltas) / 5) for s in itertools.product((1, -1), repeat=5)]
    expected = sum(f >= observed - 1e-12 for f in flips) / 32  # enumerated independently
    p, exact = randomization_test(deltas)
    assert exact and p == pytest.approx(expected, abs=1e-12)
    # all five positive deltas of one size: only the all-plus and all-minus patterns tie
    p, _ = randomization_test([0.1] * 5)
    assert p == pytest.approx(2 / 32, abs=1e-12)


def test_monte_carlo_randomization_is_seeded() -> None:
    rng = np.random.default_rng(7)
    deltas = list(rng.normal(0.1, 1.0, size=40))
    p1, exact = randomization_test(deltas, n_resamples=2000, seed=3)
    p2, _ = randomization_test(deltas, n_resamples=2000, seed=3)
    assert not exact and p1 == p2 and 0 < p1 <= 1


def test_bootstrap_interval_covers_the_mean_and_is_seeded() -> None:
    deltas = [0.1, 0.2, -0.05, 0.3, 0.15, 0.0]
    lo, hi = paired_bootstrap(deltas, n_resamples=4000, seed=1)
    assert lo < np.mean(deltas) < hi
    assert paired_bootstrap(deltas, n_resamples=4000, seed=1) == (lo, hi)
    assert paired_bootstrap([0.1], n_resamples=10) is None


def test_compare_identical_runs_passes(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    a, b = make_scores_run("a", BASE), make_scores_run("b", BASE)
    c = compare_runs(a, b, metric="sdcg_urge")
    assert c.n == 8 and c.mean_delta == 0.0 and c.p_value == 1.0 and c.worse() == []
    assert gate(c, max_drop=0.0, alpha=0.05, fail_below=0.1).passed


def test_compare_flags_a_consistent_drop(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    worse = {k: v - 0.1 - 0.01 * i for i, (k, v) in enumerate(BASE.items())}
    c = compare_runs(make_scores_run("a", BASE), make_scores_run("b", worse), metric="sdcg_urge")
    # every delta negative: exact p = 2 / 2**8 (computed by hand)
    assert c.p_exact and c.p_value == pytest.approx(2 / 256, abs=1e-12)
    assert c.mean_delta == pytest.approx(-0.135, abs=1e-12)
    assert [d.key for d in c.worse()][:2] == ["s7", "s6"]
    result = gate(c, alpha=0.05)
    assert not result.passed and "dropped significantly" in result.reasons[0]
    assert gate(c, alpha=0, max_drop=0.2).passed
    assert not gate(c, alpha=0, max_drop=0.1).passed
    assert not gate(c, alpha=0, fail_below=0.6).passed


def test_mismatched_sessions_are_a_clear_error(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    other = dict(BASE)
    other.pop("s3")
    other["x9"] = 0.5
    with pytest.raises(
        InputError, match=r"different sessions: 1 only in run A \(e.g. s3\); 1 only in run B"
    ):
        compare_runs(make_scores_run("a", BASE), make_scores_run("b", other), metric="sdcg_urge")


def test_missing_scores_are_left_out(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    partial = dict(BASE, s0=None)
    c = compare_runs(make_scores_run("a", BASE), make_scores_run("b", partial), metric="sdcg_urge")
    assert c.n == 7 and c.missing == ("s0",)


def test_unknown_metric(make_scores_run) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="no score 'ndcg'"):
        compare_runs(make_scores_run("a", BASE), make_scores_run("b", BASE), metric="ndcg")


def test_cli_exit_codes(make_scores_run, capsys) -> None:  # type: ignore[no-untyped-def]
    a = str(make_scores_run("a", BASE))
    b = str(make_scores_run("b", {k: v - 0.2 for k, v in BASE.items()}))
    # 8 sessions and no regression: too few to call it a pass by default (exit 4)
    assert main(["compare", a, a]) == 4
    captured = capsys.readouterr()
    assert "TOO FEW TO DECIDE (exit 4)" in captured.out and "\nPASS" not in captured.out
    assert "8 sessions compared, fewer than --min-sessions 10" in captured.err
    assert main(["compare", a, a, "--min-sessions", "8"]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["compare", a, b, "--metric", "sdcg_urge"]) == 1
    captured = capsys.readouterr()
    assert "worse in 8 of 8 sessions" in captured.out
    assert "FAIL: sdcg_urge (session level): mean dropped significantly" in captured.err
    assert main(["compare", a, b, "--alpha", "0", "--max-drop", "0.25", "--min-sessions", "8"]) == 0
    capsys.readouterr()
    assert main(["compare", a, b, "--alpha", "0", "--json", "--min-sessions", "8"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["passed"] and document["comparisons"][0]["mean_delta"] == pytest.approx(-0.2)
    assert document["verdict"] == "pass" and "--min-sessions" in document["rule"]


def test_cli_mismatch_exits_2_without_traceback(make_scores_run, capsys) -> None:  # type: ignore[no-untyped-def]
    a = str(make_scores_run("a", BASE))
    b = str(make_scores_run("b", {"other": 1.0}))
    assert main(["compare", a, b]) == 2
    err = capsys.readouterr().err
    assert err.startswith("genir-eval: error:") and "Traceback" not in err


def test_common_compares_the_shared_sessions_and_counts_the_rest(make_scores_run, capsys) -> None:  # type: ignore[no-untyped-def]
    a = make_scores_run("a", {**BASE, "only-a": 1.0})
    b = make_scores_run("b", {**{k: v + 0.1 for k, v in BASE.items()}, "new1": 0.0, "new2": 0.0})
    comparison = compare_runs(a, b, metric="sdcg_urge", common=True)
    assert comparison.n == 8 and comparison.mean_delta == pytest.approx(0.1)
    assert comparison.only_a == ("only-a",) and comparison.only_b == ("new1", "new2")
    assert main(["compare", str(a), str(b), "--common", "--min-sessions", "8"]) == 0
    out = capsys.readouterr().out
    assert "left out 1 sessions only in run A and 2 only in run B" in out and "PASS" in out


def test_missing_run_folder_says_no_such_folder(make_scores_run, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    a = str(make_scores_run("a", BASE))
    missing = str(tmp_path / "runs" / "never-written")
    assert main(["compare", a, missing]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such folder" in err and "Traceback" not in err


def test_markdown_summary_for_a_pull_request(make_scores_run, capsys) -> None:  # type: ignore[no-untyped-def]
    a = str(make_scores_run("a", BASE))
    worse = {k: v - 0.2 if k != "s0" else v for k, v in BASE.items()}
    b = str(make_scores_run("b", {**worse, "s|<b>": 0.1}))
    assert main(["compare", a, b, "--format", "markdown", "--common"]) == 1
    captured = capsys.readouterr()
    md = captured.out
    assert md.startswith("### genir-eval: ❌ regression")
    row = next(line for line in md.splitlines() if line.startswith("| `sdcg_urge`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # 8 shared sessions; means by hand: A 0.5875, B 0.5875 - 7 * 0.2 / 8 = 0.4125
    # 8 pairs, fewer than 10: the delta is printed with no interval (decide.MIN_N)
    assert cells[2:5] == ["8", "0.588", "0.412"] and cells[5] == "-0.175 (n < 10: no interval)"
    assert cells[-1] == "❌"
    assert "left out 0 only in A, 1 only in B" in md
    assert "7 of 8 sessions got worse" in md and "<details>" in md
    assert "**Why it failed**" in md and "mean dropped significantly" in md
    assert "FAIL:" in captured.err  # the reasons also go to stderr for the CI log
    b_same = str(make_scores_run("c", BASE))
    assert main(["compare", a, b_same, "--format", "markdown", "--min-sessions", "8"]) == 0
    assert capsys.readouterr().out.startswith("### genir-eval: ✅ no regression")
    assert main(["compare", a, b_same, "--format", "markdown"]) == 4
    md = capsys.readouterr().out
    assert md.startswith("### genir-eval: ⚠️ too few to decide") and "**Why it cannot decide**" in md


@pytest.mark.parametrize(
    ("extra_in", "words"),
    [("a", "1 only in run A (e.g. extra)"), ("b", "1 only in run B (e.g. extra)")],
)
def test_a_session_only_one_run_has_is_an_error_either_way(  # type: ignore[no-untyped-def]
    make_scores_run, capsys, extra_in, words
) -> None:
    # run B with a session run A lacks is refused as surely as the reverse: a session B added
    # (or A lost) is not compared silently
    more = {**BASE, "extra": 0.0}
    a = make_scores_run("a", more if extra_in == "a" else BASE)
    b = make_scores_run("b", more if extra_in == "b" else BASE)
    with pytest.raises(InputError, match=re.escape(f"the runs cover different sessions: {words}")):
        compare_runs(a, b, metric="sdcg_urge")
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert words in err and "--common" in err and "Traceback" not in err
    # with --common: the shared sessions compared, the extra one counted
    # (8 or 9 sessions: the gate's --min-sessions lowered so it decides)
    assert main(["compare", str(a), str(b), "--common", "--min-sessions", "8"]) == 0
    side = "1 sessions only in run A and 0" if extra_in == "a" else "0 sessions only in run A and 1"
    assert side in capsys.readouterr().out


def test_gold_and_judge_scores_keep_their_measures_direction(make_scores_run, capsys) -> None:  # type: ignore[no-untyped-def]
    from genir_eval.runner.compare import higher_is_better

    assert higher_is_better("unsupported_claims") is False
    assert higher_is_better("gold:unsupported_claims") is False
    assert higher_is_better("unsupported_claims@cite2") is False
    assert higher_is_better("gold:unsupported_claims@cite2") is False
    assert higher_is_better("gold:citation_recall") is True
    assert higher_is_better("gold:no_such_score") is True
    # the expert labels' unsupported claims rise by 0.2 in every session: a regression
    metric = "gold:unsupported_claims"
    a = make_scores_run("a", {k: v / 4 for k, v in BASE.items()}, metric=metric)
    b = make_scores_run("b", {k: v / 4 + 0.2 for k, v in BASE.items()}, metric=metric)
    capsys.readouterr()
    assert (
        main(["compare", str(a), str(b), "--metric", metric, "--alpha", "0", "--max-drop", "0.1"])
        == 1
    )
    captured = capsys.readouterr()
    assert "mean rose (lower is better) by up to 0.2000" in captured.err
    assert "worse in 8 of 8 sessions" in captured.out
    # and their fall is an improvement
    assert (
        main(
            ["compare", str(b), str(a), "--metric", metric, "--alpha", "0", "--max-drop", "0.1"]
            + ["--min-sessions", "8"]
        )
        == 0
    )
    assert "no session got worse" in capsys.readouterr().out
