"""Worst first: the terminal summary and report.html name the sessions with the lowest
headline score and those where the headline and the users disagree most, each with the
headline judge's reason for its lowest label, the report linking each to its evidence."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from scipy.stats import rankdata

from genir_eval.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("worst") / "run"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            ["run", str(ROOT / "scenarios" / "demo-offline.toml"), "--out", str(out)]
            + ["--cache", "none", "--journal", "none"]
        )
    assert code == 0
    return out, buffer.getvalue()


def _sessions(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "sessions.jsonl").read_text().splitlines()]


def _lowest_reason(out: Path, session_id: str, judge: str) -> tuple[int, str]:
    """The judge's lowest label of the session and its reason, read from evidence.jsonl."""
    found = []
    for line in (out / "evidence.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["session_id"] == session_id:
            found += [
                (j["value"], j["reason"])
                for j in row["judgments"]
                if j["judge"] == judge and j["reason"] and isinstance(j["value"], int)
            ]
    return min(found, key=lambda pair: pair[0])


def test_the_lowest_headline_sessions_come_first_with_the_judges_reason(
    demo: tuple[Path, str],
) -> None:
    out, text = demo
    # demo-offline leads with sdcg_urge, scored from link_usefulness.dna's link labels
    rows = sorted(
        (s for s in _sessions(out) if s["scores"].get("sdcg_urge") is not None),
        key=lambda s: s["scores"]["sdcg_urge"],
    )[:3]
    lines = text.splitlines()
    start = lines.index("Worst first (report.html links each to its evidence): lowest sdcg_urge")
    for row, line in zip(rows, lines[start + 1 : start + 4], strict=True):
        value, reason = _lowest_reason(out, row["session_id"], "link_usefulness.dna")
        assert line.startswith(f"  {row['session_id']}: sdcg_urge {row['scores']['sdcg_urge']:.3f}")
        assert f"(link_usefulness.dna gave {value}: {reason})" in line

    soup = BeautifulSoup((out / "report.html").read_text(encoding="utf-8"), "html.parser")
    listed = soup.find(id="worst-sessions").find_all("li")
    assert [li.a.get_text() for li in listed] == [r["session_id"] for r in rows]
    for li in listed:
        target = soup.find(id=li.a["href"].removeprefix("#"))
        assert target is not None and li.a.get_text() in target.h3.get_text()
    # on the first part of the page: right after the headline, before the score tables
    order = [s.get("id") for s in soup.find_all("section")]
    assert order.index("worst") < order.index("scores")


def test_the_sessions_the_users_disagree_with_most(demo: tuple[Path, str]) -> None:
    out, _ = demo
    rows = [
        s
        for s in _sessions(out)
        if s["scores"].get("sdcg_urge") is not None and s.get("gold_satisfaction") is not None
    ]
    # the gap between the two ranks (scipy's average ranks, as fractions of n - 1)
    score = rankdata([s["scores"]["sdcg_urge"] for s in rows]) - 1
    users = rankdata([s["gold_satisfaction"] for s in rows]) - 1
    gaps = abs(score - users) / (len(rows) - 1)
    ranked = sorted(range(len(rows)), key=lambda i: (-gaps[i], i))
    expected = [rows[i]["session_id"] for i in ranked[:3]]
    soup = BeautifulSoup((out / "report.html").read_text(encoding="utf-8"), "html.parser")
    assert [li.a.get_text() for li in soup.find(id="worst-disputed").find_all("li")] == expected
