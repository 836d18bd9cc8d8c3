"""The CrowdRAG converter (``genir-eval parse DIR --format crowdrag``) and the canonical
preferences file it writes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.errors import InputError
from genir_eval.ingest import load_sessions
from genir_eval.ingest.crowdrag import convert_crowdrag, read_crowdrag
from genir_eval.ingest.preferences import read_preferences
from genir_eval.ingest.response import Citation, build_response

CROWDRAG = Path(__file__).resolve().parents[3] / "shared" / "crowdrag"

PASSAGES = [
    {"index": 0, "id": "doc-a#0", "text": "Servers host websites for many users."},
    {"index": 1, "id": "doc-b#1", "text": "A server stores files and databases."},
    {"index": 2, "id": "doc-c#2", "text": "Clients send requests to servers."},
]


def _gold(overall: str, other: str = "n") -> dict[str, str]:
    row = {
        f"{d}_gold": other
        for d in (
            "correctness_topical",
            "coherence_logical",
            "coherence_stylistic",
            "coverage_broad",
            "coverage_deep",
            "consistency_internal",
        )
    }
    row["quality_overall_gold"] = overall
    return row


def _folder(tmp_path: Path, ratings: list[dict] | None = None) -> Path:
    folder = tmp_path / "crowdrag"
    folder.mkdir()
    answers = [
        ("r1", "llm", "bullet", "Servers host websites [0, 1]. Clients ask them [ 2]."),
        ("r2", "human", "essay", "A server stores files [1]. It hosts sites [0 2]. [...] done."),
        ("r3", "human", "news", "Servers answer requests."),
    ]
    (folder / "responses.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "response": r,
                    "topic": "t1",
                    "query": "what do servers do",
                    "style": s,
                    "writer": w,
                    "text": text,
                }
            )
            + "\n"
            for r, w, s, text in answers
        ),
        encoding="utf-8",
    )
    (folder / "sources.jsonl").write_text(
        json.dumps({"topic": "t1", "query": "what do servers do", "references": PASSAGES}) + "\n",
        encoding="utf-8",
    )
    if ratings is None:
        ratings = [
            {"query_id": "t1", "response_a": "r1", "response_b": "r2", **_gold("a", "b")},
            # the same pair in the other order: r1 wins overall again, and the
            # other dimensions split (b for r2 above, n here): left out
            {"query_id": "t1", "response_a": "r2", "response_b": "r1", **_gold("b", "n")},
            {"query_id": "t1", "response_a": "r3", "response_b": "r1", **_gold("b", "a")},
        ]
    (folder / "ratings.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in ratings), encoding="utf-8"
    )
    return folder


def test_markers_become_links_with_the_cited_passage_text(tmp_path):
    data = read_crowdrag(_folder(tmp_path))
    first = data.answers[0]
    assert (first.topic, first.system) == ("t1", "llm-bullet")
    turn = first.session.turns[0]
    assert turn.response_text == "Servers host websites. Clients ask them."
    assert [(s.text, s.citations) for s in turn.statements] == [
        ("Servers host websites.", (1, 2)),
        ("Clients ask them.", (3,)),
    ]
    # link id = passage index + 1, url = passage id, text = the passage
    assert [(lk.id, lk.url, lk.text) for lk in turn.links] == [
        (p["index"] + 1, p["id"], p["text"]) for p in PASSAGES
    ]
    second = data.answers[1].session.turns[0]
    assert "[...]" in second.response_text  # an ellipsis in brackets is text
    assert [s.citations for s in second.statements] == [(2,), (1, 3), ()]


def test_twice_rated_pairs_merge_by_majority_and_splits_are_left_out(tmp_path):
    data = read_crowdrag(_folder(tmp_path))
    assert data.rated_pairs == 2
    assert data.split_dropped == 6  # r1-r2: six dimensions rated b once, n once
    overall = {
        (p.session_a, p.session_b): p.winner
        for p in data.preferences
        if p.criterion == "quality_overall"
    }
    assert overall == {
        ("t1/llm-bullet", "t1/human-essay"): "a",
        ("t1/human-news", "t1/llm-bullet"): "b",
    }
    topical = [p for p in data.preferences if p.criterion == "correctness_topical"]
    assert [(p.system_a, p.system_b, p.winner) for p in topical] == [
        ("human-news", "llm-bullet", "a")
    ]
    assert all(p.query == "t1" and p.session == "t1" and p.turn == 1 for p in data.preferences)


def test_parse_command_writes_systems_answers_and_preferences(tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        main(["parse", str(_folder(tmp_path)), "--format", "crowdrag", "--output", str(out)]) == 0
    )
    assert "converted 3 answers of 3 systems on 1 topics" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "systems").iterdir()) == [
        "human-essay.jsonl",
        "human-news.jsonl",
        "llm-bullet.jsonl",
    ]
    system = load_sessions(out / "systems" / "llm-bullet.jsonl").sessions
    assert [s.session_id for s in system] == ["t1"]
    answers = load_sessions(out / "answers.jsonl").sessions
    assert [s.session_id for s in answers] == ["t1/llm-bullet", "t1/human-essay", "t1/human-news"]
    assert answers[0].turns == system[0].turns
    preferences = read_preferences(out / "preferences.jsonl")
    assert len(preferences) == 8  # 7 dimensions of r3-r1, overall of r1-r2
    names = {p.session_a for p in preferences} | {p.session_b for p in preferences}
    assert names <= {s.session_id for s in answers}


@pytest.mark.parametrize(
    ("file", "row", "expected"),
    [
        (
            "ratings.jsonl",
            {"query_id": "t1", "response_a": "r1", "response_b": "r9", **_gold("a")},
            "ratings.jsonl, line 1, column 'response_b': response 'r9' is not in responses.jsonl",
        ),
        (
            "ratings.jsonl",
            {"query_id": "t1", "response_a": "r1", "response_b": "r2", **_gold("n")},
            "ratings.jsonl, line 1, column 'quality_overall_gold': must be one of a, b, not 'n'",
        ),
        (
            "ratings.jsonl",
            {"query_id": "t2", "response_a": "r1", "response_b": "r2", **_gold("a")},
            "ratings.jsonl, line 1, column 'response_a': response 'r1' answers topic 't1', not 't2'",
        ),
        (
            "responses.jsonl",
            {
                "response": "r4",
                "topic": "t1",
                "query": "q",
                "style": "essay",
                "writer": "llm",
                "text": "[0, 1]",
            },
            "responses.jsonl, line 4, column 'text': the response holds no text",
        ),
        (
            "responses.jsonl",
            {
                "response": "r4",
                "topic": "t1",
                "query": "q",
                "style": "Bullet!",
                "writer": "llm",
                "text": "x",
            },
            "responses.jsonl, line 4, column 'style': must be lower-case letters",
        ),
        (
            "responses.jsonl",
            {
                "response": "r4",
                "topic": "t1",
                "query": "q",
                "style": "bullet",
                "writer": "llm",
                "text": "again",
            },
            "responses.jsonl, line 4, column 'style': topic 't1' already has a llm-bullet answer",
        ),
        (
            "responses.jsonl",
            {
                "response": "r4",
                "topic": "t9",
                "query": "q",
                "style": "essay",
                "writer": "llm",
                "text": "x",
            },
            "responses.jsonl, line 4, column 'topic': topic 't9' has no passages",
        ),
    ],
)
def test_bad_rows_are_located(tmp_path, file, row, expected):
    folder = _folder(tmp_path, ratings=[row] if file == "ratings.jsonl" else None)
    if file == "responses.jsonl":
        with (folder / file).open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(row) + "\n")
    with pytest.raises(InputError) as caught:
        read_crowdrag(folder)
    assert expected in str(caught.value)


def test_parse_command_reports_bad_input_in_one_line(tmp_path, capsys):
    folder = _folder(tmp_path)
    (folder / "sources.jsonl").write_text('{"topic": "t1", "references": []}\n', encoding="utf-8")
    code = main(["parse", str(folder), "--format", "crowdrag", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert "sources.jsonl, line 1, column 'references': must be a non-empty list" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o" / "answers.jsonl").exists()


def test_the_shared_development_topics_convert(tmp_path, shared):
    shared(CROWDRAG, "the CrowdRAG-25 development topics")
    summary = convert_crowdrag(CROWDRAG, tmp_path)
    # the data's README: 20 topics, 120 answers, 417 rated pairs (300 distinct, 117 twice)
    assert (summary.topics, summary.answers, summary.systems) == (20, 120, 6)
    assert summary.rated_pairs == 300
    assert summary.preferences + summary.split_dropped == 300 * 7
    answers = load_sessions(tmp_path / "answers.jsonl").sessions
    assert len(answers) == 120
    # every link carries its passage's text, and every citation cites a link
    for session in answers:
        turn = session.turns[0]
        assert all(lk.text for lk in turn.links)
        assert set(turn.cited_link_ids) == {lk.id for lk in turn.links}
    overall = Counter(
        p.winner
        for p in read_preferences(tmp_path / "preferences.jsonl")
        if p.criterion == "quality_overall"
    )
    assert set(overall) == {"a", "b"}  # quality_overall has no tie


def test_a_trailing_mark_after_a_blank_line_keeps_statements_a_cut_of_the_text():
    # a CrowdRAG bullet answer ends "...economy [4].\n\n-": the lone "-" joins the last
    # statement with the blank line before it, so statements still cut the text in order
    parsed = build_response(["Older people volunteer.", Citation(5, "u5", ""), "\n\n-"])
    assert parsed.response_text == "Older people volunteer.\n\n-"
    assert [s.text for s in parsed.statements] == ["Older people volunteer.\n\n-"]


def test_a_marker_naming_a_passage_the_topic_lacks_is_kept_and_counted(tmp_path, capsys):
    folder = _folder(tmp_path)
    rows = (folder / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])
    # three passages (0-2): [7] and [3] name passages the topic does not have
    first["text"] = "Servers host websites [0, 7]. They cool down at night [3]."
    rows[0] = json.dumps(first)
    (folder / "responses.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = read_crowdrag(folder)
    assert data.missing_passages == 2
    turn = data.answers[0].session.turns[0]
    assert [s.citations for s in turn.statements] == [(1, 8), (4,)]
    links = {link.id: link for link in turn.links}
    assert links[1].text == PASSAGES[0]["text"]
    assert (links[8].url, links[8].text) == ("t1#missing-passage-7", None)
    assert (links[4].url, links[4].text) == ("t1#missing-passage-3", None)
    # the other answers and the preferences are read as before
    assert len(data.answers) == 3 and data.preferences
    code = main(["parse", str(folder), "--format", "crowdrag", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 0
    assert "2 citations name a passage their topic does not have (kept" in err
    sessions = load_sessions(tmp_path / "o" / "answers.jsonl").sessions
    cited = {link.url for s in sessions for link in s.turns[0].links}
    assert "t1#missing-passage-7" in cited
