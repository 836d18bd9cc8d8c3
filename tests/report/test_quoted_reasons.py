"""A reason quoted beside a score is a reason of the judge whose labels the score comes from:
demo-citations' worst-first list ranks by ``citation_precision`` and quotes the citation
judge (it quoted a link judge's), and the compare page's two columns quote, each, the judge
behind that run's score (run B's ``sdcg_urge`` from ``link_usefulness.true``'s labels, run A's
from ``link_usefulness.dna``'s)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.cli import main
from genir_eval.report.glossary import describe_score
from genir_eval.report.worst import worst_sessions
from genir_eval.rundir.folder import load_run

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DNA, TRUE = "link_usefulness.dna", "link_usefulness.true"


def _run(scenario: Path, out: Path) -> Path:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", str(scenario), "--out", str(out), "--quiet", "--cache", "none"]) == 0
    return out


def test_the_worst_list_quotes_the_judge_of_the_headline(tmp_path: Path) -> None:
    run = load_run(_run(ROOT / "scenarios" / "demo-citations.toml", tmp_path / "citations"))
    score, worst, disputed = worst_sessions(run)
    assert score == "citation_precision"
    judges = describe_score(score, run).judges
    assert judges == ("citation_support",)
    quoted = [s.reason for s in worst + disputed if s.reason]
    assert quoted, "the citation judge states its reasons"
    assert all(reason.startswith("citation_support gave ") for reason in quoted)


def _link_judges_first(tmp_path: Path, first: str, second: str) -> Path:
    """demo-offline with ``first`` as the link judge whose labels give ``sdcg_urge``."""
    text = (ROOT / "scenarios" / "demo-offline.toml").read_text(encoding="utf-8")
    text = text.replace('"../fixtures/', f'"{ROOT}/fixtures/')
    text = re.sub(r"link_judges = \[.*\]", f'link_judges = ["{first}", "{second}"]', text)
    scenario = tmp_path / f"{first}.toml"
    scenario.write_text(text, encoding="utf-8")
    return _run(scenario, tmp_path / f"run-{first}")


def test_each_compare_column_quotes_its_own_runs_judge(tmp_path: Path) -> None:
    run_a = _link_judges_first(tmp_path, DNA, TRUE)
    run_b = _link_judges_first(tmp_path, TRUE, DNA)
    page = tmp_path / "compare.html"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            ["compare", str(run_a), str(run_b), "--metric", "sdcg_urge", "--html", str(page)]
            + ["--min-sessions", "2", "--worst", "8"]
        )
    assert code in (0, 1, 4)
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    sessions = soup.select("div.session")
    assert sessions, "some session got worse when B's link judge changed"
    columns = {"A": set(), "B": set()}
    for block in sessions:
        for column in block.select("div.side > div[data-judges]"):
            label = column.find("h4").get_text().split()[1]
            assert column["data-judges"] == (DNA if label == "A" else TRUE)
            columns[label] |= {b.get_text() for b in column.select("li.jd > b")}
    assert columns == {"A": {DNA}, "B": {TRUE}}
