"""The arena's figures beside the ranking: win rates with their bootstrap intervals, the gold
agreement's Wilson interval, the example pairs, and the terminal table's columns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from genir_eval.judges.pairwise.ranking import Outcomes
from genir_eval.runner.arena_figures import agreement_intervals, example_pairs, win_rates

# Two queries, three systems (computed by hand):
#   query 0: x beats y, x ties z, z beats y;  query 1: x beats y, z beats x, y ties z
# x: 1 + 0.5 + 1 + 0 = 2.5 of 4 pairs; y: 0 + 0 + 0 + 0.5 = 0.5 of 4; z: 0.5 + 1 + 1 + 0.5 = 3
# of 4. Drawing the two queries with replacement gives x 0.75 (query 0 twice, 1/4), 0.625
# (both, 1/2) or 0.5 (query 1 twice, 1/4): the 2.5% and 97.5% percentiles are 0.5 and 0.75.
OUTCOMES = Outcomes(
    ("x", "y", "z"),
    a=np.array([0, 0, 2, 0, 2, 1]),
    b=np.array([1, 2, 1, 1, 0, 2]),
    result=np.array([1.0, 0.5, 1.0, 1.0, 1.0, 0.5]),
    query=np.array([0, 0, 0, 1, 1, 1]),
    style=np.zeros((6, 3)),
)


def test_win_rates_by_hand() -> None:
    rates = win_rates(OUTCOMES, resamples=2000, seed=0)
    expected = {"x": 0.625, "y": 0.125, "z": 0.75}
    for name, rate in expected.items():
        assert rates[name]["win_rate"] == pytest.approx(rate, abs=1e-12)
        assert rates[name]["pairs"] == 4
    assert rates["x"]["ci95"] == pytest.approx([0.5, 0.75], abs=1e-12)
    # y: 0 (query 0 twice) to 0.25 (query 1 twice)
    assert rates["y"]["ci95"] == pytest.approx([0.0, 0.25], abs=1e-12)
    # seeded: the same draws again; none without resamples
    assert win_rates(OUTCOMES, resamples=2000, seed=0) == rates
    assert win_rates(OUTCOMES, resamples=0, seed=0)["x"]["ci95"] is None


def test_agreement_interval_by_hand() -> None:
    # 4 agreements and 1 tie of 6: rate 4.5/6 = 0.75; Wilson (z 1.96) by hand: centre
    # (0.75 + 0.32013) / 1.64027 = 0.65242, half 1.96 * 0.240683 / 1.64027 = 0.28760
    block = agreement_intervals({"judged": 6, "agree": 4, "ties": 1})
    assert block["rate_ci95"] == pytest.approx([0.3648, 0.9400], abs=1e-4)
    # decided: 4 of 5; nothing decided: no interval
    assert block["decided_rate_ci95"][0] < 0.8 < block["decided_rate_ci95"][1]
    assert agreement_intervals({"judged": 2, "agree": 0, "ties": 2})["decided_rate_ci95"] is None


def test_example_pairs_are_the_shortest_reasons_per_pair_of_systems(tmp_path: Path) -> None:
    rows = [
        ("s1", "x", "y", "a", "a long reason that goes on and on"),
        ("s2", "y", "x", "b", "short"),
        ("s3", "x", "y", "tie", "mid length"),
        ("s4", "x", "y", "a", "tiny"),
        ("s5", "x", "y", None, "t"),  # missing verdict: no example
        ("s6", "x", "z", "b", "z <b>wins</b>"),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"session_id": s, "turn": 1, "a": a, "b": b, "winner": w, "reason": r})
            + "\n"
            for s, a, b, w, r in rows
        ),
        encoding="utf-8",
    )
    examples = example_pairs(path, ["x", "y", "z"])
    assert [(e["session_id"], e["winner"]) for e in examples] == [
        ("s4", "x"),  # "tiny" (4 characters)
        ("s2", "x"),  # "short" (5); y against x, b won: x
        ("s6", "z"),
    ]
    assert examples[2]["reason"] == "z <b>wins</b>"  # kept as text; the page escapes it


def test_the_terminal_table_is_aligned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_arena import _system

    from genir_eval.cli import main

    big, small = _system(tmp_path / "big.jsonl", 4), _system(tmp_path / "small.jsonl", 1)
    out = tmp_path / "out"
    command = ["arena", big, f"a-much-longer-name={small}", "--out", str(out), "--cache", "none"]
    assert main([*command, "--quiet", "--resamples", "20"]) == 0
    table = capsys.readouterr().out.splitlines()[:3]
    assert table[0].startswith("system") and "win rate [95% interval]" in table[0]
    # names padded to one width, figures right-aligned: every line ends at one column
    assert len({len(line) for line in table}) == 1
    starts = {line.index(" ", len("a-much-longer-name")) for line in table[1:]}
    assert len(starts) == 1
