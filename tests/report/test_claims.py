"""A claims checker: every sentence a page says about a run is tied to the run's own tables.

For the shipped offline scenarios and a matrix of judge sets (each judge kind alone and in
pairs, with and without the users' ratings, with thumbs, with annotators' labels, a failed
run), the run is made once, then the terminal summary, ``report.html``, ``genir-eval
failures`` and ``compare`` (text, markdown, ``--html``) are read and each claim of these
kinds is checked against the tables (``run.json``, ``meta.json``, ``evidence.jsonl``):

- the kind of evidence a named score rests on (the headline card's ``(link-usefulness
  score)``, a next step's ``X is a ... score: it says ...``, each table and section of one
  part of an answer, compare's ``X is a ...``) is what the score's measure or judge kind
  declares (:func:`~genir_eval.report.card.score_evidence`), and "grounding" is never said;
- a quoted reason (the worst-first lists, compare's two columns) is one the judge whose
  labels the score comes from stated for that session, in ``evidence.jsonl``;
- a denominator (the banner's and ``failures``' per-judge shares) is ``run.json``'s;
- an interval is printed only at n >= ``decide.MIN_N``, and each verdict line's figure and
  n are ``meta.json``'s; "no users' ratings" is said only of a run without ratings or
  thumbs; "In short" repeats the verdict's first line of this run.

A claim of these kinds the checker cannot tie to a table fails the test. Runs are offline
(seconds each) and shared by module fixtures: the whole file is bounded by the matrix.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from genir_eval.cli import main
from genir_eval.meta.decide import MIN_N
from genir_eval.records import EVIDENCE_KINDS
from genir_eval.report.card import score_evidence, score_kind_words
from genir_eval.report.evidence import read_evidence
from genir_eval.report.glossary import describe_score
from genir_eval.report.verdict import run_verdict
from genir_eval.rundir.folder import EVIDENCE_FILE, Run, load_run

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
DEMO = FIXTURES / "demo_sessions.csv"  # users' ratings, annotators' link labels and spans
CITED = FIXTURES / "citation_sessions.jsonl"  # gold support labels
THUMBS = FIXTURES / "product_feedback.md"  # thumbs, no ratings
PLAIN = FIXTURES / "product_logs.md"  # no ratings, no thumbs

SCENARIOS = (
    "demo-offline",
    "demo-citations",
    "demo-nuggets",
    "product-offline",
    "product-feedback",
    "urge-offline",
)
#: Runs whose headline's judge states reasons: their worst lists quote them (terminal, html).
QUOTING = (
    "demo-offline",
    "demo-citations",
    "product-feedback",
    "urge-offline",
    "links",
    "satisfaction",
)

#: (name, input, its format, judges, link judges, measures, extra command-line arguments)
MATRIX: list[tuple[str, Path, str, tuple[str, ...], tuple[str, ...], str]] = [
    ("links", DEMO, "urge", ("link_usefulness.dna",), ("sdcg_urge", "decreasing"), ""),
    ("spans", DEMO, "urge", ("spans",), (), ""),
    ("satisfaction", DEMO, "urge", ("satisfaction.urs",), (), ""),
    ("links+sat", DEMO, "urge", ("link_usefulness.true", "satisfaction.geval"), ("sdcg_urge",), ""),
    ("spans+sat-thumbs", THUMBS, "markdown", ("spans", "satisfaction.urs"), (), ""),
    ("links-plain", PLAIN, "markdown", ("link_usefulness.dna",), ("sdcg_urge",), ""),
    ("citations", CITED, "jsonl", ("citation_support",), ("citation_precision",), ""),
    (
        "citations+links",
        CITED,
        "jsonl",
        ("citation_support", "link_usefulness.dna"),
        ("sdcg_urge", "citation_recall"),
        "",
    ),
    # a failed run: the citation judge misses 1 of its 17 labels, over max_missing 0.01
    ("failed", CITED, "jsonl", ("citation_support",), ("citation_precision",), "0.01"),
]


@dataclass(frozen=True)
class Outputs:
    name: str
    run: Run
    terminal: str
    html: str
    failures: str
    code: int


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _matrix_scenario(folder: Path, row: tuple[Any, ...]) -> Path:
    name, path, form, judges, measures, max_missing = row
    lines = [
        "version = 1",
        f'name = "{name}"',
        "[input]",
        f'path = "{path}"',
        f'format = "{form}"',
        "[engine]",
        'cache = "none"',
    ]
    if max_missing:
        lines.append(f"max_missing = {max_missing}")
    for judge in judges:
        lines += ["[[judges]]", f'name = "{judge}"']
    if measures:
        lines += ["[aggregate]", f"measures = {list(measures)!r}".replace("'", '"'), "gold = true"]
    lines += ["[meta]", "enabled = true", "n_boot = 200", "seed = 0"]
    scenario = folder / f"{name}.toml"
    scenario.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return scenario


def _outputs(name: str, scenario: Path, out: Path) -> Outputs:
    code, terminal, err = _cli("run", str(scenario), "--out", str(out), "--cache", "none")
    assert code in (0, 3), err  # 3: the failed run of the matrix
    run = load_run(out)
    _, failures, _ = _cli("failures", str(out))
    html = (out / "report.html").read_text(encoding="utf-8")
    return Outputs(name, run, terminal, html, failures, code)


@pytest.fixture(scope="module", params=SCENARIOS + tuple(row[0] for row in MATRIX))
def outputs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    if request.param == "urge-offline":
        request.getfixturevalue("urge_sample_path")  # the shared URGE sample, or a skip
    folder = tmp_path_factory.mktemp(f"claims-{request.param}")
    if request.param in SCENARIOS:
        scenario = ROOT / "scenarios" / f"{request.param}.toml"
    else:
        row = next(r for r in MATRIX if r[0] == request.param)
        scenario = _matrix_scenario(folder, row)
    return _outputs(request.param, scenario, folder / "run")


# --- the kind of evidence of a named score ------------------------------------------------

_CARD = re.compile(r"^Headline score (\S+?)\*? \((.+?)\): ", re.M)
_STEP = re.compile(r"^  \d+\. (\S+) is (a [^:]+): it says (.+), not whether people like", re.M)


def _declared(run: Run, score: str) -> str:
    return score_kind_words(score_evidence(run, score))


def test_every_named_kind_of_score_is_its_declaration(outputs: Outputs) -> None:
    run, text, html = outputs.run, outputs.terminal, outputs.html
    for page in (text, html):
        assert "grounding score" not in page.lower() and "Grounding:" not in page
    for score, kind in _CARD.findall(text):
        assert f"a {kind}" == _declared(run, score) or kind == _declared(run, score)[2:], score
    for score, kind, says in _STEP.findall(text):
        evidence = score_evidence(run, score)
        assert evidence is not None and kind == f"a {evidence.noun}" and says == evidence.says
    # the terminal's tables of one part of an answer: every row's score is of that kind
    lines = text.splitlines()
    for at, line in enumerate(lines):
        for kind in EVIDENCE_KINDS.values():
            if line.startswith(kind.title):
                for row in lines[at + 2 :]:
                    if not row.startswith("  "):
                        break
                    score = re.split(r"\s{2,}", row.strip())[0].rstrip("*")
                    assert score_evidence(run, score) == kind, (line, score)
    # report.html's sections of one part of an answer: each card under its kind's heading
    soup = BeautifulSoup(html, "html.parser")
    for heading in soup.select("h3.evidence-kind"):
        kind = EVIDENCE_KINDS[heading["data-evidence"]]
        assert heading.get_text() == kind.title
        cards = heading.find_next_sibling("div", class_="cards")
        for card in cards.select("[data-score]"):
            assert score_evidence(run, card["data-score"]) == kind, card["data-score"]
    # the glossary names each score's kind of evidence as declared
    for term in soup.select("#glossary-list dt"):
        score = term["id"].removeprefix("g-")
        assert f"({_declared(run, score)}" in term.get_text(), score
    card = soup.select_one("#headline-card")
    if card is not None:
        score = card["data-score"]
        evidence = score_evidence(run, score)
        what = evidence.noun if evidence is not None else "score whose kind of evidence"
        assert f"({what}" in card.get_text(), score


# --- quoted reasons ----------------------------------------------------------------------

_WORST = re.compile(r"^  (\S+): (\S+) (-?[\d.]+)(?:, users [\d.]+)? \((\S+) gave (\S+): (.+)\)$")


def _stated(run: Run, session: str, judge: str) -> list[str]:
    found = read_evidence(run.directory / EVIDENCE_FILE, {session})
    return [
        " ".join(j.reason.split())
        for evidence in found.values()
        for j in evidence.judgments
        if j.judge == judge and j.reason
    ]


def _tied(reason: str, stated: list[str]) -> bool:
    reason = reason.removesuffix("…")
    return any(text.startswith(reason) for text in stated)


def test_every_quoted_reason_is_from_the_judge_of_its_score(outputs: Outputs) -> None:
    run, text = outputs.run, outputs.terminal
    start = text.find("Worst first")
    quoted = 0
    for line in text[start:].splitlines()[1:] if start >= 0 else []:
        if not line.startswith("  "):
            break
        match = _WORST.match(line)
        if match is None:
            continue
        session, score, _, judge, _, reason = match.groups()
        assert judge in describe_score(score, run).judges, line
        assert _tied(reason, _stated(run, session, judge)), line
        quoted += 1
    soup = BeautifulSoup(outputs.html, "html.parser")
    for item in soup.select("#worst-sessions li, #worst-disputed li"):
        reason = item.select_one(".reason")
        if reason is None:
            continue
        judge, _, said = reason.get_text().partition(" gave ")
        session = item.find("a").get_text()
        score = item.get_text().split(": ", 1)[1].split(" ", 1)[0]
        assert judge in describe_score(score, run).judges, item.get_text()
        assert _tied(said.split(": ", 1)[1], _stated(run, session, judge))
        quoted += 1
    if outputs.name in QUOTING:  # their judges state reasons: the checker read some
        assert quoted >= 2 * 3, outputs.name


# --- denominators ------------------------------------------------------------------------


def _shares(run: Run) -> dict[str, tuple[int, int]]:
    return {
        str(j["id"]): (int(j.get("missing") or 0), int(j.get("labels") or 0))
        for j in run.info.get("judges") or []
    }


def test_every_missing_share_is_per_judge_as_run_json_counts_it(outputs: Outputs) -> None:
    shares = _shares(outputs.run)
    banner = BeautifulSoup(outputs.html, "html.parser").select_one("#run-failed, #run-partial")
    claims = re.findall(
        r"(\S+) ([\d,]+) of ([\d,]+) \(([\d.]+)%\)", banner.get_text() if banner else ""
    )
    claims += re.findall(r"^  (\S+): ([\d,]+) of ([\d,]+) \(([\d.]+)%\)$", outputs.failures, re.M)
    missing = sum(m for m, _ in shares.values())
    assert bool(banner) == bool(missing or outputs.code == 3)
    for judge, m, of, percent in claims:
        judge = judge.rstrip(":")
        assert shares[judge] == (int(m.replace(",", "")), int(of.replace(",", ""))), judge
        assert float(percent) == pytest.approx(100 * shares[judge][0] / shares[judge][1], abs=0.05)
    if missing:
        assert claims, "the missing share is stated per judge"
    assert (outputs.code == 3) == (outputs.run.info["status"]["ok"] is False)


# --- intervals, n, verdict figures ---------------------------------------------------------

_FIGURE = re.compile(r"(-?\d\.\d{3})( \[-?\d\.\d\d, -?\d\.\d\d\])? \(n = (\d+)")


def _entries(run: Run) -> list[Mapping[str, Any]]:
    meta = run.meta or {}
    found = [
        entry
        for level in (meta.get("correlations") or {}).values()
        for entry in (level or {}).values()
    ]
    return found + list(((meta.get("feedback") or {}).get("turn") or {}).values())


def test_no_interval_below_the_minimum_n_and_each_figure_is_meta_json(outputs: Outputs) -> None:
    run, text = outputs.run, outputs.terminal
    for entry in _entries(run):
        if isinstance(entry.get("n"), int) and entry["n"] < MIN_N:
            assert all(v is None for v in (entry.get("ci95") or {}).values()), entry
    verdict = run_verdict(run)
    meta = run.meta or {}
    for decision in verdict.decisions:
        line = decision.text()
        assert line in text, line  # the terminal prints the same words
        for _value, interval, n in _FIGURE.findall(decision.figure):
            assert (int(n) >= MIN_N) == bool(interval), line
        subject = decision.subject
        match = re.match(
            r"(?:headline )?(\S+) vs the users' (session|query) satisfaction$", subject
        )
        if match and "measured before" not in subject:
            level = "session" if match.group(2) == "session" else "turn"
            entry = meta["correlations"][level][match.group(1)]
            assert f"rho {entry['spearman']:.3f}" in line or f"{entry['spearman']:.3f}" in line
            assert f"n = {entry['n']}" in line
        match = re.match(r"(?:headline )?(\S+) vs the users' thumbs$", subject)
        if match:
            entry = meta["feedback"]["turn"][match.group(1)]
            assert f"AUC {entry['auc']:.3f}" in line and f"(n = {entry['n']})" in line
    rated = bool(meta.get("correlations")) or bool((meta.get("feedback") or {}).get("turn"))
    for page in (text, outputs.html):
        if "no users' ratings in the input" in page or "No user satisfaction in the input" in page:
            assert not rated, outputs.name
    soup = BeautifulSoup(outputs.html, "html.parser")
    lede = soup.select_one("#verdict-lede")
    here = [d for d in verdict.decisions if "measured before" not in d.subject]
    if here:
        first = here[0]
        assert lede is not None
        assert lede.get_text().startswith(f"In short: {first.subject}: {first.verdict.words}")


# --- compare: text, markdown and its page ----------------------------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """demo-offline twice: sdcg_urge from link_usefulness.dna's labels (A), then from
    link_usefulness.true's (B)."""
    folder = tmp_path_factory.mktemp("claims-pair")
    runs = []
    for first, second in (("dna", "true"), ("true", "dna")):
        text = (ROOT / "scenarios" / "demo-offline.toml").read_text(encoding="utf-8")
        text = text.replace('"../fixtures/', f'"{FIXTURES}/')
        text = re.sub(
            r"link_judges = \[.*\]",
            f'link_judges = ["link_usefulness.{first}", "link_usefulness.{second}"]',
            text,
        )
        scenario = folder / f"{first}.toml"
        scenario.write_text(text, encoding="utf-8")
        out = folder / first
        code, _, err = _cli("run", str(scenario), "--out", str(out), "--quiet", "--cache", "none")
        assert code == 0, err
        runs.append(out)
    return runs[0], runs[1]


