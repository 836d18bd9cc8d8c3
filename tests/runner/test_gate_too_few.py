"""The gate never decides on numbers that are not numbers, or on too few (issue 46, class 2).

NaN or an infinity in either run's scores, in one session or half of them, is refused
(exit 2, the run's table and the sessions named), never compared; turns of one session are
one unit (the session is what is resampled), so twelve of them are too few to decide,
whatever --min-sessions says; a pairwise win rate over one query is too few to decide too,
not a FAIL from one pair.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.judges.pairwise.ranking import Outcomes
from genir_eval.rundir.folder import SessionRow, TurnRow, file_digest, write_run
from genir_eval.runner.compare import compare_scores, gate, gate_all
from genir_eval.runner.pairwise_gate import gate_against, gate_markdown, gate_text

METRIC = "sdcg_urge"


#: what a damaged judge left in place of a score, as JSON writes it (Python's json reads
#: these back as floats)
JSON_TEXT = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
PLACEHOLDER = 123456.0


def _run(folder: Path, scores: dict[str, float | str]) -> Path:
    """A run of one-turn sessions with these ``sdcg_urge`` scores; a score named by
    :data:`JSON_TEXT`'s keys is written as that JSON text into both tables, and the run's
    digests are updated to match (a consistent folder, not one the digest check refuses)."""
    numbers = {k: PLACEHOLDER if isinstance(v, str) else v for k, v in scores.items()}
    sessions = [SessionRow(s, n_turns=1, scores={METRIC: v}) for s, v in numbers.items()]
    turns = [TurnRow(s, 1, scores={METRIC: v}) for s, v in numbers.items()]
    info = {"version": 1, "scenario": {"name": folder.name, "meta": {"headline": METRIC}}}
    write_run(folder, links=[], turns=turns, sessions=sessions, meta=None, info=info)
    bad = {v for v in scores.values() if isinstance(v, str)}
    if bad:
        [text] = bad
        document = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        for table in ("sessions.jsonl", "turns.jsonl"):
            path = folder / table
            path.write_text(
                path.read_text(encoding="utf-8").replace(str(PLACEHOLDER), JSON_TEXT[text]),
                encoding="utf-8",
            )
            document["files"][table] = file_digest(path)
        (folder / "run.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return folder


BASE: dict[str, float | str] = {f"s{i:02d}": 7.0 for i in range(20)}


@pytest.mark.parametrize("bad", sorted(JSON_TEXT))
@pytest.mark.parametrize("share", [1, 10], ids=["one session", "half"])
@pytest.mark.parametrize("side", ["a", "b"])
def test_a_score_that_is_not_a_number_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, share: int, side: str
) -> None:
    damaged: dict[str, float | str] = {
        k: (bad if i < share else v) for i, (k, v) in enumerate(BASE.items())
    }
    a = _run(tmp_path / "a", damaged if side == "a" else BASE)
    b = _run(tmp_path / "b", damaged if side == "b" else BASE)
    for extra in ([], ["--format", "markdown"], ["--json"], ["--level", "turn"]):
        assert main(["compare", str(a), str(b), *extra]) == 2
        captured = capsys.readouterr()
        assert "PASS" not in captured.out and "no regression" not in captured.out
        assert "Traceback" not in captured.err
        assert f"run {side.upper()}: score 'sdcg_urge' is not a finite number" in captured.err
        assert f"in {share} of 20 " in captured.err and "(e.g. s00" in captured.err
        table = "sessions.jsonl" if "--level" not in extra else "turns.jsonl"
        assert str((a if side == "a" else b) / table) in captured.err


def test_compare_scores_refuses_non_finite_values_in_the_api() -> None:
    with pytest.raises(InputError, match=r"run B: score 'm' is not a finite number in 1 of 2"):
        compare_scores({"x": 1.0, "y": 2.0}, {"x": 1.0, "y": math.nan}, metric="m")


def _turn_run(folder: Path, turns: dict[tuple[str, int], float]) -> Path:
    sessions = sorted({s for s, _ in turns})
    rows = [SessionRow(s, n_turns=sum(1 for t in turns if t[0] == s)) for s in sessions]
    turn_rows = [TurnRow(s, t, scores={METRIC: v}) for (s, t), v in turns.items()]
    info = {"version": 1, "scenario": {"name": folder.name, "meta": {"headline": METRIC}}}
    return write_run(folder, links=[], turns=turn_rows, sessions=rows, meta=None, info=info)


@pytest.mark.parametrize("min_sessions", ["10", "0"])
def test_turns_of_one_session_are_too_few_to_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], min_sessions: str
) -> None:
    # 12 turns of one session, each 0.1 better in B: turn by turn the exact test would say
    # p = 2 / 4096 and the gate passed; the session is one unit, p = 1 and no interval
    a = _turn_run(tmp_path / "a", {("only", t): 0.5 for t in range(1, 13)})
    b = _turn_run(tmp_path / "b", {("only", t): 0.6 for t in range(1, 13)})
    code = main(["compare", str(a), str(b), "--level", "turn", "--min-sessions", min_sessions])
    captured = capsys.readouterr()
    assert code == 4 and "\nPASS" not in captured.out
    assert "TOO FEW TO DECIDE (exit 4)" in captured.out
    assert "12 turns of 1 session compared, fewer sessions than" in captured.err


def test_turns_are_resampled_by_session() -> None:
    # 3 sessions of 4 turns: the sign-flip test has 2**3 patterns, not 2**12. Every turn
    # 0.1 better: only all-plus and all-minus reach the observed mean, p = 2/8 (by hand)
    a = {f"s{s}#{t}": 0.5 for s in range(3) for t in range(1, 5)}
    b = {k: 0.6 for k in a}
    c = compare_scores(a, b, metric="m", level="turn")
    assert (c.n, c.sessions) == (12, 3)
    assert c.p_exact and c.p_value == pytest.approx(2 / 8, abs=1e-12)
    # sessions x, y, z with deltas (1, 1), (-1, -1), (3, 3): sums 2, -2, 6 over 6 turns,
    # observed |mean| 1. The 8 sign patterns give |sum| 6, 10, 2, 6 and their mirrors:
    # 6 of 8 reach 6, p = 6/8 (by hand; turn by turn it would be 2**6 patterns)
    a2 = {"x#1": 0.0, "x#2": 0.0, "y#1": 0.0, "y#2": 0.0, "z#1": 0.0, "z#2": 0.0}
    b2 = {"x#1": 1.0, "x#2": 1.0, "y#1": -1.0, "y#2": -1.0, "z#1": 3.0, "z#2": 3.0}
    c2 = compare_scores(a2, b2, metric="m", level="turn")
    assert c2.p_value == pytest.approx(6 / 8, abs=1e-12)
    # one session's turns: one unit, too few for the gate whatever the bound
    one = compare_scores(
        {f"o#{t}": 0.5 for t in range(12)},
        {f"o#{t}": 0.9 for t in range(12)},
        metric="m",
        level="turn",
    )
    assert one.p_value == 1.0 and one.ci95 is None
    result = gate(one, min_pairs=0)
    assert result.verdict == "too few to decide"
    assert gate_all([one], min_pairs=0)[0].verdict == "too few to decide"


def test_one_session_is_too_few_at_session_level_too() -> None:
    one = compare_scores({"s": 0.5}, {"s": 0.9}, metric="m")
    assert gate(one, min_pairs=0, fail_below=0.95).verdict == "too few to decide"


def _outcomes(results: list[tuple[float, int]]) -> Outcomes:
    """``cand`` against ``base``: (result for cand, query) rows."""
    n = len(results)
    return Outcomes(
        ("base", "cand"),
        np.ones(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.array([r for r, _ in results], dtype=float),
        np.array([q for _, q in results], dtype=np.int64),
        np.zeros((n, 3)),
    )


def test_a_win_rate_over_one_query_is_too_few_to_decide() -> None:
    # both orders of one query, both lost: the bootstrap over one query is [0, 0], which
    # failed the gate; one query is one unit
    gate_doc = gate_against(_outcomes([(0.0, 0), (0.0, 0)]), baseline="base", threshold=0.5)
    assert gate_doc["passed"] is True and gate_doc["undecided"]
    assert "rests on 1 query, fewer than 2" in gate_doc["undecided"][0]
    assert "cand: 0.000 over 2 pairs (no interval)  TOO FEW TO DECIDE" in gate_text(gate_doc)
    assert "### Pairwise gate: TOO FEW TO DECIDE" in gate_markdown(gate_doc)
    # two queries both lost decide (the bound is two units, not more)
    two = gate_against(_outcomes([(0.0, 0), (0.0, 1)]), baseline="base", threshold=0.5)
    assert two["passed"] is False and two["undecided"] == []


def test_a_win_rate_that_is_not_a_number_is_not_decided() -> None:
    gate_doc = gate_against(
        _outcomes([(math.nan, 0), (1.0, 1), (1.0, 2)]), baseline="base", threshold=0.5
    )
    assert gate_doc["passed"] is True and "not numbers" in gate_doc["undecided"][0]


def _system(path: Path, lines: int) -> str:
    answer = "\n".join(f"point {k} about the question [{k + 1}]" for k in range(lines))
    row = {
        "version": 1,
        "session_id": "s0",
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": "the question",
                "response_text": answer,
                "links": [
                    {"id": i, "url": f"https://e.org/{i}", "title": f"t{i}"}
                    for i in range(1, lines + 1)
                ],
            }
        ],
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return f"{path.stem}={path}"


def test_arena_over_one_query_is_too_few_to_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the offline twin prefers the answer citing more sources: b (1 line) loses to a (4)
    a, b = _system(tmp_path / "a.jsonl", 4), _system(tmp_path / "b.jsonl", 1)
    command = ["arena", a, b, "--out", str(tmp_path / "out"), "--cache", "none", "--quiet"]
    code = main([*command, "--min-win-rate", "0.5", "--baseline", "a", "--resamples", "0"])
    captured = capsys.readouterr()
    assert code == 4, captured.err
    assert "TOO FEW TO DECIDE" in captured.out and "FAIL" not in captured.out
    assert "rests on 1 query, fewer than 2" in captured.err
    document = json.loads((tmp_path / "out" / "arena.json").read_text(encoding="utf-8"))
    assert document["gate"]["undecided"] and document["gate"]["passed"] is True


@pytest.mark.parametrize("bad", sorted(JSON_TEXT))
def test_assert_run_refuses_a_score_that_is_not_a_number(tmp_path: Path, bad: str) -> None:
    from genir_eval.runner.testing import assert_run

    damaged: dict[str, float | str] = {**BASE, "s03": bad}
    run = _run(tmp_path / "r", damaged)
    with pytest.raises(AssertionError, match=r"1 of 20 sessions have a score that is not a finite"):
        assert_run(run, metric=METRIC, at_least=0.0, at_most=10.0)
