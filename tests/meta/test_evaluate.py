"""Meta-evaluation: hand-checked spans P/R/F1, link agreement, CLI output shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "judges"))
from judge_helpers import tiny_session  # noqa: E402

from genir_eval.cli import main  # noqa: E402
from genir_eval.judges import Label  # noqa: E402
from genir_eval.llm.providers.base import JudgmentKey  # noqa: E402
from genir_eval.meta.evaluate import (  # noqa: E402
    link_usefulness_scores,
    ordering_scores,
    spans_scores,
)
from genir_eval.meta.gold import session as session_gold  # noqa: E402


def _label(turn: int | None, item: str, value: Any, judge: str = "j") -> Label:
    return Label(JudgmentKey("s1", turn, item, judge, "v"), value)


def test_spans_hand_checked() -> None:
    session = tiny_session()
    labels = [_label(1, "spans", [0, 2]), _label(2, "spans", [])]
    result = spans_scores([session], labels)
    assert result is not None
    # Turn 1 picks units 0 and 2, turn 2 none. User marks: {unit 0} and {}; annotators:
    # {units 0, 2} and {turn 2 unit 0}. Worked by hand from these sets:
    expected = {
        "vs_user": {"precision": 1 / 2, "recall": 1.0, "f1": 2 / 3, "macro_f1": (2 / 3 + 1) / 2},
        "vs_annotators": {"precision": 1.0, "recall": 2 / 3, "f1": 0.8, "macro_f1": (1 + 0) / 2},
        "human_reference_user_vs_annotators": {
            "precision": 1.0,
            "recall": 1 / 3,
            "f1": 0.5,
            "macro_f1": (2 / 3 + 0) / 2,
        },
    }
    for block, values in expected.items():
        for metric, value in values.items():
            assert result[block][metric] == pytest.approx(value, abs=1e-12), (block, metric)
    assert result["missing"] == 0


def test_link_scores_perfect_and_missing() -> None:
    session = tiny_session()
    labels = [_label(1, "link:1", 3), _label(1, "link:2", 1), _label(2, "link:1", 2)]
    result = link_usefulness_scores([session], labels, n_boot=0)
    assert result is not None
    assert result["spearman"] == pytest.approx(1.0, abs=1e-12)
    assert result["mae"] == 0.0 and result["cohen_kappa_weighted"] == pytest.approx(1.0, abs=1e-12)
    assert result["confusion_matrix"]["matrix"] == [
        [0, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 0, 1],
    ]
    missing = Label(JudgmentKey("s1", 2, "link:1", "j", "v"), None, missing_reason="transient: x")
    result = link_usefulness_scores([session], labels[:2] + [missing], n_boot=0)
    assert result is not None
    assert result["n"] == 2 and result["missing"] == 1
    assert result["missing_reasons"] == {"transient: x": 1}


def test_orderings_identical() -> None:
    session = tiny_session()
    # Gold query satisfaction (4, 3): turn 2 is the harder; a judge scoring it lower agrees.
    labels = [_label(1, "turn", 9), _label(2, "turn", 2)]
    result = ordering_scores([session], labels)
    assert result is not None
    assert result["rbo"] == pytest.approx(1.0, abs=1e-12)
    assert result["hardest_gold"] == ["s1#2", "s1#1"]


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(
        [
            "meta",
            *args,
            "--json",
            "--provider",
            "offline",
            "--cache-mode",
            "off",
            "--journal",
            "none",
            "--quiet",
            "--bootstrap",
            "50",
        ]
    )
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_cli_link_judge(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _cli(
        [str(fixtures_dir / "demo_sessions.csv"), "--judge", "link_usefulness.true"], capsys
    )
    assert {"link_usefulness", "satisfaction", "orderings", "replies", "engine"} <= set(result)
    assert "spans" not in result
    link = result["link_usefulness"]
    for key in (
        "spearman",
        "kendall",
        "ci95",
        "cohen_kappa_binary",
        "cohen_kappa_weighted",
        "mae",
        "pairwise_auc",
        "confusion_matrix",
        "n",
        "missing",
    ):
        assert key in link
    assert result["judge"]["baseline"] is True
    assert result["replies"]["parse_failure_rate"] == 0.0
    assert result["engine"]["calls"] == link["n"]


def test_cli_satisfaction_and_spans(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(fixtures_dir / "demo_sessions.csv")
    result = _cli([path, "--judge", "satisfaction.gah"], capsys)
    assert "link_usefulness" not in result
    overall = result["satisfaction"]["overall"]
    assert {"query_level", "session_level", "combined_with_sdcg_urge", "per_task_type"} <= set(
        overall
    )
    result = _cli([path, "--judge", "spans"], capsys)
    assert set(result["spans"]) >= {
        "vs_user",
        "vs_annotators",
        "human_reference_user_vs_annotators",
    }


def test_cli_rejects_unknown_judge(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "meta",
            str(fixtures_dir / "demo_sessions.csv"),
            "--judge",
            "nope",
            "--provider",
            "offline",
        ]
    )
    assert code == 2
    assert "unknown judge" in capsys.readouterr().err


def _meta_json(path: Path, judge: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    # exactly the command a user types, without --quiet or a reduced bootstrap
    argv = ["meta", str(path), "--judge", judge, "--provider", "offline"]
    argv += ["--cache-mode", "off", "--journal", "none", "--json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _turns_with_gold_links(path: Path) -> int:
    from genir_eval.ingest import load_sessions
    from genir_eval.meta.item_eval import gold_links

    sessions = load_sessions(path).sessions
    return sum(1 for s in sessions for t in s.turns if gold_links(s, t.index))


def _harmonic(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def test_cli_item_judge_block(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = fixtures_dir / "demo_sessions.csv"
    result = _meta_json(path, "item-as", capsys)
    assert result["judge"]["kind"] == "item" and "rubric" not in result
    item = result["item"]
    assert {"final", "first_iteration", "ndcg@5", "ndcg@5_log_order", "mean_iterations"} <= set(
        item
    )
    final = item["final"]
    assert {"precision", "recall", "f1", "macro_f1"} <= set(final)
    assert all(0.0 <= final[k] <= 1.0 for k in ("precision", "recall", "f1"))
    assert final["f1"] == pytest.approx(_harmonic(final["precision"], final["recall"]), abs=1e-12)
    assert 0.0 <= item["ndcg@5"] <= 1.0
    # the AS loop asks at least once per turn: one or more iterations on average
    assert item["mean_iterations"] >= 1.0
    assert item["turns"] == _turns_with_gold_links(path) and item["turns_missing"] == 0
    assert item["calls"] == result["engine"]["calls"] > 0


def test_cli_rubric_judge_block(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = fixtures_dir / "demo_sessions.csv"
    result = _meta_json(path, "rubric", capsys)
    assert result["judge"]["kind"] == "rubric" and "item" not in result
    rubric = result["rubric"]
    assert {"binary", "grade_vs_gold", "ndcg@5", "coverage_vs_query_satisfaction"} <= set(rubric)
    binary = rubric["binary"]
    assert all(0.0 <= binary[k] <= 1.0 for k in ("precision", "recall", "f1"))
    assert binary["f1"] == pytest.approx(
        _harmonic(binary["precision"], binary["recall"]), abs=1e-12
    )
    assert 0.0 <= rubric["ndcg@5"] <= 1.0
    # every gold-labelled link is graded by the offline twin
    grade = rubric["grade_vs_gold"]
    assert rubric["links_missing"] == 0 and grade["n"] > 0
    assert -1.0 <= grade["kendall"] <= 1.0
    assert rubric["turns"] == _turns_with_gold_links(path)


def test_ordering_lists_the_first_hardest_and_scores_the_whole_depth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 20 one-turn sessions, gold satisfaction 1..5 repeating, the judge's score noisy: the
    # figures cover depth 10 (half of 20) whatever is listed; the lists stop at the limit
    import dataclasses
    import random

    from genir_eval.meta.stats import kendall_tau, rbo

    base = tiny_session()
    rng = random.Random(3)
    sessions, labels = [], []
    for i in range(20):
        gold = dataclasses.replace(base.gold, query_satisfaction=(i % 5 + 1,))
        sessions.append(
            dataclasses.replace(base, session_id=f"q{i}", turns=base.turns[:1], gold=gold)
        )
        label = _label(1, "turn", i % 5 + rng.random() * 3)
        labels.append(
            dataclasses.replace(label, key=dataclasses.replace(label.key, session_id=f"q{i}"))
        )
    full = ordering_scores(sessions, labels)
    monkeypatch.setattr(session_gold, "LISTED_HARDEST", 3)
    capped = ordering_scores(sessions, labels)
    assert full is not None and capped is not None
    assert full["depth"] == capped["depth"] == 10 and full["listed"] == 10
    assert capped["listed"] == 3 and capped["hardest_gold"] == full["hardest_gold"][:3]
    assert capped["hardest_judge"] == full["hardest_judge"][:3]
    assert (capped["rbo"], capped["kendall_tau"]) == (full["rbo"], full["kendall_tau"])
    # the figures over row numbers are those over the ids
    gold_ids, judge_ids = full["hardest_gold"], full["hardest_judge"]
    assert full["rbo"] == pytest.approx(rbo(judge_ids, gold_ids, p=0.9), abs=1e-12)
    score = {f"{lb.key.session_id}#1": lb.value for lb in labels}  # no ties: random floats
    judged = sorted(gold_ids, key=score.__getitem__)
    assert full["kendall_tau"] == pytest.approx(kendall_tau(judged, gold_ids), abs=1e-12)
