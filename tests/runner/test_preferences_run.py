"""People's preferences as gold in a run (``[input] preferences``) and in ``genir-eval meta
--preferences``: meta.json, the summary and the report carry every score's pair agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError, InputError
from genir_eval.runner.run import Overrides, run_scenario
from genir_eval.runner.scenario import parse_scenario

OFFLINE = Overrides(cache="none", journal="none")
PASSAGE = "Servers host websites and store files for the computers that ask them."


def _session(session_id: str, text: str, cited: bool) -> dict:
    statements = [{"text": text, "citations": [1] if cited else []}]
    links = [{"id": 1, "url": f"u-{session_id}", "title": "", "text": PASSAGE}] if cited else []
    return {
        "session_id": session_id,
        "turns": [
            {
                "index": 1,
                "query": "what do servers do",
                "response_text": text,
                "statements": statements,
                "links": links,
            }
        ],
    }


def _inputs(tmp_path: Path, rows: list[dict]) -> tuple[Path, Path]:
    sessions = tmp_path / "answers.jsonl"
    answers = [
        _session("t1/copy", "Servers host websites and store files.", True),
        _session("t1/made-up", "Servers are mostly used for playing chess at night.", True),
        _session("t1/none", "No idea, sorry, I cannot answer that one today.", False),
    ]
    sessions.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    preferences = tmp_path / "preferences.jsonl"
    preferences.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return sessions, preferences


ROWS = [
    {
        "session_a": "t1/copy",
        "session_b": "t1/made-up",
        "turn": 1,
        "winner": "a",
        "query": "t1",
        "criterion": "quality_overall",
    },
    {
        "session_a": "t1/none",
        "session_b": "t1/copy",
        "turn": 1,
        "winner": "b",
        "query": "t1",
        "criterion": "quality_overall",
    },
    {
        "session_a": "t1/copy",
        "session_b": "t1/gone",
        "winner": "a",
        "query": "t1",
        "criterion": "quality_overall",
    },
]


def _scenario(tmp_path: Path, sessions: Path, preferences: Path):
    return parse_scenario(
        {
            "input": {"path": str(sessions), "format": "jsonl", "preferences": str(preferences)},
            "judges": [{"name": "citation_support"}],
            "aggregate": {"measures": ["citation_precision", "unsupported_claims"]},
            "meta": {"n_boot": 200},
            "engine": {"max_missing": 1.0},
        },
        base_dir=tmp_path,
    )


def test_run_reports_pair_agreement_everywhere(tmp_path, capsys):
    sessions, preferences = _inputs(tmp_path, ROWS[:2])
    run = run_scenario(
        _scenario(tmp_path, sessions, preferences), out_dir=tmp_path / "run", overrides=OFFLINE
    )
    table = run.meta["preferences"]["quality_overall"]
    assert (table["rows"], table["unknown"]) == (2, 0)
    precision = table["session"]["citation_precision"]
    # copy (supported) beats made-up (unsupported), as people said; "none" has no precision
    assert (precision["decided"], precision["agree"], precision["missing"]) == (1, 1, 1)
    unsupported = table["session"]["unsupported_claims"]
    assert unsupported["lower_is_better"] is True
    # none (1.0 unsupported) against copy (0.0): lower is better, so the score picks copy
    assert (unsupported["decided"], unsupported["agree"]) == (2, 2)
    assert "labels:citation_support" in table["turn"]
    # the turn level reads the measure's direction too: the same two pairs, both agreeing
    turn_unsupported = table["turn"]["unsupported_claims"]
    assert turn_unsupported["lower_is_better"] is True
    assert (turn_unsupported["decided"], turn_unsupported["agree"]) == (2, 2)
    written = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    assert written["preferences"]["quality_overall"]["session"]["citation_precision"]["agree"] == 1
    info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert info["input"]["preferences"] == str(preferences)
    assert info["offline_evidence"].startswith(("semantic", "lexical"))
    report = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert (
        "Scores vs people&#x27;s preferences" in report
        or "Scores vs people's preferences" in report
    )
    assert "preferences-quality_overall-session" in report
    from genir_eval.report.summary import format_summary

    summary = format_summary(run)
    assert "Scores vs people's preferences (quality_overall: 2 pairs" in summary
    assert any(
        "unsupported_claims" in line and "(lower better)" in line for line in summary.splitlines()
    )


def test_a_preference_naming_no_session_of_the_run_is_refused(tmp_path):
    """It was counted as missing in silence (exit 0): now refused at its line, after the
    sessions went by and before anything is written (the judgments are journaled)."""
    sessions, preferences = _inputs(tmp_path, ROWS)
    with pytest.raises(InputError, match=r"line 3, column 'session_b': names session 't1/gone'"):
        run_scenario(
            _scenario(tmp_path, sessions, preferences), out_dir=tmp_path / "run", overrides=OFFLINE
        )
    assert not (tmp_path / "run" / "run.json").exists()


def test_a_bad_preferences_file_stops_the_run_before_judging(tmp_path):
    sessions, preferences = _inputs(tmp_path, [{**ROWS[0], "winner": "A"}])
    with pytest.raises(InputError, match=r"preferences.jsonl, line 1, column 'winner'"):
        run_scenario(
            _scenario(tmp_path, sessions, preferences), out_dir=tmp_path / "run", overrides=OFFLINE
        )
    assert not (tmp_path / "run" / "meta.json").exists()
    with pytest.raises(ConfigError, match=r"input.preferences: no such file"):
        _scenario(tmp_path, sessions, tmp_path / "missing.jsonl")


def test_meta_command_scores_the_judges_labels_against_preferences(tmp_path, capsys):
    sessions, preferences = _inputs(tmp_path, ROWS[:2])
    code = main(
        [
            "meta",
            str(sessions),
            "--judge",
            "citation_support",
            "--preferences",
            str(preferences),
            "--json",
            "--quiet",
            "--max-missing",
            "1",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    entry = result["preferences"]["quality_overall"]["turn"]["labels:citation_support"]
    assert (entry["decided"], entry["agree"]) == (1, 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session_a": "x", "winner": "a"}\n', encoding="utf-8")
    code = main(["meta", str(sessions), "--judge", "citation_support", "--preferences", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "bad.jsonl, line 1, column 'session_b': missing" in err
