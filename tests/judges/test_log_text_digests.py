"""What the judges read of every URGE and CrowdRAG development text is the checked-in
table's (bench/log_text_digests.tsv): a change to the fence or to the chat-token neutraliser
that rewrites a real title or passage fails here until the table is rewritten
(``python bench/log_text_digests.py --write --requests``) in the same commit, which says
why. The slow test renders every judge's English requests for every session."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "log_text_digests", ROOT / "bench" / "log_text_digests.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, str], dict[str, str]]:
    return BENCH.read_table()


def test_the_table_holds_every_development_session(table) -> None:
    datasets = [dataset for dataset, _ in table]
    # the URGE sample's 12 sessions and CrowdRAG's 120 answers (their READMEs)
    assert datasets.count("urge") == 12
    assert datasets.count("crowdrag") == 120


def test_what_the_judges_read_of_each_development_text_is_unchanged(table) -> None:
    now = BENCH.rows(requests=False)
    assert BENCH.differences(now, table, ["texts", "changed", "digest"]) == []


def test_the_neutraliser_changes_no_real_text(table) -> None:
    # real logs hold no chat-template token: every text reaches the judges as written
    assert {row["changed"] for row in table.values()} == {"0"}
    assert sum(int(row["texts"]) for row in table.values()) > 10_000


@pytest.mark.slow
def test_every_judges_requests_on_each_development_session_are_unchanged(table) -> None:
    now = BENCH.rows(requests=True)
    assert BENCH.differences(now, table, ["requests"]) == []


def test_a_rewritten_title_is_seen() -> None:
    # the table's check sees a one-character change in one text of one session
    dataset, session = next(BENCH.development_sessions())
    row = BENCH.text_row(dataset, session)
    links = [link for turn in session.turns for link in turn.links if link.title]
    assert links, "the first URGE session has titled links"
    import dataclasses

    first = session.turns[0]
    retitled = dataclasses.replace(
        first,
        links=(dataclasses.replace(first.links[0], title="[PDF] " + first.links[0].title),)
        + tuple(first.links[1:]),
    )
    moved = BENCH.text_row(
        dataset, dataclasses.replace(session, turns=(retitled,) + session.turns[1:])
    )
    assert moved["digest"] != row["digest"] and moved["changed"] == 0
