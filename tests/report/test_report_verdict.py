"""The terminal summary and report.html say the same: the demo scenarios run offline, and
both state the same verdict lines, the same figures with the same intervals (none below
n = 10) for the headline and every correlation, and open on the verdict."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.meta.decide import MIN_N
from genir_eval.records import EVIDENCE_KINDS
from genir_eval.report.html import render_report
from genir_eval.report.summary import format_summary
from genir_eval.report.verdict import VERDICT_TITLE, run_verdict
from genir_eval.rundir.folder import load_run
from genir_eval.runner.run import Overrides, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("demo-offline", "demo-citations", "product-offline", "product-feedback")
FIRST_SCREEN = 25  # terminal lines
TITLES = {"pearson": "pearson", "spearman": "spearman", "kendall": "kendall"}


@pytest.fixture(scope="module", params=SCENARIOS)
def outputs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp(request.param) / "run"
    run_scenario(
        ROOT / "scenarios" / f"{request.param}.toml",
        out_dir=out,
        overrides=Overrides(cache="none", journal="none"),
    )
    run = load_run(out)
    return request.param, run, format_summary(run), render_report(run)


def _words(text: str) -> str:
    return " ".join(text.split())


def _terminal_verdict(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(VERDICT_TITLE)
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("  ") or line.startswith("  1."):
            break
        out.append(line.strip())
    return out


def test_both_state_the_same_verdict_lines(outputs) -> None:
    name, run, text, html = outputs
    soup = BeautifulSoup(html, "html.parser")
    block = soup.find(id="run-verdict")
    assert block is not None, name
    in_html = [_words(li.get_text()) for li in block.find("ul").find_all("li")]
    assert in_html == _terminal_verdict(text)
    steps = [_words(li.get_text()) for li in block.find_all("ol")[0].find_all("li")]
    lines = text.splitlines()
    at = lines.index("What to look at next")
    assert steps == [
        re.sub(r"^\d+\. ", "", line.strip()) for line in lines[at + 1 : at + 1 + len(steps)]
    ]


def test_the_demo_scenarios_get_the_verdicts_the_issue_asked_for(outputs) -> None:
    name, run, text, html = outputs
    verdict = {d.subject: d for d in run_verdict(run).decisions}
    if name == "demo-offline":
        # n = 7 sessions with ratings: no interval, in the verdict and in the table
        d = verdict["headline sdcg_urge vs the users' session satisfaction"]
        assert d.verdict.words == "too few to tell" and "[" not in d.figure
        # the judges against the annotators' labels, from meta.json's judge blocks
        judges = run.meta["judges"]
        links = judges["link_usefulness.dna"]["link_usefulness"]
        d = verdict["link_usefulness.dna vs the annotators' link usefulness labels"]
        lo, hi = links["ci95"]["spearman"]
        expected = "tracks the annotators" if lo > 0 else "runs against" if hi < 0 else "no detect"
        assert d.verdict.words.startswith(expected)
        assert f"(n = {links['n']})" in d.figure and "kappa" in d.figure
        spans = judges["spans"]["spans"]
        d = verdict["spans vs the annotators' spans"]
        closer = spans["vs_annotators"]["f1"] >= spans["human_reference_user_vs_annotators"]["f1"]
        assert d.verdict.words.startswith("as close as" if closer else "less close than")
        assert f"{spans['vs_annotators']['n_turns']} turns" in d.figure
    elif name == "product-offline":
        # no annotators' labels in a product log: no such line
        assert not [s for s in verdict if "annotators" in s]
    elif name == "product-feedback":
        assert verdict["satisfaction.urs vs the users' thumbs"].verdict.words == (
            "better than chance"
        )
        # the headline against the thumbs leads (the input has no ratings), and "In short"
        # says so rather than "no users' ratings"
        assert verdict["headline sdcg_urge vs the users' thumbs"].verdict.words == "chance-level"
        lede = BeautifulSoup(html, "html.parser").find(id="verdict-lede").get_text()
        assert lede.startswith("In short: headline sdcg_urge vs the users' thumbs: chance-level")
        assert "no users' ratings" not in text and "No user satisfaction" not in html
        # a satisfaction judge's card states its scale (1-10, not the users' 1-5)
        soup = BeautifulSoup(html, "html.parser")
        card = soup.select_one("#score-cards [data-score='satisfaction.urs'] .scale")
        assert card is not None and card.get_text() == "scale 1-10"
        # AUC 0.288 [0.10, 0.50] reaches chance; its r -0.411 [-0.68, -0.04] does not
        assert verdict["spans vs the users' thumbs"].verdict.severity == "bad"
    if name == "product-offline":
        d = verdict["headline sdcg_urge"]
        assert "scale 0 and up, higher is better" in d.figure
    elif name == "demo-citations":
        d = verdict["citation_support's citations"]
        assert "fully supported" in d.verdict.words
    assert verdict, name


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def _terminal_table(text: str, title: str) -> dict[str, dict[str, str]]:
    """A terminal table under ``title``: row label (mark dropped) -> column -> cell."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    head = _cells(lines[start + 1])
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        cells = _cells(line)
        names = ["", *head] if len(head) == len(cells) - 1 else head  # the label's head is blank
        rows[cells[0].rstrip("*")] = dict(zip(names, cells, strict=True))
    return rows


