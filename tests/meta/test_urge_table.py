"""URGE's link-based correlation table and ``genir-eval correlate``."""

from __future__ import annotations

import json
import math

import pytest

from genir_eval.cli import main
from genir_eval.ingest import load_sessions, write_jsonl
from genir_eval.meta.urge_table import (
    QUERY_LEVEL,
    QUERY_TO_SESSION,
    SESSION_LEVEL,
    SESSION_MEASURES,
    session_metrics,
    urge_table,
)
from genir_eval.metrics import gold_statement_usefulness
from genir_eval.records import Gold, Link, Session, Statement, Turn

STATS_KEYS = {"pearson", "spearman", "kendall", "n", "ci95"}


def _session(sid: str, task: str, sat: float, turns: list[tuple[float, list[int]]]) -> Session:
    """A session whose turn k cites links 1..len(labels), one statement per link.

    A turn without labels is one statement without citations.
    """
    built, link_labels, query_sat = [], [], []
    for k, (qsat, labels) in enumerate(turns, start=1):
        statements = tuple(
            Statement(text=f"s{i}", citations=(i,)) for i in range(1, len(labels) + 1)
        ) or (Statement(text="r"),)
        links = tuple(
            Link(id=i, url=f"https://l{i}.example", title="") for i in range(1, len(labels) + 1)
        )
        built.append(
            Turn(
                index=k,
                query=f"q{k}",
                response_text=" ".join(s.text for s in statements),
                statements=statements,
                links=links,
            )
        )
        link_labels.append({i: v for i, v in enumerate(labels, start=1)})
        query_sat.append(qsat)
    gold = Gold(
        session_satisfaction=sat,
        query_satisfaction=tuple(query_sat),
        link_usefulness=tuple(link_labels),
    )
    return Session(session_id=sid, turns=tuple(built), task_type=task, gold=gold)


SESSIONS = [
    _session("a", "Leisure", 5, [(5, [3, 3]), (4, [3, 2])]),
    _session("b", "Leisure", 2, [(2, [1, 0]), (1, [0])]),
    _session("c", "Factual QA", 4, [(4, [2, 3, 3])]),
    _session("d", "Factual QA", 1, [(1, [0, 0]), (2, [1]), (1, [])]),
    _session("e", "Factual QA", 3, [(3, [2, 1])]),
]


def test_table_has_every_row_and_the_documented_shape():
    table = urge_table(SESSIONS, n_boot=50, seed=0)
    assert set(table) == {
        "query_level",
        "session_level",
        "users_own_ratings",
        "users_own_ratings_are",
        "sessions",
        "by_task_type",
    }
    assert list(table["query_level"]) == list(QUERY_LEVEL)
    # the users' own ratings are apart from the metrics, said to be a ceiling
    assert list(table["session_level"]) == list(SESSION_MEASURES)
    assert list(table["users_own_ratings"]) == list(QUERY_TO_SESSION)
    assert (
        "ceiling" in table["users_own_ratings_are"]
        and "not a metric" in table["users_own_ratings_are"]
    )
    assert (
        list(SESSION_LEVEL[4:])
        == list(QUERY_TO_SESSION)
        == [
            "q2s_decreasing",
            "q2s_increasing",
            "q2s_equal",
            "q2s_middle_high",
            "q2s_middle_low",
            "q2s_max",
            "q2s_min",
            "q2s_mode",
        ]
    )
    for level in ("query_level", "session_level", "users_own_ratings"):
        for stats in table[level].values():
            assert set(stats) == STATS_KEYS
    # 9 turns of which one has no labelled statement; 5 sessions.
    assert table["query_level"]["equal"]["n"] == 8
    assert table["session_level"]["sdcg_urge"]["n"] == 5
    assert set(table["sessions"]) == {"a", "b", "c", "d", "e"}
    assert set(table["by_task_type"]) == {"Leisure", "Factual QA"}
    assert table["by_task_type"]["Factual QA"]["session_level"]["sdcg_urge"]["n"] == 3
    # two Leisure sessions: too few pairs for a correlation
    assert table["by_task_type"]["Leisure"]["session_level"]["sdcg_urge"]["pearson"] is None
    json.dumps(table, allow_nan=False)


def test_session_values_recomputed_by_hand():
    values = urge_table(SESSIONS, n_boot=0)["sessions"]["d"]
    # Session d: u = [[0, 0], [1], []] so n' = 2. Computed by hand from the formulas:
    # g_1 = 0, g_2 = 2^1 - 1 = 1; turn-2 discount ln(2.05)/ln(1.05) = 14.7127972486.
    disc = math.log(2.05) / math.log(1.05)
    expected = {
        "sdcg_urge": 1 / disc,
        "srbp_urge": 0 + 1 * 0.05,
        "rsdcg_urge": 1 / disc,
        "rsrbp_urge": 0.05,
        # query satisfaction [1, 2, 1]
        "q2s_decreasing": (1 + 1 + 1 / 3) / (1 + 1 / 2 + 1 / 3),
        "q2s_increasing": (1 + 4 + 3) / 6,
        "q2s_equal": 4 / 3,
        "q2s_middle_high": (1 + 4 + 1) / 4,
        "q2s_middle_low": (1 + 1 + 1) / 2.5,
        "q2s_max": 2.0,
        "q2s_min": 1.0,
        "q2s_mode": 1.0,
    }
    assert set(values) == set(expected)
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, abs=1e-9), name


