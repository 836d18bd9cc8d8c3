"""``genir-eval compare RUN_A RUN_B --pairwise``: the pairwise CI gate between two runs.

The runs are real ``genir-eval run`` folders over small JSONL logs; the pairwise judge is the
offline twin, which prefers the answer citing more distinct sources (see its module), so a
run whose answers cite one source loses every pair against one whose answers cite four.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from genir_eval.cli import main


def _session(sid: str, n_links: int) -> dict[str, object]:
    lines = [f"point {k} about topic {sid}" for k in range(n_links)]
    return {
        "version": 1,
        "session_id": sid,
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": f"what is {sid}",
                "response_text": "\n".join(f"{line} [{i}]" for i, line in enumerate(lines, 1)),
                "links": [
                    {"id": i, "url": f"https://e.org/{sid}/{i}", "title": f"t{i}", "text": f"{i}"}
                    for i in range(1, n_links + 1)
                ],
            }
        ],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, urs_run) -> dict[str, Path]:
    def _run(folder: Path, name: str, links_per_answer: list[int]) -> Path:
        return urs_run(folder, name, [_session(f"s{i}", n) for i, n in enumerate(links_per_answer)])

    folder = tmp_path_factory.mktemp("pairwise-runs")
    return {
        "base": _run(folder, "base", [4] * 8),
        "worse": _run(folder, "worse", [1] * 8),
        "same": _run(folder, "same", [4] * 8),
        # better on three sessions, worse on three, equal on two
        "mixed": _run(folder, "mixed", [6, 6, 6, 1, 1, 1, 4, 4]),
        "other": _run(folder, "other", [4] * 7),
        # 30 sessions against base30: 9 wins, 12 losses, 9 ties, a win rate of 0.45
        "base30": _run(folder, "base30", [4] * 30),
        "mixed30": _run(folder, "mixed30", [6] * 9 + [1] * 12 + [4] * 9),
    }


def _compare(*args: str) -> int:
    # 8 queries: --min-sessions 8 lets a pass be a pass (the default 10 says too few)
    command = ["compare", *map(str, args), "--pairwise", "--quiet", "--resamples", "2000"]
    return main([*command, "--min-sessions", "8"])


def test_fails_when_b_is_significantly_worse(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _compare(runs["base"], runs["worse"], "--format", "markdown") == 1
    captured = capsys.readouterr()
    # every pair lost: win rate 0 with the interval [0, 0], below the default 0.5
    assert "### Pairwise gate: FAIL" in captured.out
    assert "| `run-worse` | 0.000 [0.000, 0.000] over 8 pairs | FAIL |" in captured.out
    assert "significantly below 0.5" in captured.err and "Traceback" not in captured.err


def test_passes_when_b_is_not_worse(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # the other way round, B wins every pair
    assert _compare(runs["worse"], runs["base"]) == 0
    assert "run-base: 1.000 [1.000, 1.000] over 8 pairs  pass" in capsys.readouterr().out
    # the same answers: every pair a tie, win rate 0.5, not below 0.5
    assert _compare(runs["base"], runs["same"], "--format", "json") == 0
    document = json.loads(capsys.readouterr().out)
    (candidate,) = document["gate"]["candidates"]
    assert document["passed"] is True and candidate["win_rate"] == 0.5
    assert candidate["ci"] == [0.5, 0.5] and document["pairs"]["ties"] == 8
    # as good on balance (3 wins, 3 losses, 2 ties): 0.5, its interval spans the threshold
    assert _compare(runs["base"], runs["mixed"], "--format", "json") == 0
    (candidate,) = json.loads(capsys.readouterr().out)["gate"]["candidates"]
    assert candidate["win_rate"] == 0.5 and candidate["ci"][0] < 0.5 < candidate["ci"][1]


def test_the_threshold_is_the_users(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # ties all the way (0.5 exactly) fail a gate that asks B to win 60% of its pairs...
    assert _compare(runs["base"], runs["same"], "--min-win-rate", "0.6") == 1
    # ...and the mixed run's wide interval does not: not significantly below 0.6
    assert _compare(runs["base"], runs["mixed"], "--min-win-rate", "0.6") == 0
    # losing every pair passes only a gate that asks nothing
    assert _compare(runs["base"], runs["worse"], "--min-win-rate", "0") == 0
    capsys.readouterr()


def test_keeps_the_pairs_and_resumes(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "pairs"
    assert _compare(runs["base"], runs["worse"], "--out", out) == 1
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and {r["winner"] for r in rows} == {"a"}
    assert {(r["a"], r["b"]) for r in rows} == {("run-base", "run-worse")}
    assert json.loads((out / "arena.json").read_text())["gate"]["passed"] is False
    assert _compare(runs["base"], runs["worse"], "--out", out) == 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--metric", "sdcg_urge"], "--metric gates on scores"),
        (["--max-drop", "0.1"], "--max-drop gates on scores"),
        (["--common"], "--match query --out DIR"),
        (["--min-win-rate", "1.5"], "--min-win-rate"),
    ],
)
def test_refuses_score_options_and_bad_thresholds(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert _compare(runs["base"], runs["worse"], *flags) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_pairwise_options_need_pairwise(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["compare", str(runs["base"]), str(runs["worse"]), "--min-win-rate", "0.4"]
    assert main(command) == 2
    assert "--min-win-rate needs --pairwise" in capsys.readouterr().err
    assert main([*command[:3], "--concurrency", "4"]) == 2
    assert "--concurrency: the engine options judge pairs" in capsys.readouterr().err


def test_refuses_bad_folders(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a folder that does not exist, a folder that is not a run
    assert _compare(runs["base"], tmp_path / "nowhere") == 2
    assert "nowhere" in (err := capsys.readouterr().err) and "no such folder" in err
    (tmp_path / "empty").mkdir()
    assert _compare(tmp_path / "empty", runs["base"]) == 2
    assert "not a finished run directory" in capsys.readouterr().err
    # runs over different sessions: a located error naming the file and the session
    assert _compare(runs["base"], runs["other"]) == 2
    err = capsys.readouterr().err
    assert "other.jsonl" in err and "'s7'" in err and "Traceback" not in err
    # a run whose logs are gone: named, with where the run says they were
    moved = tmp_path / "moved"
    shutil.copytree(runs["same"], moved)
    logs = runs["same"].parent / "same.jsonl"
    kept = logs.read_bytes()
    logs.unlink()
    try:
        assert _compare(runs["base"], moved) == 2
        err = capsys.readouterr().err
        assert "same.jsonl" in err and "are gone" in err and "run.json" in err
    finally:
        logs.write_bytes(kept)


def _gate_json(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, dict[str, Any]]:
    code = main(["compare", *map(str, args), "--pairwise", "--quiet", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_alpha_reaches_the_pairwise_gate(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # 0.45 over 30 queries: the 95% interval (about 0.30-0.60) reaches above 0.5, so B is not
    # significantly below it (pass); at --alpha 0.9 the interval is the middle 10% of the
    # resamples (about 0.44-0.46), all below 0.5 (fail, exit 1)
    a, b = runs["base30"], runs["mixed30"]
    code, document = _gate_json(capsys, a, b, "--min-win-rate", "0.5")
    (cand,) = document["gate"]["candidates"]
    assert code == 0 and cand["win_rate"] == pytest.approx(0.45, abs=1e-12)
    assert cand["ci"][0] < 0.45 < 0.5 < cand["ci"][1] and document["gate"]["alpha"] == 0.05
    code, document = _gate_json(capsys, a, b, "--min-win-rate", "0.5", "--alpha", "0.9")
    (narrow,) = document["gate"]["candidates"]
    assert code == 1 and document["passed"] is False and document["gate"]["alpha"] == 0.9
    assert cand["ci"][0] < narrow["ci"][0] <= 0.45 <= narrow["ci"][1] < 0.5
    assert main(["compare", str(a), str(b), "--pairwise", "--quiet", "--alpha", "0.9"]) == 1
    assert "(ties half, 10% interval over queries)" in capsys.readouterr().out


def test_resamples_and_seed_reach_the_pairwise_gate(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the interval printed is the gate's bootstrap over the judged pairs with the command
    # line's resamples and seed: recomputed from pairs.jsonl with them, the same bounds;
    # another seed or another number of resamples, other bounds
    from genir_eval.judges.pairwise.ranking import Outcomes
    from genir_eval.runner.pairwise_gate import gate_against

    out = tmp_path / "kept"
    a, b = runs["base30"], runs["mixed30"]
    code, document = _gate_json(capsys, a, b, "--out", out, "--resamples", "300", "--seed", "7")
    assert code == 0
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    outcomes = Outcomes.from_rows(["run-base30", "run-mixed30"], rows)
    expected = gate_against(outcomes, baseline="run-base30", threshold=0.5, resamples=300, seed=7)
    assert document["gate"]["candidates"] == expected["candidates"]
    ci = document["gate"]["candidates"][0]["ci"]
    _, other_seed = _gate_json(capsys, a, b, "--resamples", "300", "--seed", "8")
    assert other_seed["gate"]["candidates"][0]["ci"] != ci
    _, other_count = _gate_json(capsys, a, b, "--resamples", "40", "--seed", "7")
    assert other_count["gate"]["candidates"][0]["ci"] != ci


def test_the_match_by_query_hint_is_a_command_the_arena_accepts(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare --pairwise --common` points at the arena's --match query with the logs the
    runs read; that command parses as given (compare itself has no --match)."""
    import re
    import shlex

    from genir_eval.cli import build_parser

    assert _compare(runs["base"], runs["worse"], "--common") == 2
    err = capsys.readouterr().err
    suggested = re.search(r"`genir-eval (arena [^`]+)`", err)
    assert suggested is not None, err
    argv = shlex.split(suggested.group(1))
    args = build_parser(argv).parse_args(argv)
    assert args.match == "query"
    logs = [
        json.loads((runs[k] / "run.json").read_text())["input"]["path"] for k in ("base", "worse")
    ]
    assert [s.split("=", 1)[1] for s in argv[1:3]] == logs
    assert all(Path(p).is_file() for p in logs)
