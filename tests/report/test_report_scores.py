"""Score summaries without gold, evidence rows, the response view and CSV cells."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from genir_eval.judges.base import Label
from genir_eval.llm.providers.base import JudgmentKey
from genir_eval.records import Gold, Link, Segment, Session, Statement, Turn
from genir_eval.report.evidence import evidence_rows, judgment_reason, read_evidence
from genir_eval.report.html import render_report
from genir_eval.report.scores import SMALL_N, missing_reasons, summarize
from genir_eval.report.turns import choose_sessions, response_html
from genir_eval.report.views import ReportContext, ReportLimits, fmt
from genir_eval.rundir.folder import (
    LinkRow,
    SessionRow,
    TurnRow,
    csv_cell,
    load_run,
    write_run,
)


def test_small_samples_get_no_interval() -> None:
    # five equal values: a bootstrap would say [1.00, 1.00]; the summary says n < 10
    summary = summarize("s", [1.0] * 5 + [None])
    assert summary.n == 5 and summary.missing == 1 and summary.small
    assert summary.ci is None and summary.mean == 1.0
    assert summarize("s", [float(i) for i in range(SMALL_N - 1)]).ci is None


def test_values_equal_up_to_float_noise_have_no_spread() -> None:
    values = [0.1 + 0.2, 0.3] * 10  # 0.30000000000000004 and 0.3
    summary = summarize("s", values)
    assert summary.ci is None and summary.histogram == (20,)


def test_interval_mean_median_histogram() -> None:
    values = [float(v) for v in (1, 2, 2, 3, 3, 3, 4, 4, 5, 9)]  # computed by hand below
    summary = summarize("s", values, n_boot=2000, seed=1)
    assert summary.mean == pytest.approx(3.6, abs=1e-12)
    assert summary.median == pytest.approx(3.0, abs=1e-12)
    assert sum(summary.histogram) == 10 and summary.histogram[0] == 1  # one value in [1, 1.8)
    assert summary.ci is not None and summary.ci_method == "bootstrap"
    lo, hi = summary.ci
    # the bootstrap interval of a mean is close to mean +- 1.96 s / sqrt(n) (s = 2.27)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
    assert lo == pytest.approx(3.6 - half, abs=0.35) and hi == pytest.approx(3.6 + half, abs=0.35)


def test_large_samples_use_the_normal_interval() -> None:
    values = [float(i % 7) for i in range(30_000)]
    summary = summarize("s", values)
    assert summary.ci_method == "normal"
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
    assert summary.ci == pytest.approx((summary.mean - half, summary.mean + half), abs=1e-9)


def test_no_negative_zero_and_no_float_noise() -> None:
    assert fmt(-0.0001) == "0.000" and fmt(-0.0) == "0.000" and fmt(-0.25) == "-0.250"
    # the CSV writer prints a float's repr: these are the texts written
    assert repr(csv_cell(0.1 + 0.2)) == "0.3"
    assert repr(csv_cell(-0.0)) == "0.0"
    assert repr(csv_cell(2.0549999999999997)) == "2.055"
    assert csv_cell(float("nan")) is None and csv_cell(None) is None
    assert csv_cell(3) == 3 and csv_cell("x") == "x" and csv_cell("-x") == "'-x"


def _session() -> Session:
    text = "Servers host sites. They store data. Plain ending."
    turn = Turn(
        index=1,
        query="how do servers work?",
        response_text=text,
        statements=(
            Statement("Servers host sites.", (1, 2)),
            Statement("They store data.", (2,)),
            Statement("Plain ending.", ()),
        ),
        links=(Link(1, "https://a.example", "A <b>"), Link(2, "https://b.example", "B")),
        segments=(Segment("Servers host sites.", 0, 19), Segment("They store data.", 20, 36)),
    )
    gold = Gold(useful_spans_user=(("They store data.",),))
    return Session("s<1>", (turn,), gold=gold)


def _key(item: str, turn: int | None = 1) -> JudgmentKey:
    return JudgmentKey("s<1>", turn, item, "judge", "v1")


def test_evidence_rows_keep_reasons_raw_replies_and_spans(tmp_path: Path) -> None:
    session = _session()
    labels = {
        "link_usefulness.true": [
            Label(_key("link:1"), 3, raw='{"reasoning": "on topic", "label": 3}'),
            Label(_key("link:2"), None, missing_reason="permanent: HTTP 400"),
        ],
        "spans": [Label(_key("spans"), [0], raw='{"useful_segments": [0]}')],
        "satisfaction.urs": [
            Label(_key("satisfaction", None), 7, raw='{"session": {"critique": "fine"}}'),
            Label(_key("turn"), 6, raw='{"session": {"critique": "fine"}}'),
        ],
    }
    rows = evidence_rows(session, labels, spans_judges=["spans"])
    assert [r["turn"] for r in rows] == [1, None]
    turn = rows[0]
    assert turn["spans"] == {"gold:user": [1], "spans": [0]}
    assert turn["statements"][0] == ["Servers host sites.", [1, 2]]
    by_item = {j["item"]: j for j in turn["judgments"]}
    assert by_item["link:1"]["reason"] == "on topic" and by_item["link:1"]["value"] == 3
    assert by_item["link:2"]["value"] is None
    assert by_item["link:2"]["missing_reason"] == "permanent: HTTP 400"
    assert rows[1]["judgments"][0]["reason"] == "fine"
    # the session's reply, which also labels the turn, is kept once: with the session
    assert by_item["turn"]["raw"] is None and by_item["turn"]["raw_with_session"]
    assert rows[1]["judgments"][0]["raw"] == '{"session": {"critique": "fine"}}'
    # written and read back, only for the sessions asked for
    path = tmp_path / "evidence.jsonl"
    other = {**turn, "session_id": "other"}
    path.write_text("".join(json.dumps(r) + "\n" for r in [other, *rows]), encoding="utf-8")
    read = read_evidence(path, {"s<1>"})
    assert set(read) == {("s<1>", 1), ("s<1>", None)}
    assert read[("s<1>", 1)].spans["gold:user"] == (1,)


def test_reason_is_none_when_the_reply_gives_none() -> None:
    assert judgment_reason(Label(_key("link:1"), 2, raw='{"M": 2, "T": 3, "O": 2}')) is None
    assert judgment_reason(Label(_key("link:1"), 2, raw="not json")) is None


def test_response_view_places_markers_and_highlights_escaped() -> None:
    session = _session()
    turn = session.turns[0]
    html = response_html(
        turn.response_text + " <script>x</script>",
        [(s.text, s.citations) for s in turn.statements] + [("missing", (3,))],
        [(0, 19), (20, 36)],
        {"pred": {0}, "g-user": {1}},
        "t-0-1",
        {1, 2},
    )
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("script") is None and "<script>x</script>" in soup.get_text()
    markers = [(a.get_text(), a["href"]) for a in soup.select("a.cite")]
    assert markers == [("[1]", "#t-0-1-src-1"), ("[2]", "#t-0-1-src-2"), ("[2]", "#t-0-1-src-2")]
    assert soup.select_one(".pred").get_text() == "Servers host sites."
    assert soup.select_one(".g-user").get_text() == "They store data."
    # a citation of a source the turn does not list is shown, flagged, not linked
    assert soup.select_one("span.cite.bad").get_text() == "[3]"
    # the first marker follows its statement directly
    assert "Servers host sites.[1][2]" in soup.get_text()


def _big_run(tmp_path: Path, n: int) -> Path:
    sessions, turns, links = [], [], []
    for i in range(n):
        sid = f"s{i}"
        score = None if i % 10 == 0 else float(i % 97)
        sessions.append(SessionRow(sid, "QA", 1, {"sdcg_urge": score}))
        turns.append(TurnRow(sid, 1, "q", "answer [1]", "QA", {"sdcg_urge": score}))
        cited = i % 10 != 0
        links.append(
            LinkRow(
                sid,
                1,
                1,
                "https://x.example",
                cited=cited,
                labels={"a": float(i % 4), "b": float((i * 7) % 4)},
            )
        )
    info = {
        "version": 1,
        "scenario": {
            "name": "big",
            "meta": {"headline": "sdcg_urge"},
            "document": {"aggregate": {"measures": ["sdcg_urge"], "link_judges": ["a", "b"]}},
        },
        "judges": [
            {"id": "a", "kind": "link_usefulness", "provider": "offline"},
            {"id": "b", "kind": "link_usefulness", "provider": "openai"},
        ],
    }
    return write_run(
        tmp_path / "big", links=links, turns=turns, sessions=sessions, meta=None, info=info
    )


def test_large_runs_cap_the_index_and_the_details(tmp_path: Path) -> None:
    run = load_run(_big_run(tmp_path, 700))
    limits = ReportLimits(index_rows=300, index_page=100, detail_sessions=12, n_boot=200)
    chosen = choose_sessions(ReportContext(run, limits))
    assert len(chosen.positions) == 12 and not chosen.complete
    reasons = {why for whys in chosen.why.values() for why in whys}
    assert any(r.startswith("lowest") for r in reasons)
    assert any(r.startswith("highest") for r in reasons)
    assert any(r.startswith("judges disagree") for r in reasons)
    soup = BeautifulSoup(render_report(run, limits=limits), "html.parser")
    assert len(soup.select("table.session-index tr")) == 300 + 3  # 3 pages, a header each
    assert len(soup.select("details.page")) == 3
    assert "sessions.csv" in soup.find(id="session-index").get_text()
    assert len(soup.select("section.session")) == 12
    # sessions without citations are counted as missing, with the reason
    reasons_row = soup.select_one("#scores-session tr[data-score='sdcg_urge']").get_text()
    assert "70 no citations" in reasons_row


def test_missing_reasons_name_the_judges_failure(tmp_path: Path) -> None:
    directory = _big_run(tmp_path, 20)
    run = load_run(directory)
    info = {
        **run.info,
        "failures": [{"judge": "a", "session_id": "s3", "turn": 1, "reason": "permanent: 401"}],
        # as a run records them: a's one missing label of 40, under the 5% allowed
        "judges": [
            {**run.info["judges"][0], "labels": 40, "missing": 1},
            {**run.info["judges"][1], "labels": 40, "missing": 0},
        ],
        "status": {"ok": True, "reasons": [], "max_missing": 0.05, "allow_permanent": False},
    }
    links = [
        LinkRow(
            link.session_id,
            link.turn,
            link.link_id,
            link.url,
            cited=link.cited,
            labels={**link.labels, "a": None} if link.session_id == "s3" else link.labels,
        )
        for link in run.links
    ]
    sessions = [
        SessionRow(r.session_id, r.task_type, r.n_turns, {"sdcg_urge": None})
        if r.session_id == "s3"
        else r
        for r in run.sessions
    ]
    write_run(directory, links=links, turns=run.turns, sessions=sessions, meta=None, info=info)
    reasons = missing_reasons(load_run(directory))["sdcg_urge"]
    assert reasons == {"no citations": 2, "a failed (permanent)": 1}


def test_csv_files_have_no_float_noise(tmp_path: Path) -> None:
    scores = {"a": 0.1 + 0.2, "b": -0.0, "c": -1e-12 * 0.0, "d": 2.0549999999999997}
    directory = write_run(
        tmp_path / "run",
        links=[],
        turns=[TurnRow("s", 1, scores=scores)],
        sessions=[SessionRow("s", n_turns=1, scores=scores)],
        meta=None,
        info={"version": 1},
    )
    for name in ("sessions.csv", "turns.csv"):
        text = (directory / name).read_text(encoding="utf-8")
        row = text.splitlines()[1]
        assert "0.30000000000000004" not in text and "-0.0" not in text
        assert ",0.3,0.0,0.0,2.055" in row, row


def test_failure_index_gives_each_sessions_and_turns_most_frequent_reason(
    tmp_path: Path,
) -> None:
    # cases (by hand): s1 two timeouts and one 401 -> timeout; s1 turn 2 one 401 -> 401;
    # a tie in s2 (one each) -> the reason the run met first; judge b and s9 have none
    from genir_eval.report.scores import FailureIndex
    from genir_eval.rundir.folder import Run

    failures = [
        {"judge": "a", "session_id": "s2", "turn": 1, "reason": "parse: no JSON"},
        {"judge": "a", "session_id": "s1", "turn": 1, "reason": "timeout: 30 s"},
        {"judge": "a", "session_id": "s1", "turn": 1, "reason": "timeout: 30 s"},
        {"judge": "a", "session_id": "s1", "turn": 2, "reason": "permanent: 401"},
        {"judge": "a", "session_id": "s2", "turn": 1, "reason": "timeout: 30 s"},
    ]
    run = Run(directory=tmp_path, meta=None, info={"failures": failures})
    index = FailureIndex(run, "turn")
    assert index.reason("a", "s1") == "timeout"
    assert index.reason("a", "s1", 1) == "timeout"
    assert index.reason("a", "s1", 2) == "permanent"
    assert index.reason("a", "s2") == "parse"
    assert index.reason("b", "s1") is None and index.reason("a", "s9") is None
    assert index.reason("a", "s1", 3) is None
    assert FailureIndex(run, "session").reason("a", "s1", 2) is None  # turns not indexed