def test_same_seed_same_table_and_duplicate_ids_rejected():
    assert urge_table(SESSIONS, n_boot=100, seed=3) == urge_table(SESSIONS, n_boot=100, seed=3)
    with pytest.raises(Exception, match="twice"):
        urge_table([SESSIONS[0], SESSIONS[0]], n_boot=0)


def test_sessions_without_gold_count_nowhere():
    bare = Session(session_id="x", turns=(Turn(index=1, query="q", response_text="r"),))
    table = urge_table([*SESSIONS, bare], n_boot=0)
    assert table["session_level"]["sdcg_urge"]["n"] == 5
    assert all(v is None for v in table["sessions"]["x"].values())


# --- the real URGE sample -------------------------------------------------------------


@pytest.fixture(scope="module")
def urge_sessions(urge_sample_path):
    return load_sessions(urge_sample_path).sessions


def test_gold_usefulness_equals_the_datasets_own_statement_values(urge_sessions):
    # The dataset's citation_usefulness gives each statement's citation labels; the best
    # one per statement must be what the link labels give through the parsed statements.
    for session in urge_sessions:
        expected = [[float(max(s)) for s in turn if s] for turn in session.gold.citation_usefulness]
        assert gold_statement_usefulness(session) == expected, session.session_id


def test_one_sample_session_recomputed_by_hand(urge_sessions):
    session = next(s for s in urge_sessions if s.session_id == "urge-1")
    u = [[float(max(s)) for s in turn if s] for turn in session.gold.citation_usefulness]
    br, bq, p = 1.35, 1.05, 0.05
    n = len(u)

    def gain(values):
        d = [math.log2(i + 1) / math.log2(br) for i in range(1, len(values) + 1)]
        return sum((2**v - 1) * di for v, di in zip(values, d, strict=True)) / sum(d)

    def disc(k):
        return math.log(k + bq - 1) / math.log(bq)

    expected = {
        "sdcg_urge": sum(gain(uk) / disc(k) for k, uk in enumerate(u, 1)),
        "srbp_urge": sum(uk[0] * p ** (k - 1) for k, uk in enumerate(u, 1)),
        "rsdcg_urge": sum(gain(uk) * math.exp(-3 * (n - k)) / disc(k) for k, uk in enumerate(u, 1)),
        "rsrbp_urge": sum(
            uk[0] * p ** (k - 1) * math.exp(-0.05 * (n - k)) for k, uk in enumerate(u, 1)
        ),
    }
    values = session_metrics(session)
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, abs=1e-9), name


def test_sdcg_urge_correlation_on_the_sample(urge_sessions):
    row = urge_table(urge_sessions, n_boot=1000, seed=0)["session_level"]["sdcg_urge"]
    assert row["n"] == 12
    # Measured on the sample (genir-eval correlate urge_sample_dev.csv): Pearson 0.565,
    # Spearman 0.619, Kendall tau-b 0.477. The "about 0.47" matches Kendall.
    assert row["pearson"] == pytest.approx(0.565, abs=0.02)
    assert row["spearman"] == pytest.approx(0.619, abs=0.02)
    assert row["kendall"] == pytest.approx(0.47, abs=0.02)
    lo, hi = row["ci95"]["pearson"]
    assert lo < row["pearson"] < hi


# --- genir-eval correlate ----------------------------------------------------------------


@pytest.fixture()
def sessions_file(tmp_path):
    path = tmp_path / "sessions.jsonl"
    write_jsonl(SESSIONS, path)
    return path


def test_cli_json_is_the_table(sessions_file, capsys):
    assert (
        main(
            [
                "correlate",
                str(sessions_file),
                "--labels",
                "gold",
                "--json",
                "--bootstrap",
                "40",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(urge_table(SESSIONS, n_boot=40, seed=2)))


def test_cli_prints_an_aligned_table(sessions_file, capsys):
    assert main(["correlate", str(sessions_file), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("metric"))
    assert header.split() == [
        "metric",
        "n",
        "Pearson",
        "95%",
        "CI",
        "Spearman",
        "95%",
        "CI",
        "Kendall",
        "95%",
        "CI",
    ]
    # the q2s_ rows come last, under a title saying they are the users' own ratings
    title = next(i for i, line in enumerate(lines) if line.startswith("users' own ratings"))
    assert "ceiling" in lines[title] and "not a metric" in lines[title]
    assert all(
        line.startswith("q2s_") for line in lines[title + 2 : title + 2 + len(QUERY_TO_SESSION)]
    )
    assert not any(line.startswith("q2s_") for line in lines[:title])
    rows = [
        line for line in lines if line.split() and line.split()[0] in (*QUERY_LEVEL, *SESSION_LEVEL)
    ]
    assert len(rows) == len(QUERY_LEVEL) + len(SESSION_LEVEL)
    assert len({len(line) for line in rows if "[" in line}) == 1  # columns line up


def test_cli_rejects_unknown_label_source(sessions_file, capsys):
    assert main(["correlate", str(sessions_file), "--labels", "judge"]) == 2
    assert "--labels" in capsys.readouterr().err
