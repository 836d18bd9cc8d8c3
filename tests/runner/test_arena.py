"""``genir-eval arena``: the run folder, bad inputs, and the pairwise gate's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.cli import main


def _session(sid: str, query: str, lines: list[str]) -> dict[str, object]:
    return {
        "version": 1,
        "session_id": sid,
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": query,
                "response_text": "\n".join(f"{line} [{i}]" for i, line in enumerate(lines, 1)),
                "statements": [
                    {"text": f"{line} [{i}]", "citations": [i]} for i, line in enumerate(lines, 1)
                ],
                "links": [
                    {
                        "id": i,
                        "url": f"https://e.org/{sid}/{i}",
                        "title": f"t{i}",
                        "text": f"text {i}",
                    }
                    for i in range(1, len(lines) + 1)
                ],
            }
        ],
    }


QUERIES = [("s1", "What is X?"), ("s2", "How does Y work"), ("s3", "why Z")]


def _system(path: Path, n_lines: int, queries: list[tuple[str, str]] = QUERIES) -> str:
    rows = [
        _session(sid, query, [f"point {k} about {query}" for k in range(n_lines)])
        for sid, query in queries
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _arena(tmp_path: Path, *args: str) -> int:
    return main(["arena", *args, "--cache", "none", "--quiet", "--resamples", "20"])


def test_arena_writes_the_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big, mid, small = (
        _system(tmp_path / f"{n}.jsonl", k) for n, k in (("big", 4), ("mid", 2), ("small", 1))
    )
    out = tmp_path / "out"
    assert _arena(tmp_path, big, f"middle={mid}", small, "--out", str(out)) == 0
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert len(rows) == 9  # 3 queries x 3 pairs
    assert {"session_id", "turn", "a", "b", "winner", "orders", "criteria", "reason"} <= set(
        rows[0]
    )
    assert rows[0]["a"] == "big" and rows[0]["b"] == "middle" and rows[0]["winner"] == "a"
    assert len(rows[0]["orders"]) == 2
    arena = json.loads((out / "arena.json").read_text())
    assert [s["name"] for s in arena["systems"]] == ["big", "middle", "small"]
    assert set(arena["systems"][0]) >= {"name", "score", "ci95", "wins", "ties", "losses"}
    assert arena["systems"][0]["wins"] == 6 and arena["systems"][2]["losses"] == 6
    assert set(arena["style_control"]["coefficients"]) == {"length", "sources", "markup"}
    # the offline twin judges one order; the swapped one is its mirror, not a judgment
    assert arena["consistency"]["position_consistency"] is None
    assert arena["consistency"]["mirrored_pairs"] == 9
    assert rows[0]["orders"][1] == {**rows[0]["orders"][1], "order": "ba", "mirrored": True}
    assert "mirrored" not in rows[0]["orders"][0]
    assert arena["consistency"]["intransitive_cycles"] == 0
    assert (out / "report.html").read_text().count("<tr>") > 3
    assert "style control coefficients" in capsys.readouterr().out
    # a second run into the same folder resumes from the journal: no new provider call
    assert _arena(tmp_path, big, f"middle={mid}", small, "--out", str(out)) == 0
    again = json.loads((out / "arena.json").read_text())
    assert sum(e["calls"] for e in again["engines"]) == 0


def test_one_system_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _arena(tmp_path, _system(tmp_path / "a.jsonl", 2), "--out", str(tmp_path / "o")) == 2
    assert "at least two system files" in capsys.readouterr().err


def test_sessions_that_do_not_match_are_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _system(tmp_path / "a.jsonl", 2)
    b = _system(tmp_path / "b.jsonl", 2, [("s1", "What is X?"), ("s9", "How does Y work")])
    assert _arena(tmp_path, a, b, "--out", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert "b.jsonl" in err and "'s2'" in err and "--match query" in err
    assert "Traceback" not in err


def test_a_session_only_the_second_system_answers_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _system(tmp_path / "a.jsonl", 2, QUERIES[:2])
    b = _system(tmp_path / "b.jsonl", 2)  # s3 as well
    assert _arena(tmp_path, a, b, "--out", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert "b.jsonl" in err and "'s3'" in err and "not by a" in err and "Traceback" not in err
    # refused input leaves no folder the arena made, and a folder that was there stays
    assert not (tmp_path / "o").exists()
    (tmp_path / "kept").mkdir()
    assert _arena(tmp_path, a, b, "--out", str(tmp_path / "kept")) == 2
    assert (tmp_path / "kept").is_dir() and not any((tmp_path / "kept").iterdir())


def test_bad_system_files_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _system(tmp_path / "a.jsonl", 2)
    twice = tmp_path / "twice.jsonl"
    twice.write_text(Path(a).read_text() + Path(a).read_text().splitlines()[0] + "\n")
    assert _arena(tmp_path, a, str(twice), "--out", str(tmp_path / "o1")) == 2
    err = capsys.readouterr().err  # the reader locates it: file, line, column
    assert "twice.jsonl, line 4, column 'session_id'" in err and "duplicate session id 's1'" in err
    assert _arena(tmp_path, a, f"a={twice}", "--out", str(tmp_path / "o2")) == 2
    assert "two systems are named 'a'" in capsys.readouterr().err
    assert _arena(tmp_path, a, str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o3")) == 2
    assert "none.jsonl" in (err := capsys.readouterr().err) and "Traceback" not in err


def test_match_by_query_counts_unmatched_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _system(tmp_path / "a.jsonl", 2)
    # other session ids, the same queries written differently, one query of its own
    b = _system(
        tmp_path / "b.jsonl", 1, [("x1", "what is x"), ("x2", "How does  Y work?"), ("x3", "other")]
    )
    out = tmp_path / "o"
    assert _arena(tmp_path, a, b, "--out", str(out), "--match", "query") == 0
    arena = json.loads((out / "arena.json").read_text())
    assert arena["queries"] == 2 and arena["unmatched"] == {"a": 1, "b": 1}
    assert "unmatched answers left out: a 1, b 1" in capsys.readouterr().out


def test_pairs_file_and_max_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [_system(tmp_path / f"{n}.jsonl", k) for n, k in (("p", 3), ("q", 2), ("r", 1))]
    listed = tmp_path / "pairs.jsonl"
    listed.write_text('{"session_id": "s2", "turn": 1, "a": "r", "b": "p"}\n')
    out = tmp_path / "o1"
    assert _arena(tmp_path, *files, "--out", str(out), "--pairs", str(listed)) == 0
    rows = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    assert [(r["session_id"], r["a"], r["b"], r["winner"]) for r in rows] == [("s2", "r", "p", "b")]
    out2 = tmp_path / "o2"
    assert _arena(tmp_path, *files, "--out", str(out2), "--max-pairs", "4") == 0
    assert len((out2 / "pairs.jsonl").read_text().splitlines()) == 4
    listed.write_text('{"session_id": "s2", "turn": 1, "a": "nobody", "b": "p"}\n')
    assert _arena(tmp_path, *files, "--out", str(tmp_path / "o3"), "--pairs", str(listed)) == 2
    assert (
        "pairs.jsonl" in (err := capsys.readouterr().err) and "'nobody'" in err and "line 1" in err
    )


def test_the_pairwise_gate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _system(tmp_path / "base.jsonl", 4)
    worse = _system(tmp_path / "cand.jsonl", 1)
    common = [base, worse, "--baseline", "base", "--alpha", "0.1"]
    # the candidate loses every pair: its win rate 0 is significantly below 0.4 -> exit 1
    assert (
        _arena(
            tmp_path,
            *common,
            "--out",
            str(tmp_path / "g1"),
            "--min-win-rate",
            "0.4",
            "--format",
            "markdown",
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "Pairwise gate: FAIL" in out and "| `cand` |" in out
    assert _arena(tmp_path, *common, "--out", str(tmp_path / "g2"), "--min-win-rate", "0") == 0
    assert "pass" in capsys.readouterr().out
    assert _arena(tmp_path, *common, "--out", str(tmp_path / "g3"), "--min-win-rate", "1.5") == 2
