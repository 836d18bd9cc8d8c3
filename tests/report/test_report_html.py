from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from genir_eval.report.html import render_report, write_report
from genir_eval.rundir.folder import load_run


def _soup(run_dir: Path) -> BeautifulSoup:
    return BeautifulSoup(write_report(run_dir).read_text(encoding="utf-8"), "html.parser")


def test_report_is_written_into_the_run_directory(run_dir: Path) -> None:
    path = write_report(run_dir)
    assert path == run_dir / "report.html"
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_logged_markup_is_escaped(run_dir: Path, hostile_text: str) -> None:
    text = write_report(run_dir).read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert "<img" not in text.lower()
    soup = BeautifulSoup(text, "html.parser")
    assert soup.find("script") is None
    assert soup.find(id="injected") is None
    assert soup.find("img") is None
    # ... and it is shown as text, in the turn details and in the table of causes
    assert hostile_text in soup.get_text()
    assert hostile_text in soup.find(id="top-failures").get_text()


def test_no_network_at_view_time(run_dir: Path) -> None:
    soup = _soup(run_dir)
    for tag in soup.find_all(["link", "img", "iframe", "object", "embed"]):
        raise AssertionError(f"external resource tag in report: {tag}")
    for tag in soup.find_all(src=True):
        raise AssertionError(f"element with src in report: {tag}")
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert csp is not None and "default-src 'none'" in csp["content"]


def test_headline_numbers_and_intervals(run_dir: Path) -> None:
    soup = _soup(run_dir)
    card = soup.find(id="headline-session-spearman")
    assert card is not None
    assert card.find(class_="value").get_text() == "0.568"  # meta.json 0.5678, 3 decimals
    # six sessions: too few for an interval, flagged instead of printing [0.20, 0.80]
    assert "n<10" in card.get_text() and "[" not in card.get_text()
    turn = soup.find(id="headline-turn-spearman")  # twelve turns: the interval is shown
    assert turn.find(class_="value").get_text() == "0.234"
    # at 2 decimals, as the terminal prints an interval (decide.interval_text)
    assert "[0.20, 0.80]" in turn.get_text()


def test_plots_are_inline_svg(run_dir: Path) -> None:
    soup = _soup(run_dir)
    assert soup.select("#scatter svg") and soup.select("#task-bars svg")
    ids = [tag["id"] for tag in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), "element ids must be unique across inline SVGs"


def test_svg_text_from_logs_is_escaped(run_dir: Path) -> None:
    svg = str(_soup(run_dir).select_one("#task-bars svg"))
    assert "<script" not in svg
    assert "&lt;script&gt;" in svg


def test_confusion_matrix_counts(run_dir: Path) -> None:
    tables = _soup(run_dir).select("table.confusion")
    judges = [t["data-judge"] for t in tables]
    assert judges == ["link_usefulness.dna", "link_usefulness.true"]
    cells = [int(td.get_text()) for td in tables[0].find_all("td")]
    assert sum(cells) == 24  # every link has gold and a dna label
    cells = [int(td.get_text()) for td in tables[1].find_all("td")]
    assert sum(cells) == 12  # link 2 is missing for the 'true' judge


def test_judges_against_gold_use_the_meta_names(run_dir: Path) -> None:
    soup = _soup(run_dir)
    head = [th.get_text() for th in soup.select("#link-agreement th")]
    assert head[:4] == ["link judge", "n", "missing", "spearman [95% CI]"] and "AUC" in head
    row = [td.get_text() for td in soup.select("#link-agreement tr")[1].find_all("td")]
    # meta.json 0.6104 with its interval, as the terminal prints it
    assert row[0] == "link_usefulness.dna" and row[3] == "0.610 [0.31, 0.82]"
    item = [td.get_text() for td in soup.select("#item-agreement tr")[1].find_all("td")]
    assert item[0] == "item-as" and item[5] == "0.615" and item[-1] == "1.500"


def test_session_index_lists_every_session_and_links_to_its_turns(run_dir: Path) -> None:
    soup = _soup(run_dir)
    rows = soup.select("#session-index table.session-index tr")[1:]
    assert len(rows) == 6  # every session of the run, not only the worst
    links = soup.select("#session-index a")
    assert links
    for a in links:
        target = a["href"].removeprefix("#")
        assert soup.find(id=target) is not None, target
    assert soup.find(id="turn-0-1") is not None and soup.find(id="turn-5-2") is not None


def test_without_gold(make_run_dir) -> None:  # type: ignore[no-untyped-def]
    run = load_run(make_run_dir(with_meta=False, failures=0))
    soup = BeautifulSoup(render_report(run), "html.parser")
    assert soup.find(id="no-meta") is not None
    assert soup.find(id="no-failures") is not None


def test_a_large_scatter_shows_a_seeded_sample_and_says_so() -> None:
    from genir_eval.report.html import MAX_SCATTER_POINTS, _sampled

    gold = [float(i % 5 + 1) for i in range(MAX_SCATTER_POINTS * 3)]
    predicted = [float(i) for i in range(MAX_SCATTER_POINTS * 3)]
    g, p, count = _sampled(gold, predicted)
    assert len(g) == len(p) == MAX_SCATTER_POINTS
    assert count == f"n = {MAX_SCATTER_POINTS * 3:,}; {MAX_SCATTER_POINTS:,} drawn at random shown"
    # Pairs stay together, in table order, and the draw is the same every time.
    assert p == sorted(p) and all(gold[int(v)] == gv for v, gv in zip(p, g, strict=True))
    assert _sampled(gold, predicted) == (g, p, count)
    # At or under the limit every pair is drawn.
    assert _sampled(gold[:10], predicted[:10]) == (gold[:10], predicted[:10], "n = 10")
