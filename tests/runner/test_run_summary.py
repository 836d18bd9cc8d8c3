"""What `genir-eval run` prints: the run's summary on stdout, or only its paths (--quiet)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from genir_eval.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scenarios" / "demo-offline.toml"


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("summary") / "run"
    buffer = io.StringIO()
    # stderr takes the progress line and notices; stdout the summary
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", str(DEMO), "--out", str(out), "--cache", "none"]) == 0
    return out, buffer.getvalue()


def _table(text: str, title: str) -> list[str]:
    """The lines of the table under ``title`` (up to the next blank line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1 : end]


def _ci(entry: dict, method: str) -> str:
    """The cell as the rule words it: fewer than 10 values print no interval."""
    if entry["n"] < 10:
        return f"{entry[method]:.3f} (n<10)"
    lo, hi = entry["ci95"][method]
    return f"{entry[method]:.3f} [{lo:.2f}, {hi:.2f}]".replace("-0.00", "0.00")


def test_headline_correlations_are_meta_json_s(printed: tuple[Path, str]) -> None:
    out, text = printed
    meta = json.loads((out / "meta.json").read_text())
    table = _table(text, "Headline: sdcg_urge")
    assert len(table) == 3  # header, query level, session level
    for line, level in zip(table[1:], ("turn", "session"), strict=True):
        entry = meta["correlations"][level]["sdcg_urge"]
        cells = re.split(r"\s{2,}", line.strip())
        assert cells[0] == {"turn": "query level", "session": "session level"}[level]
        assert cells[1:] == [
            str(entry["n"]),
            *(_ci(entry, m) for m in ("pearson", "spearman", "kendall")),
        ]


def test_every_session_score_has_a_row_and_columns_align(printed: tuple[Path, str]) -> None:
    out, text = printed
    meta = json.loads((out / "meta.json").read_text())
    # the quality scores, then the link-usefulness measures in a table of their own (as
    # their measures declare)
    names = []
    for title in ("Session scores vs user session satisfaction", "Link usefulness: how useful"):
        table = _table(text, title)
        names += [re.split(r"\s{2,}", line.strip())[0].rstrip("*") for line in table[1:]]
        # right-aligned numeric columns: every line of a table has the same length
        assert len({len(line) for line in table}) == 1
    assert sorted(names) == sorted(meta["correlations"]["session"])


def test_judges_against_gold_and_baselines_are_named(printed: tuple[Path, str]) -> None:
    out, text = printed
    meta = json.loads((out / "meta.json").read_text())
    table = _table(text, "Link judges vs expert labels")
    assert re.split(r"\s{2,}", table[0].strip())[:3] == ["n", "missing", "spearman"]
    for line in table[1:]:
        cells = re.split(r"\s{2,}", line.strip())
        judge = cells[0].rstrip("*")
        block = meta["judges"][judge]["link_usefulness"]
        assert cells[0].endswith("*")  # offline: marked as a baseline
        assert cells[3] == _ci(block, "spearman")
        assert cells[4:] == [
            f"{block[k]:.3f}"
            for k in ("cohen_kappa_binary", "cohen_kappa_weighted", "mae", "pairwise_auc")
        ]
    spans = meta["judges"]["spans"]["spans"]
    assert f"{spans['vs_user']['f1']:.3f}" in _table(text, "Useful spans")[1]
    assert "* offline baseline: deterministic heuristics" in text
    assert "Missing labels: 0;" in text


def test_engine_line_and_paths(printed: tuple[Path, str]) -> None:
    out, text = printed
    info = json.loads((out / "run.json").read_text())
    engine = next(line for line in text.splitlines() if line.startswith("Engine:"))
    assert f"{info['provider_calls']} provider calls" in engine
    assert f"tokens {info['usage']['input_tokens']:,} in" in engine and "cost $0.0000" in engine
    assert f"Wrote {out}" in text and str(out / "report.html") in text


def test_quiet_prints_only_the_paths(
    printed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = printed
    assert main(["run", str(DEMO), "--out", str(out), "--cache", "none", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [str(out), str(out / "report.html")]
    assert captured.err == ""


def test_without_gold_run_prints_the_score_table(tmp_path: Path) -> None:
    out = tmp_path / "product"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            [
                "run",
                str(ROOT / "scenarios" / "product-offline.toml"),
                "--out",
                str(out),
                "--cache",
                "none",
                "--journal",
                "none",
            ]
        )
    assert code == 0
    text = buffer.getvalue()
    assert "No gold satisfaction" not in text
    # sdcg_urge, the scenario's headline, is a link-usefulness score: its row is in that table
    rows = {line.split()[0]: line for line in _table(text, "Link usefulness: how useful")}
    sessions = [json.loads(line) for line in (out / "sessions.jsonl").read_text().splitlines()]
    values = [s["scores"]["sdcg_urge"] for s in sessions if s["scores"]["sdcg_urge"] is not None]
    # 12 sessions, 2 without a citation: the mean over the 10 others, with its interval
    assert len(values) == 10
    row = rows["sdcg_urge*"]
    assert re.search(rf"\b10\s+{sum(values) / 10:.3f} \[\d\.\d\d, \d\.\d\d\]", row), row
    assert row.rstrip().endswith("2 (no citations)")


def test_one_session_is_counted_in_the_singular(tmp_path: Path) -> None:
    """A run over one session of one judge says "1 session", "1 judge", never "1 sessions"."""
    from genir_eval.ingest import load_sessions
    from genir_eval.ingest.jsonl import write_jsonl

    session = load_sessions(ROOT / "fixtures" / "demo_sessions.csv").sessions[0]
    assert len(session.turns) == 2
    logs = tmp_path / "one.jsonl"
    assert write_jsonl([session], logs) == 1
    scenario = tmp_path / "one.toml"
    scenario.write_text(
        f'name = "one"\n[input]\npath = {json.dumps(str(logs))}\nformat = "jsonl"\n'
        '[engine]\ncache = false\n[[judges]]\nname = "link_usefulness.dna"\n',
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["run", str(scenario), "--out", str(tmp_path / "run")]) == 0
    text = out.getvalue() + err.getvalue()
    assert "one: 1 session, 2 turns, " in text and "; 1 judge (" in text
    assert "(1 session, 0 missing labels," in text and "judging with 1 judge " in text
    assert not re.search(r"\b1 (sessions|judges|turns|pairs)\b", text), text
    report = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"\b1 (sessions|judges|turns|pairs)\b", report)
