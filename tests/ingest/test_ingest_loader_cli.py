"""Format detection, load_sessions, and the ``genir-eval parse`` command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from genir_eval.cli import main
from genir_eval.errors import ConfigError, InputError
from genir_eval.ingest import detect_format, load_sessions

# (file name, first line, expected format); by the rules in detect_format's docstring.
FORMAT_CASES = [
    ("a.csv", "anything", "urge"),
    ("a.JSONL", "anything", "jsonl"),
    ("a.md", "anything", "markdown"),
    ("a.txt", '{"session_id": "x"}', "jsonl"),
    ("a.log", "# Session: x", "markdown"),
    ("a.data", "conversation,search intent,task_type,response_html", "urge"),
]


@pytest.mark.parametrize(("name", "first", "expected"), FORMAT_CASES)
def test_detect_format(tmp_path, name, first, expected):
    path = tmp_path / name
    path.write_text(f"\n{first}\n", encoding="utf-8")
    assert detect_format(path) == expected


def test_undetectable_and_missing_files(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="cannot tell the format"):
        load_sessions(path)
    with pytest.raises(InputError, match="no such file"):
        load_sessions(tmp_path / "missing.csv")
    with pytest.raises(ConfigError, match="unknown input format"):
        load_sessions(path, format="xml")  # type: ignore[arg-type]


def test_explicit_format_overrides_the_extension(fixtures_dir, tmp_path):
    copy = tmp_path / "demo.txt"
    shutil.copy(fixtures_dir / "demo_sessions.md", copy)
    assert len(load_sessions(copy, format="markdown").sessions) == 3


def test_parse_command_writes_jsonl(fixtures_dir, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["parse", str(fixtures_dir / "demo_sessions.csv"), "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8 and json.loads(lines[0])["session_id"] == "urge-0"
    err = capsys.readouterr().err
    # Counted from make_demo_sessions.py: turns 2+3+2+1+2+4+1+1, links 5+7+3+0+3+6+2+3.
    assert "parsed 8 sessions, 16 turns, 29 links, 0 skipped" in err


def _broken_csv(fixtures_dir, tmp_path):
    lines = (fixtures_dir / "demo_sessions.csv").read_text(encoding="utf-8").splitlines(True)
    broken = tmp_path / "broken.csv"
    # Appending a row whose cells are garbage: row 9 of the data.
    broken.write_text("".join(lines) + "{oops," + ",".join(["x"] * 10) + "\n", encoding="utf-8")
    return broken


def test_parse_command_skip_invalid_lists_skipped_rows(fixtures_dir, tmp_path, capsys):
    broken = _broken_csv(fixtures_dir, tmp_path)
    out = tmp_path / "out.jsonl"
    assert main(["parse", str(broken), "-o", str(out), "--skip-invalid"]) == 0
    err = capsys.readouterr().err
    assert "skipped:" in err and "row 9" in err and "urge-8" in err
    assert "parsed 8 sessions, 16 turns, 29 links, 1 skipped" in err


def test_parse_command_error_exits_2(fixtures_dir, tmp_path, capsys):
    broken = _broken_csv(fixtures_dir, tmp_path)
    assert main(["parse", str(broken), "-o", str(tmp_path / "o.jsonl"), "--format", "urge"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("genir-eval: error: ") and "row 9" in err and "conversation" in err


def test_parse_subprocess_broken_file_no_traceback(fixtures_dir, tmp_path):
    broken = _broken_csv(fixtures_dir, tmp_path)
    completed = subprocess.run(
        [sys.executable, "-m", "genir_eval", "parse", str(broken), "-o", str(tmp_path / "o.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert "row 9" in completed.stderr
