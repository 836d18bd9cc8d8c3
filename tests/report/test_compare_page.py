"""``genir-eval compare BASELINE CANDIDATE --html FILE``: the two runs side by side.

The runs are real ``genir-eval run`` folders over small JSONL logs judged by the offline
satisfaction twin, which rates an answer by the share of the query's key terms it covers:
the candidate drops both terms in one session (s4: 10 -> 6) and one in two others (s2, s6:
10 -> 8), so s4 got worse most although s2 comes first in the logs. Every answer carries
HTML-special characters (``<b>``, ``&``).

The browser tests lay the page out in headless Chromium at 1280 and 800 px (``browser.py``)
and read the text of the first screen from the DOM.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser import layout, run_chromium

from genir_eval.cli import main

WORDS = {
    "full": "<b>alpha</b> & {sid}",
    "half": "<b>alpha</b> & filler",
    "none": "<i>x</i> & filler",
}
SCREEN = 800


def _session(sid: str, answer: str) -> dict[str, object]:
    lines = [f"point {k} about {WORDS[answer].format(sid=sid)}" for k in range(3)]
    return {
        "version": 1,
        "session_id": sid,
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": f"alpha {sid}?",
                "response_text": "\n".join(f"{line} [{i}]" for i, line in enumerate(lines, 1)),
                "links": [
                    {"id": i, "url": f"https://e.org/{sid}/{i}", "title": f"t{i}", "text": f"{i}"}
                    for i in range(1, 4)
                ],
            }
        ],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, urs_run) -> dict[str, Path]:
    def _run(folder: Path, name: str, answers: list[str]) -> Path:
        return urs_run(folder, name, [_session(f"s{i}", a) for i, a in enumerate(answers)])

    folder = tmp_path_factory.mktemp("compare-page")
    return {
        "base": _run(folder, "base", ["full"] * 8),
        "worse": _run(
            folder, "worse", ["full", "full", "half", "full", "none", "full", "half", "full"]
        ),
    }


def _compare(runs: dict[str, Path], page: Path, *args: str) -> int:
    return main(["compare", str(runs["base"]), str(runs["worse"]), "--html", str(page), *args])


def _first_part(page: Path) -> str:
    """The page up to the per-score table: what the verdict banner says."""
    text = page.read_text(encoding="utf-8")
    return text[: text.index("<h2 id='scores'>")]


def test_a_regression_opens_with_the_verdict_and_the_worst_session(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "compare.html"
    assert _compare(runs, page, "--min-sessions", "8", "--max-drop", "0.1", "--quiet") == 1
    first = _first_part(page)
    assert "Regression: run B is worse than run A" in first
    assert "more than --max-drop 0.1" in first and "Rule: REGRESSION (exit 1)" in first
    assert "Got worse most: <b>s4</b>" in first and "3 of 8 sessions got worse" in first
    text = page.read_text(encoding="utf-8")
    # the score's paired delta with its interval and p (8 pairs: exact), as compare printed
    assert "-1.0000 [-2.0000, -0.2500]" in text and "0.2500 (exact)" in text
    # worse first: s4 (-4) before s2 and s6 (-2 each), although s2 comes first in the logs
    order = [text.index(f"<h3>{n}. s{i}:") for n, i in ((1, 4), (2, 2), (3, 6))]
    assert order == sorted(order)
    # both runs' answers and both judges' reasons, escaped
    s4 = text[text.index("id='worse-1'") : text.index("id='worse-2'")]
    assert "point 0 about &lt;b&gt;alpha&lt;/b&gt; &amp; s4" in s4  # run A's answer
    assert "point 0 about &lt;i&gt;x&lt;/i&gt; &amp; filler" in s4  # run B's answer
    assert "<b>alpha</b>" not in text and "<i>x</i>" not in text
    assert s4.count("rated 10/10") >= 1 and s4.count("rated 6/10") >= 1


def test_a_pass_whose_interval_lies_on_the_worse_side_is_not_a_bare_pass(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "compare.html"
    # p = 0.25 (exact) is not below --alpha: a pass by the rule, the interval [-2, -0.25]
    # wholly below zero all the same
    assert _compare(runs, page, "--min-sessions", "8") == 0
    printed = capsys.readouterr().out
    first = _first_part(page)
    assert "Pass by the rule, but read the note" in first
    assert "Pass: no regression" not in first
    assert "excludes zero on the worse side" in first
    # the terminal output is the one compare prints without --html
    assert main(["compare", str(runs["base"]), str(runs["worse"]), "--min-sessions", "8"]) == 0
    assert capsys.readouterr().out == printed


def test_too_few_to_decide_is_said_so(runs: dict[str, Path], tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    assert _compare(runs, page, "--quiet") == 4  # 8 sessions, the default --min-sessions 10
    first = _first_part(page)
    assert "Too few to decide (exit 4)" in first and "fewer than --min-sessions 10" in first
    assert "Pass" not in first.split("Rule:")[0]


def test_an_unusable_html_path_is_refused_before_comparing(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _compare(runs, tmp_path / "missing" / "compare.html") == 2
    err = capsys.readouterr().err
    assert "--html" in err and "does not exist" in err and "Traceback" not in err
    report = runs["worse"] / "report.html"
    before = report.read_bytes()
    assert _compare(runs, report) == 2
    assert "a file of the run folder" in capsys.readouterr().err
    assert report.read_bytes() == before


def test_pairwise_html_is_the_gate_page(runs: dict[str, Path], tmp_path: Path) -> None:
    page = tmp_path / "pairwise.html"
    # the pairwise twin reads what the log states (cited sources, layout blocks), equal in
    # both runs: every pair a tie, a win rate of 0.5, not below the threshold
    args = ("--pairwise", "--min-sessions", "8", "--resamples", "500", "--quiet")
    assert _compare(runs, page, *args) == 0
    text = page.read_text(encoding="utf-8")
    first = text[: text.index("<h2 id='ranking'>")]
    assert "Pairwise gate: pass" in first
    assert "<b>run-worse</b>: win rate against run-base 0.500 [0.500, 0.500]" in first
    # with too few queries for --min-sessions, the page says so as the terminal does
    assert _compare(runs, page, "--pairwise", "--resamples", "500", "--quiet") == 4
    first = page.read_text(encoding="utf-8").split("<h2 id='ranking'>")[0]
    assert "Pairwise gate: too few to decide" in first and "fewer than --min-sessions 10" in first


def test_pairwise_out_folder_page_says_too_few_to_decide(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """``--pairwise --out DIR`` keeps the arena's folder; its ``report.html`` says what the
    gate decided, "too few to decide" included (that verdict is known only after the arena
    wrote its page, which is then written again)."""
    out = tmp_path / "pairwise"
    args = ["compare", str(runs["base"]), str(runs["worse"]), "--pairwise", "--out", str(out)]
    assert main([*args, "--resamples", "500", "--quiet"]) == 4
    first = (out / "report.html").read_text(encoding="utf-8").split("<h2 id='ranking'>")[0]
    assert "Pairwise gate: too few to decide" in first and "fewer than --min-sessions 10" in first
    # enough queries for the rule: the folder's page is the arena's own, a pass
    assert main([*args, "--resamples", "500", "--quiet", "--min-sessions", "8"]) == 0
    first = (out / "report.html").read_text(encoding="utf-8").split("<h2 id='ranking'>")[0]
    assert "Pairwise gate: pass" in first and "too few to decide" not in first


@pytest.mark.browser
@pytest.mark.parametrize("width", (1280, 800))
def test_the_first_screen_shows_the_verdict_and_the_worst_session(
    runs: dict[str, Path], tmp_path: Path, width: int
) -> None:
    page = tmp_path / "compare.html"
    assert _compare(runs, page, "--min-sessions", "8", "--max-drop", "0.1", "--quiet") == 1
    seen = layout(page, width, SCREEN, ["#verdict", "#worst-first", "#worse-1"], tmp_path / "p")
    assert seen["width"] <= width  # nothing wider than the window
    text = seen["first_screen"]
    assert "Regression: run B is worse than run A" in text
    assert "Got worse most: s4" in text
    box = seen["elements"]["#worst-first"]
    assert box["visible"] and box["bottom"] <= SCREEN
    folder = Path(os.environ.get("GENIR_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"compare-{width}.png"
    run_chromium(
        tmp_path / "p", f"--screenshot={png}", f"--window-size={width},{SCREEN}", page.as_uri()
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_at_turn_level_each_worse_turn_shows_that_turn(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "compare.html"
    assert _compare(runs, page, "--level", "turn", "--min-sessions", "8", "--quiet") == 0
    text = page.read_text(encoding="utf-8")
    assert "Got worse most: <b>s4#1</b>" in _first_part(page)
    headings = [text.index(f"<h3>{n}. s{i}#1:") for n, i in ((1, 4), (2, 2), (3, 6))]
    assert headings == sorted(headings)
    # one turn each, both runs' answers: six responses
    assert text.count("class='response'") == 6


@pytest.mark.browser
@pytest.mark.parametrize("width", (1280, 800))
@pytest.mark.parametrize(
    ("verdict", "args", "code", "heading"),
    [
        ("pass", ("--min-sessions", "8"), 0, "Pass: no regression of run B against run A"),
        (
            "regression",
            ("--min-sessions", "8", "--max-drop", "0.1"),
            1,
            "Regression: run B is worse than run A",
        ),
        ("too-few", (), 4, "Too few to decide (exit 4): no regression found, but too few pairs"),
    ],
)
def test_the_first_screen_says_the_verdict_in_words(
    runs: dict[str, Path],
    tmp_path: Path,
    width: int,
    verdict: str,
    args: tuple[str, ...],
    code: int,
    heading: str,
) -> None:
    """Each verdict's first screen at 1280 and 800 px: the verdict in words, the rule, the
    session that got worse most (or that none did), at the size of the text around it."""
    page = tmp_path / "compare.html"
    pair = (runs["base"], runs["base"]) if verdict == "pass" else (runs["base"], runs["worse"])
    argv = ["compare", *map(str, pair), "--html", str(page), "--quiet", *args]
    assert main(argv) == code
    wanted = ["#verdict", "#worst-first", "#rule", "#verdict h2"]
    seen = layout(page, width, SCREEN, wanted, tmp_path / "p")
    assert seen["width"] <= width
    text = seen["first_screen"]
    assert heading in text
    assert "Rule: REGRESSION (exit 1) when" in text
    if verdict == "pass":
        assert "No session got worse on satisfaction.urs" in text
    else:
        assert "Got worse most: s4" in text
    for selector in ("#verdict", "#worst-first", "#rule"):
        box = seen["elements"][selector]
        assert box["visible"] and box["bottom"] <= SCREEN, selector
    assert seen["elements"]["#worst-first"]["font_size"] == seen["body_font_size"]
    folder = Path(os.environ.get("GENIR_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"compare-{verdict}-{width}.png"
    run_chromium(
        tmp_path / "p", f"--screenshot={png}", f"--window-size={width},{SCREEN}", page.as_uri()
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