@pytest.mark.parametrize("metric", ["sdcg_urge", "satisfaction.urs", "decreasing", "spans"])
def test_compare_says_each_scores_kind_and_quotes_each_runs_judge(
    pair: tuple[Path, Path], tmp_path: Path, metric: str
) -> None:
    a, b = pair
    base = ["compare", str(a), str(b), "--metric", metric, "--min-sessions", "2", "--worst", "8"]
    code, text, _ = _cli(*base)
    run_a, run_b = load_run(a), load_run(b)
    evidence = score_evidence(run_b, metric)
    says = f": it says {evidence.says}" if evidence is not None else ""
    assert f"{metric} is {score_kind_words(evidence)}{says}" in text.splitlines()
    markdown_code, markdown, _ = _cli(*base, "--format", "markdown")
    assert f"- {metric} is {score_kind_words(evidence)}{says}" in markdown.splitlines()
    page = tmp_path / "compare.html"
    html_code, _, _ = _cli(*base, "--html", str(page))
    assert code == markdown_code == html_code
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    kind = soup.select_one("#comparisons .evidence-kind")
    assert kind is not None and kind.get_text() == f"({score_kind_words(evidence)})"
    for column in soup.select("div.session div.side > div[data-judges]"):
        label = column.find("h4").get_text().split()[1]
        run = run_a if label == "A" else run_b
        makers = set(describe_score(metric, run).judges)
        assert set(column["data-judges"].split()) == makers
        for item in column.select("li.jd"):
            judge = item.find("b").get_text()
            assert judge in makers, (label, judge)


