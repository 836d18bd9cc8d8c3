"""``genir-eval arena`` as a user sees it: the scores on the Elo scale, their intervals, style
control's sign, and the pairwise gate's options (``--baseline``, ``--alpha``,
``--min-win-rate``) reaching the verdict and the exit code.

The judge is the offline twin, which prefers the answer citing more distinct sources (its
module says why): an answer of n lines cites n sources, so the line counts below decide
every pair, and equal counts (the same answer) are a tie.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from genir_eval.cli import main

#: 400 Elo points per factor of 10 in the odds: 400 / ln 10 per unit of log-strength.
ELO_POINTS_PER_UNIT = 400 / 2.302585092994046


def _system(path: Path, lines_per_query: list[int]) -> str:
    """One system's logs: query q answered with ``lines_per_query[q]`` cited lines."""
    rows = []
    for q, n in enumerate(lines_per_query):
        lines = [f"point {k} about question {q}" for k in range(n)]
        rows.append(
            {
                "version": 1,
                "session_id": f"s{q}",
                "language": "en",
                "turns": [
                    {
                        "index": 1,
                        "query": f"question {q}",
                        "response_text": "\n".join(f"{t} [{i}]" for i, t in enumerate(lines, 1)),
                        "links": [
                            {"id": i, "url": f"https://e.org/{q}/{i}", "title": f"t{i}"}
                            for i in range(1, n + 1)
                        ],
                    }
                ],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"{path.stem}={path}"


def _arena(*args: str) -> int:
    return main(["arena", *args, "--cache", "none", "--quiet"])


def test_two_systems_score_on_the_elo_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # x wins 2 queries, loses 1, ties 1: the saturated Davidson fit has e^d = 2 (by hand), so
    # x is 173.72 * ln 2 / 2 = 60.2 points above 1000 and y as far below
    x = _system(tmp_path / "x.jsonl", [3, 3, 1, 2])
    y = _system(tmp_path / "y.jsonl", [1, 1, 3, 2])
    out = tmp_path / "o"
    assert _arena(x, y, "--out", str(out), "--resamples", "0", "--format", "json") == 0
    document = json.loads(capsys.readouterr().out)
    scores = {s["name"]: s["score"] for s in document["systems"]}
    half = ELO_POINTS_PER_UNIT * math.log(2) / 2
    assert scores["x"] == pytest.approx(1000 + half, abs=0.5)
    assert scores["y"] == pytest.approx(1000 - half, abs=0.5)
    assert scores["x"] == pytest.approx(1060.2, abs=0.5)
    assert [(s["wins"], s["ties"], s["losses"]) for s in document["systems"]] == [
        (2, 1, 1),
        (1, 1, 2),
    ]
    # the winner of each decided pair was the longer answer, with more sources and more
    # length: style control reads that as a positive coefficient (a minus b)
    coefficients = document["style_control"]["coefficients"]
    assert coefficients["length"] > 0 and coefficients["sources"] > 0
    assert _arena(x, y, "--out", str(tmp_path / "t"), "--resamples", "0") == 0
    text = capsys.readouterr().out
    # the ranking's table: score, win rate (2.5 of 4 and 1.5 of 4), no intervals (no resamples)
    lines = text.splitlines()
    assert lines[1].split() == ["x", "1060.2", "[-]", "0.62", "[-]", "2/1/1"]
    assert lines[2].split() == ["y", "939.8", "[-]", "0.38", "[-]", "1/1/2"]


@pytest.mark.slow
def test_intervals_have_width_and_follow_resamples_and_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 12 queries, x beats y on 8 and loses 4, z in the middle: the bootstrap over queries
    # gives an interval around each score that is not a point, and another seed (or
    # number of resamples) gives other bounds
    x = _system(tmp_path / "x.jsonl", [3] * 8 + [1] * 4)
    y = _system(tmp_path / "y.jsonl", [1] * 8 + [3] * 4)
    z = _system(tmp_path / "z.jsonl", [2] * 6 + [4] * 3 + [1] * 3)

    def ci(seed: str, resamples: str) -> list[float]:
        out = tmp_path / f"o{seed}-{resamples}"
        assert _arena(x, y, z, "--out", str(out), "--resamples", resamples, "--seed", seed) == 0
        capsys.readouterr()
        arena = json.loads((out / "arena.json").read_text())
        (top,) = [s for s in arena["systems"] if s["name"] == "x"]
        assert top["ci95"][0] < top["score"] < top["ci95"][1]
        return top["ci95"]

    lo, hi = ci("0", "300")
    # with 12 queries a score's standard error is tens of points: the 95% interval spans
    # well over 100 (a refit on the full data would make it a point)
    assert 100 < hi - lo < 600
    assert ci("1", "300") != [lo, hi]
    assert ci("0", "40") != [lo, hi]


def test_the_baseline_is_the_one_named_not_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # cand (first on the command line) loses every one of 6 queries to base
    cand = _system(tmp_path / "cand.jsonl", [1] * 6)
    base = _system(tmp_path / "base.jsonl", [4] * 6)
    common = ["--resamples", "0", "--min-win-rate", "0.4"]
    out = tmp_path / "named"
    assert _arena(cand, base, "--baseline", "base", "--out", str(out), *common) == 1
    text = capsys.readouterr().out
    assert (
        "win rate against base" in text and "cand: 0.000 [0.000, 0.000] over 6 pairs  FAIL" in text
    )
    assert json.loads((out / "arena.json").read_text())["gate"]["baseline"] == "base"
    # without --baseline the first system is the baseline: base then wins all, and passes
    assert _arena(cand, base, "--out", str(tmp_path / "first"), *common) == 0
    assert "base: 1.000 [1.000, 1.000] over 6 pairs  pass" in capsys.readouterr().out
    assert _arena(cand, base, "--baseline", "nobody", "--out", str(tmp_path / "x"), *common) == 2
    assert "--baseline: no system is named 'nobody'" in capsys.readouterr().err


def test_one_failing_candidate_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _system(tmp_path / "base.jsonl", [2] * 6)
    good = _system(tmp_path / "good.jsonl", [4] * 6)
    bad = _system(tmp_path / "bad.jsonl", [1] * 6)
    common = ["--resamples", "0", "--min-win-rate", "0.4", "--baseline", "base"]
    assert _arena(base, good, bad, "--out", str(tmp_path / "g"), *common) == 1
    text = capsys.readouterr().out
    assert "good: 1.000 [1.000, 1.000] over 6 pairs  pass" in text
    assert "bad: 0.000 [0.000, 0.000] over 6 pairs  FAIL" in text
    # without the bad one, the gate passes
    assert _arena(base, good, "--out", str(tmp_path / "h"), *common) == 0
    capsys.readouterr()


def test_a_candidate_never_judged_against_the_baseline_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _system(tmp_path / "base.jsonl", [2] * 4)
    good = _system(tmp_path / "good.jsonl", [4] * 4)
    lone = _system(tmp_path / "lone.jsonl", [4] * 4)
    listed = tmp_path / "listed.jsonl"
    listed.write_text(
        "".join(
            json.dumps({"session_id": f"s{q}", "turn": 1, "a": "good", "b": other}) + "\n"
            for q in range(4)
            for other in ("base", "lone")
        )
    )
    common = ["--resamples", "0", "--min-win-rate", "0.4", "--baseline", "base"]
    code = _arena(
        base,
        good,
        lone,
        "--pairs",
        str(listed),
        "--out",
        str(tmp_path / "g"),
        *common,
        "--format",
        "markdown",
    )
    assert code == 1
    out = capsys.readouterr().out
    assert "| `good` | 1.000 [1.000, 1.000] over 4 pairs | pass |" in out
    assert "| `lone` | no judged pair | FAIL |" in out and "### Pairwise gate: FAIL" in out


def test_alpha_sets_the_gate_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # cand wins 4 of 10 queries: 0.4 with a 95% interval reaching above 0.5 (not significantly
    # below it: pass); at --alpha 0.9 the interval is the middle 10% of the resamples, all
    # below 0.5 (fail)
    base = _system(tmp_path / "base.jsonl", [2] * 10)
    cand = _system(tmp_path / "cand.jsonl", [3] * 4 + [1] * 6)
    common = ["--resamples", "0", "--min-win-rate", "0.5"]
    assert _arena(base, cand, "--out", str(tmp_path / "a"), *common) == 0
    text = capsys.readouterr().out
    assert "(ties half, 95% interval over queries)" in text and "cand: 0.400 [" in text
    out = tmp_path / "b"
    assert _arena(base, cand, "--out", str(out), *common, "--alpha", "0.9") == 1
    text = capsys.readouterr().out
    assert "(ties half, 10% interval over queries)" in text
    gate = json.loads((out / "arena.json").read_text())["gate"]
    lo, hi = gate["candidates"][0]["ci"]
    assert gate["alpha"] == 0.9 and lo <= 0.4 <= hi < 0.5
