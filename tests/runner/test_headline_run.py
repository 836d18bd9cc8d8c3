"""What `genir-eval run` leads with when the scenario names no headline, and what its report
card says: the judge with evidence of tracking people leads; the scores of one part of an
answer have their own tables, one per kind of evidence their measure declares (link
usefulness, citation support); a scenario's own headline is kept."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.meta.headline import Figure, figures_for
from genir_eval.report.card import HeadlineCard, card_html, card_lines

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ROOT / "fixtures" / "citation_sessions.jsonl"
LINKS = "Link usefulness: how useful the links each statement cites are"
CITATIONS = "Citation support: does each citation support its statement"


def _run(tmp_path: Path, judges: list[str], headline: str | None = None) -> tuple[Path, str]:
    lines = [
        "version = 1",
        'name = "headline-check"',
        "[input]",
        f'path = "{SESSIONS}"',
        'format = "jsonl"',
        "[engine]",
        "max_missing = 0.2",
        *(f'[[judges]]\nname = "{name}"' for name in judges),
        "[aggregate]",
        'measures = ["sdcg_urge", "citation_precision", "citation_recall"]',
    ]
    if headline:
        lines += ["[meta]", f'headline = "{headline}"']
    scenario = tmp_path / "scenario.toml"
    scenario.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            ["run", str(scenario), "--out", str(out), "--cache", "none", "--journal", "none"]
        )
    assert code == 0, buffer.getvalue()
    return out, buffer.getvalue()


def _block(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def _first_column(block: list[str]) -> set[str]:
    return {line.split()[0].rstrip("*") for line in block[2:] if line.strip()}


def test_the_satisfaction_judge_leads_by_evidence_and_the_parts_stand_apart(
    tmp_path: Path,
) -> None:
    out, text = _run(tmp_path, ["citation_support", "link_usefulness.dna", "satisfaction.geval"])
    info = json.loads((out / "run.json").read_text())
    assert info["headline"] == {
        "score": "satisfaction.geval",
        "chosen_by": "evidence",
        "judge": "satisfaction.geval",
    }
    card = _block(text, "Headline score satisfaction.geval")
    assert "(satisfaction score)" in card[0]
    assert card[1].strip() == "leads because: the judge with measured evidence of tracking people"
    # every stored figure of the judge is printed with its verdict, and its command
    stored = figures_for("satisfaction.geval")
    assert stored and sum("pair agreement" in line or "Spearman" in line for line in card) == len(
        stored
    )
    # a pair agreement whose interval clears 0.5 (decide.relation's words)
    assert any("better than chance" in line and "CrowdRAG" in line for line in card)
    assert "bench/bench_headline.py" in card[-1]
    # each part's measures are in a table of their own kind, the quality table has the judge
    # alone (the fixture's sessions carry satisfaction ratings: tables of correlations):
    # sdcg_urge rests on link usefulness (its measure declares it), not on citation support
    assert _first_column(_block(text, "Session scores vs user")) == {"satisfaction.geval"}
    assert _first_column(_block(text, LINKS)) == {"sdcg_urge"}
    assert _first_column(_block(text, CITATIONS)) == {
        "citation_precision",
        "citation_recall",
        "gold:citation_precision",
        "gold:citation_recall",
    }
    html = (out / "report.html").read_text()
    assert re.search(
        r"id='headline-card' data-score='satisfaction.geval' data-chosen-by='evidence'", html
    )
    assert "<li class='evidence' data-tracks='true'>" in html
    parts = html[html.index("id='answer-parts'") :]
    parts = parts[: parts.index("</section>")]
    assert "Grounding" not in parts
    links = parts[parts.index(LINKS) : parts.index(CITATIONS)]
    citations = parts[parts.index(CITATIONS) :]
    assert "data-score='sdcg_urge'" in links and "citation_" not in links
    for name in ("citation_precision", "citation_recall"):
        assert f"data-score='{name}'" in citations
    assert "data-score='satisfaction.geval'" not in parts


def test_without_a_judge_that_tracks_people_the_card_says_so(tmp_path: Path) -> None:
    out, text = _run(tmp_path, ["citation_support", "link_usefulness.dna"])
    info = json.loads((out / "run.json").read_text())
    assert info["headline"]["chosen_by"] == "no evidence"
    assert info["headline"]["score"] == "sdcg_urge"
    card = _block(text, "Headline score sdcg_urge")
    assert "(link-usefulness score)" in card[0]
    assert card[1].strip() == "leads because: no judge with evidence of tracking people ran"
    assert card[-1].strip() == "no figure shows that this score tracks people"
    html = (out / "report.html").read_text()
    assert "id='headline-no-evidence'" in html


@pytest.mark.parametrize("named", ["citation_precision", "sdcg_urge"])
def test_a_scenarios_own_headline_is_kept(tmp_path: Path, named: str) -> None:
    out, text = _run(
        tmp_path, ["citation_support", "link_usefulness.dna", "satisfaction.geval"], headline=named
    )
    info = json.loads((out / "run.json").read_text())
    assert info["headline"] == {"score": named, "chosen_by": "scenario", "judge": None}
    assert info["scenario"]["meta"]["headline"] == named
    card = _block(text, f"Headline score {named}")
    assert card[1].strip() == "leads because: named by the scenario"
    assert "data-chosen-by='scenario'" in (out / "report.html").read_text()


def _card(judged_by: str, figures: tuple[Figure, ...]) -> HeadlineCard:
    return HeadlineCard(
        "satisfaction.geval", "a rating, 1-10", "evidence", "satisfaction.geval", figures, judged_by
    )


def _figure(judged_by: str) -> Figure:
    return Figure(
        "satisfaction.geval", "pair agreement", "made up", 0.7, (0.6, 0.8), 100, judged_by, "x", "d"
    )


@pytest.mark.parametrize(
    ("judged_by", "figures", "warned"),
    [
        ("offline twin", (_figure("offline twin"),), False),
        ("openai/gpt-4o", (_figure("offline twin"),), True),
        ("openai/local", (_figure("offline twin"), _figure("openai/local (Qwen2.5-1.5B)")), False),
        ("openai/local", (), False),  # nothing measured: said otherwise
    ],
)
def test_the_card_says_when_its_figures_are_of_another_judge(
    judged_by: str, figures: tuple[Figure, ...], warned: bool
) -> None:
    lines = card_lines(_card(judged_by, figures))
    assert (
        any(f"this run's judge ({judged_by}) was not measured" in line for line in lines) is warned
    )
    html = card_html(_card(judged_by, figures), "satisfaction.geval")
    assert ("id='headline-other-judge'" in html) is warned


def test_without_evidence_a_judges_own_score_leads_before_a_measure(tmp_path: Path) -> None:
    out, text = _run(tmp_path, ["citation_support", "link_usefulness.dna", "satisfaction.urs"])
    info = json.loads((out / "run.json").read_text())
    assert info["headline"] == {
        "score": "satisfaction.urs",
        "chosen_by": "no evidence",
        "judge": None,
    }
    card = _block(text, "Headline score satisfaction.urs")
    assert "(satisfaction score)" in card[0]
    # its measured figures are printed, none clearing chance
    assert any("no detectable relation" in line for line in card)
    assert card[-1].strip() == "no figure shows that this score tracks people"