# --- the arena page ----------------------------------------------------------------------------


def _answers(sid: str, query: str, cited: int) -> dict[str, Any]:
    lines = [f"point {k} about {query}" for k in range(cited)]
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
                    for i in range(1, cited + 1)
                ],
            }
        ],
    }


def test_the_arena_page_says_what_its_pairs_hold(tmp_path: Path) -> None:
    """The arena's first screen (systems, pairs, queries, who ranks first with what) and
    every quoted example reason, against its own pairs.jsonl and arena.json."""
    import json

    files = []
    for name, cited in (("big", 4), ("mid", 2), ("small", 1)):
        path = tmp_path / f"{name}.jsonl"
        rows = [_answers(f"s{i}", f"query {i} of {name}", cited) for i in range(6)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        files.append(str(path))
    out = tmp_path / "arena"
    code, _, err = _cli("arena", *files, "--out", str(out), "--cache", "none", "--quiet")
    assert code == 0, err
    pairs = [
        json.loads(line) for line in (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    document = json.loads((out / "arena.json").read_text(encoding="utf-8"))
    soup = BeautifulSoup((out / "report.html").read_text(encoding="utf-8"), "html.parser")
    text = " ".join(soup.get_text(" ").split())
    judged = [p for p in pairs if p.get("winner") is not None]
    queries = {(p["session_id"], p["turn"]) for p in pairs}
    systems = {p["a"] for p in pairs} | {p["b"] for p in pairs}
    assert f"{len(systems)} systems, {len(judged)} pairs judged on {len(queries)} queries" in text
    missing = len(pairs) - len(judged)
    ties = sum(p["winner"] == "tie" for p in judged)
    assert f"{len(judged)} judged, {missing} missing, {ties} ties" in text
    leader = max(document["systems"], key=lambda s: s["score"])
    assert f"Ranked first: {leader['name']} , Bradley–Terry score {leader['score']:.1f}" in text
    wins = sum(
        (p["winner"] == "a" and p["a"] == leader["name"])
        or (p["winner"] == "b" and p["b"] == leader["name"])
        for p in judged
    )
    assert leader["wins"] == wins
    quoted = soup.select("ol.examples li")
    assert quoted
    for item in quoted:
        session = item.find("b").get_text()
        winner = item.find_all("b")[1].get_text()
        reason = item.select_one(".reason").get_text()
        assert any(
            p["session_id"] == session
            and reason == " ".join(str(p["reason"]).split())
            and winner in (p["a"], p["b"])
            for p in judged
        ), item.get_text()
