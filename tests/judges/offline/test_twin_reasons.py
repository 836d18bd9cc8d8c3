"""Every offline judgment says why: the twins' replies carry a sentence naming the evidence
they used, the report shows it next to the verdict in words, and a twin's reasons differ
from item to item (so the collapse alarm, which flags a judge repeating one reason, stays
quiet about a twin whose labels vary)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.runner.run import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[3]
OFFLINE = Overrides(cache="none", journal="none")


def _judgments(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "evidence.jsonl").read_text().splitlines()]
    return [j for row in rows for j in row["judgments"]]


@pytest.mark.parametrize("scenario", ["product-offline", "demo-citations"])
def test_every_offline_judgment_gives_a_reason(tmp_path: Path, scenario: str) -> None:
    run = run_scenario(ROOT / "scenarios" / f"{scenario}.toml", out_dir=tmp_path, overrides=OFFLINE)
    judgments = [j for j in _judgments(tmp_path) if j["value"] is not None]
    assert judgments
    without = [(j["judge"], j["item"]) for j in judgments if not (j["reason"] or "").strip()]
    assert without == []
    by_judge: dict[str, Counter[str]] = {}
    for j in judgments:
        by_judge.setdefault(j["judge"], Counter())[j["reason"]] += 1
    for judge, reasons in by_judge.items():
        if sum(reasons.values()) >= 5:
            # the item's own figures: no one sentence for most of a judge's items
            assert reasons.most_common(1)[0][1] / sum(reasons.values()) < 0.5, judge
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "(no reason given)" not in html
    assert run.info["status"]["ok"] is True


def test_citation_support_verdicts_are_words_in_the_turn_view(tmp_path: Path) -> None:
    run_scenario(ROOT / "scenarios" / "demo-citations.toml", out_dir=tmp_path, overrides=OFFLINE)
    soup = BeautifulSoup((tmp_path / "report.html").read_text(encoding="utf-8"), "html.parser")
    verdicts = [
        jd.find("b").get_text()
        for jd in soup.select("#details .jd")
        if jd.get_text().startswith("citation_support") and jd.find("b") is not None
    ]
    assert verdicts and set(verdicts) <= {"full", "partial", "none"}
    assert "partial" in verdicts
    reasons = [r.get_text() for r in soup.select("#details .jd .reason")]
    assert any("of the statement's key terms" in r for r in reasons)