def _figure(cell: str) -> tuple[str, str]:
    """(value, interval) of a printed cell: ``0.231 (n<10)`` and ``0.231 n<10`` alike."""
    value = cell.split()[0]
    interval = re.search(r"\[[^\]]*\]", cell)
    small = f"n<{MIN_N}" in cell
    return value, "small" if small else (interval.group(0) if interval else "")


def test_every_correlation_has_the_same_figure_and_interval_in_both(outputs) -> None:
    name, run, text, html = outputs
    correlations = (run.meta or {}).get("correlations") or {}
    session = correlations.get("session") or {}
    if not session:
        pytest.skip(f"{name}: no user satisfaction in the input")
    soup = BeautifulSoup(html, "html.parser")
    table = soup.find(id="correlations-session")
    heads = [th.get_text() for th in table.find("tr").find_all("th")]
    html_rows = {}
    for tr in table.find_all("tr")[1:]:
        tds = tr.find_all("td")
        html_rows[tds[0].get_text()] = {
            method: _figure(tds[i].get_text(" "))
            for method in TITLES
            for i, h in enumerate(heads)
            if h.lower().startswith(method)
        }
    terminal = {}
    titles = ["Session scores vs user session satisfaction"]
    titles += [kind.title for kind in EVIDENCE_KINDS.values() if kind.part]
    for title in titles:
        if any(line.startswith(title) for line in text.splitlines()):
            terminal.update(_terminal_table(text, title))
    assert set(terminal) == set(session) == set(html_rows)
    for score, entry in session.items():
        for method in TITLES:
            cell = terminal[score][f"{method} [95% CI]"]
            assert _figure(cell) == html_rows[score][method], (score, method)
            small = entry["n"] < MIN_N
            assert (_figure(cell)[1] == "small") == small, (score, method, cell)
            assert ("[" in cell) == (not small), cell


def test_the_headline_cards_and_the_terminal_headline_agree(outputs) -> None:
    name, run, text, html = outputs
    headline = (run.meta or {}).get("headline")
    correlations = (run.meta or {}).get("correlations") or {}
    if not correlations:
        pytest.skip(f"{name}: no user satisfaction in the input")
    soup = BeautifulSoup(html, "html.parser")
    rows = _terminal_table(text, f"Headline: {headline}")
    for level, title in (("turn", "query level"), ("session", "session level")):
        for method in TITLES:
            card = soup.find(id=f"headline-{level}-{method}")
            shown = card.find(class_="value").get_text() + " " + card.find(class_="ci").get_text()
            assert _figure(rows[title][f"{method} [95% CI]"]) == _figure(shown), (level, method)


def test_the_thumbs_have_the_same_figures_in_both(outputs) -> None:
    name, run, text, html = outputs
    thumbs = ((run.meta or {}).get("feedback") or {}).get("turn") or {}
    if not thumbs:
        pytest.skip(f"{name}: no thumbs in the input")
    soup = BeautifulSoup(html, "html.parser")
    rows = _terminal_table(text, "Turn scores vs the users' thumbs")
    for tr in soup.find(id="feedback-agreement").find_all("tr")[1:]:
        tds = tr.find_all("td")
        score = tds[0].get_text().rstrip("*")
        assert _figure(rows[score]["AUC [95% CI]"]) == _figure(tds[4].get_text(" "))
        assert _figure(rows[score]["point-biserial r [95% CI]"]) == _figure(tds[5].get_text(" "))


def test_the_first_screen_of_each_states_the_verdict(outputs) -> None:
    name, run, text, html = outputs
    decisions = run_verdict(run).decisions
    assert decisions
    first_screen = "\n".join(text.splitlines()[:FIRST_SCREEN])
    # the first table of figures (the failure table of a partial run's banner may precede it)
    table_at = re.search(
        r"<table[^>]*(class='(scores|correlations)[^']*'|id='feedback-agreement')", html
    ).start()
    before_table = _words(BeautifulSoup(html[:table_at], "html.parser").get_text(" "))
    for d in decisions[:3]:
        assert d.text() in first_screen, (name, d.text())
        assert d.verdict.words in before_table, (name, d.verdict.words)
