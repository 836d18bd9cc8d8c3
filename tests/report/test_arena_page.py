"""The arena's report page: what was judged, by which judge, when and how, first; every figure
with its 95% interval; names and reasons escaped; and at 1280 and 800 px in headless Chromium
(``browser.py``), the first screen names the system ranked first.

The arena runs offline (the pairwise judge's twin, which prefers the answer citing more
distinct sources) on three systems answering six queries with 4, 2 and 1 cited sources; one
system's name and every query carry HTML-special characters."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from browser import layout, run_chromium

from genir_eval.cli import main

SCREEN = 800
QUERIES = [(f"s{i}", f"query <{i}> & more") for i in range(6)]


def _session(sid: str, query: str, n: int) -> dict[str, object]:
    lines = [f"point {k} about {query}" for k in range(n)]
    return {
        "version": 1,
        "session_id": sid,
        "language": "en",
        "turns": [
            {
                "index": 1,
                "query": query,
                "response_text": "\n".join(f"{line} [{i}]" for i, line in enumerate(lines, 1)),
                "links": [
                    {"id": i, "url": f"https://e.org/{sid}/{i}", "title": f"t{i}", "text": "x"}
                    for i in range(1, n + 1)
                ],
            }
        ],
    }


def _arena(folder: Path, *extra: str) -> Path:
    for name, n in (("big", 4), ("mid", 2), ("small", 1)):
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(_session(s, q, n)) + "\n" for s, q in QUERIES), encoding="utf-8"
        )
    gold = [
        {
            "session": s,
            "turn": 1,
            "system_a": "big",
            "system_b": "small",
            "winner": "b" if i else "a",
        }
        for i, (s, _) in enumerate(QUERIES)
    ]
    (folder / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold), "utf-8")
    out = folder / "arena"
    files = [
        str(folder / "big.jsonl"),
        f"mid<b>={folder / 'mid.jsonl'}",
        str(folder / "small.jsonl"),
    ]
    command = ["arena", *files, "--out", str(out), "--cache", "none", "--quiet"]
    assert main([*command, "--resamples", "50", "--gold", str(folder / "gold.jsonl"), *extra]) in (
        0,
        1,
    )
    return out / "report.html"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _arena(tmp_path_factory.mktemp("arena-page"))


def test_the_page_opens_with_what_was_judged_by_whom_and_when(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    first = text[: text.index("<h2 id='ranking'>")]
    assert "3 systems, 18 pairs judged on 6 queries" in first
    assert "offline twin" in first and "baseline" in first
    assert re.search(r"started \d{4}-\d\d-\d\dT", first)
    assert "Ranked first: <b>big</b>" in first
    for option in ("--match session", "--seed 0", "--resamples 50", "--gold "):
        assert option in first, option
    # the style sheet is the run report's
    from genir_eval.report.html import CSS

    assert CSS in text


def test_every_figure_has_its_interval(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    ranking = text[
        text.index("id='ranking-table'") : text.index("</table>", text.index("id='ranking-table'"))
    ]
    rows = ranking.split("<tr>")[2:]
    assert len(rows) == 3
    interval = r"-?\d+\.\d+ \[-?\d+\.\d+, -?\d+\.\d+\]"
    for row in rows:
        assert len(re.findall(interval, row)) == 2, row  # the score and the win rate
    style = text[
        text.index("id='style-scores'") : text.index("</table>", text.index("id='style-scores'"))
    ]
    assert len(re.findall(interval, style)) == 3
    assert "no interval" not in text
    # agreement with people: 5 of 6 gold pairs say small won; the twin prefers big in all 6:
    # it agrees on 1 of 6, Wilson [0.030, 0.564] (by hand: centre 0.29678, half 0.26673)
    agreement = text[text.index("id='gold-agreement'") :].split("</li>")[0]
    assert "0.167 [0.030, 0.564] over n = 6" in agreement


def test_names_and_reasons_are_escaped_and_examples_shown(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "mid&lt;b&gt;" in text and "mid<b>" not in text
    examples = text[text.index("<h2 id='examples'>") :]
    assert examples.count("<h3>") == 3  # one block per pair of systems
    assert 3 <= examples.count("<li>") <= 6
    assert "class='reason'" in examples


def test_the_gate_comes_first(tmp_path: Path) -> None:
    page = _arena(tmp_path, "--min-win-rate", "0.5", "--baseline", "big")
    text = page.read_text(encoding="utf-8")
    first = text[: text.index("<h2 id='ranking'>")]
    assert "Pairwise gate: regression" in first
    assert "significantly below the threshold" in first


@pytest.mark.browser
@pytest.mark.parametrize("width", (1280, 800))
def test_the_first_screen_names_the_leader_and_the_judge(
    page: Path, tmp_path: Path, width: int
) -> None:
    seen = layout(page, width, SCREEN, ["#verdict-line", "#offline-twin"], tmp_path / "p")
    assert seen["width"] <= width
    text = seen["first_screen"]
    assert "Ranked first: big" in text and "win rate" in text
    assert "offline twin" in text and "not a judgment of quality" in text
    box = seen["elements"]["#verdict-line"]
    assert box["visible"] and box["bottom"] <= SCREEN
    folder = Path(os.environ.get("GENIR_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"arena-{width}.png"
    run_chromium(
        tmp_path / "p", f"--screenshot={png}", f"--window-size={width},{SCREEN}", page.as_uri()
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
