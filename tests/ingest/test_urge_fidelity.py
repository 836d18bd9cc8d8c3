"""Parsing the real URGE sample reproduces what URGE itself recorded about each turn.

Expected values are the sample's own columns, read here independently of the loader
(``conversation``, ``link_usefulness``, ``citation_usefulness``, useful-text columns).
Tolerance: exact, except the useful-span coverage, which must be at least 99%.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from genir_eval.ingest import load_urge, parse_response_html
from genir_eval.records import Session

SPAN_COVERAGE_FLOOR = 0.99


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def raw_rows(urge_sample_path: Path) -> list[dict[str, str]]:
    with urge_sample_path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


@pytest.fixture(scope="module")
def sessions(urge_sample_path: Path) -> list[Session]:
    result = load_urge(urge_sample_path)
    assert result.skipped == []
    return result.sessions


def _turn_values(cell: str) -> list[Any]:
    return list(json.loads(cell).values())


def test_every_row_loads_with_its_turns(raw_rows, sessions):
    assert [s.session_id for s in sessions] == [f"urge-{i}" for i in range(len(raw_rows))]
    for row, session in zip(raw_rows, sessions, strict=True):
        assert len(session.turns) == len(json.loads(row["conversation"]))
        assert session.source == "urge"
        assert session.language == "zh"
        assert session.task_type == row["task_type"]
        assert session.intent == row["search intent"]


def test_response_text_matches_the_assistant_text(raw_rows, sessions):
    for row, session in zip(raw_rows, sessions, strict=True):
        exchanges = _turn_values(row["conversation"])
        for turn, exchange in zip(session.turns, exchanges, strict=True):
            assert turn.query == exchange["用户"]
            assert _collapse(turn.response_text) == _collapse(exchange["AI助手"]), (
                session.session_id,
                turn.index,
            )


def test_statements_reproduce_citation_usefulness(raw_rows, sessions):
    checked = 0
    for row, session in zip(raw_rows, sessions, strict=True):
        link_labels = [json.loads(t) for t in ast.literal_eval(row["link_usefulness"])]
        citation_labels = ast.literal_eval(row["citation_usefulness"])
        for turn, labels, expected in zip(session.turns, link_labels, citation_labels, strict=True):
            if not turn.links:
                assert len(turn.statements) == 1 and turn.statements[0].citations == ()
                continue
            mapped = [[labels[str(c)] for c in s.citations] for s in turn.statements]
            assert mapped == expected, (session.session_id, turn.index)
            checked += 1
    # 39 turns, 9 of them with an empty link_usefulness object (counted from the sample).
    assert checked == 30


def test_labelled_links_are_parsed_with_url_and_title(raw_rows, sessions):
    for row, session in zip(raw_rows, sessions, strict=True):
        link_labels = [json.loads(t) for t in ast.literal_eval(row["link_usefulness"])]
        for turn, labels in zip(session.turns, link_labels, strict=True):
            for key in labels:
                link = turn.link(int(key))
                assert link is not None, (session.session_id, turn.index, key)
                assert link.url.startswith("http") and link.title.strip()


def test_useful_spans_are_segments(raw_rows, sessions):
    found = total = 0
    for row, session in zip(raw_rows, sessions, strict=True):
        user = json.loads(row["useful_text_user_self"] or "{}")
        external = json.loads(row["useful_text_external_annotation"] or "{}")
        for turn in session.turns:
            segments = {s.text for s in turn.segments}
            spans = list(user.get(str(turn.index), {}).values())
            spans += list(external.get(str(turn.index), []))
            total += len(spans)
            found += sum(span.strip() in segments for span in spans)
    assert total == 1148  # user + external units in the sample, counted by this loop's source
    assert found / total >= SPAN_COVERAGE_FLOOR


def test_gold_is_read_per_turn(raw_rows, sessions):
    for row, session in zip(raw_rows, sessions, strict=True):
        gold = session.gold
        assert gold is not None
        assert gold.session_satisfaction == int(row["session-level satisfaction"])
        assert list(gold.query_satisfaction or ()) == ast.literal_eval(
            row["query-level satisfaction"]
        )
        assert [[list(s) for s in t] for t in gold.citation_usefulness or ()] == [
            [list(s) for s in t] for t in ast.literal_eval(row["citation_usefulness"])
        ]
        user = json.loads(row["useful_text_user_self"] or "{}")
        for i, spans in enumerate(gold.useful_spans_user or (), start=1):
            units = user.get(str(i), {})
            assert list(spans) == [units[k] for k in sorted(units, key=int)]
        assert (gold.dissatisfaction is None) == (not row["dis_sat_reason"].strip())


def test_lxml_and_beautifulsoup_agree_on_every_turn(raw_rows):
    for row in raw_rows:
        for html in json.loads(row["response_html"]):
            assert parse_response_html(html, backend="lxml") == parse_response_html(
                html, backend="bs4"
            )
