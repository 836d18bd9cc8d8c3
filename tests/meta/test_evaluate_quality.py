"""Collapse flags, expected labels, calibration and PPI in the meta-evaluation blocks."""

from __future__ import annotations

import dataclasses
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
from genir_eval.meta.evaluate import gold_sdcg, score_labels, sdcg_from_labels  # noqa: E402
from genir_eval.records import Session  # noqa: E402

TOL = 1e-9


def _sessions(n: int) -> list[Session]:
    return [dataclasses.replace(tiny_session(), session_id=f"s{i}") for i in range(n)]


def _label(session: str, turn: int | None, item: str, value: Any, **extra: Any) -> Label:
    return Label(
        JudgmentKey(session, turn, item, "j", "v"), value, raw=extra.pop("raw", None), extra=extra
    )


def _links(sessions: list[Session], value: Any, **extra: Any) -> list[Label]:
    # tiny_session: turn 1 cites links 1 and 2, turn 2 cites link 1 (gold 3, 1 and 2).
    return [
        _label(s.session_id, turn, f"link:{link}", value(turn, link), **extra)
        for s in sessions
        for turn, link in ((1, 1), (1, 2), (2, 1))
    ]


def test_a_constant_judge_is_flagged_not_left_blank() -> None:
    sessions = _sessions(3)
    reply = json.dumps({"O": 3, "reason": "3 = the page fully satisfies the need of the user"})
    labels = _links(sessions, lambda t, k: 3)
    labels = [dataclasses.replace(lb, raw=reply) for lb in labels]
    rubric = "Grade 0-3. 3 = the page fully satisfies the need of the user. {query}"
    out = score_labels(sessions, labels, kind="link_usefulness", n_boot=0, instructions=[rubric])
    assert out["link_usefulness"]["spearman"] is None
    assert out["degenerate"]["flags"] == ["constant", "copies_prompt", "repeats_one_reason"]
    assert "every one of its 9 labels is 3" in out["degenerate"]["note"]


def test_expected_labels_are_scored_beside_the_argmax() -> None:
    sessions = _sessions(3)
    gold = {(1, 1): 3, (1, 2): 1, (2, 1): 2}
    # The argmax says 2 everywhere (undefined Spearman); the expected label keeps the order.
    labels = [
        _label(s.session_id, t, f"link:{k}", 2, expected=1.5 + gold[(t, k)] / 10, entropy_bits=0.5)
        for s in sessions
        for t, k in gold
    ]
    block = score_labels(sessions, labels, kind="link_usefulness", n_boot=0)["link_usefulness"]
    assert block["spearman"] is None
    assert block["expected"]["spearman"] == pytest.approx(1.0, abs=TOL)
    assert block["expected"]["pairwise_auc"] == pytest.approx(1.0, abs=TOL)
    assert block["expected"]["mean_entropy_bits"] == pytest.approx(0.5, abs=TOL)
    # Calibrated out of session: each session's map is fitted on the other two, which say
    # the same thing, so the calibrated expected label recovers gold exactly.
    calibration = block["expected"]["calibration"]
    assert calibration["leave_one_session_out"] and calibration["folds"] == 3
    assert calibration["calibrated"]["mae"] == pytest.approx(0.0, abs=TOL)
    assert calibration["raw"]["mae"] > 0.5


def test_link_calibration_block_is_there_for_plain_labels() -> None:
    sessions = _sessions(2)
    labels = _links(sessions, lambda t, k: 0 if (t, k) == (1, 2) else 1)
    block = score_labels(sessions, labels, kind="link_usefulness", n_boot=0)["link_usefulness"]
    cal = block["calibration"]
    # By hand: judge 1 -> gold {3, 2}, judge 0 -> gold 1 in each session; out of fold the
    # map sends 1 -> 2.5 and 0 -> 1: MAE (0.5 + 0 + 0.5) / 3 per session.
    assert cal["calibrated"]["mae"] == pytest.approx(1 / 3, abs=TOL)
    assert "expected" not in block


def test_ppi_uses_sessions_without_gold_as_unlabelled() -> None:
    sessions = _sessions(6)
    without = [dataclasses.replace(s, gold=None) for s in _sessions(3)]
    without = [dataclasses.replace(s, session_id=f"u{i}") for i, s in enumerate(without)]
    every = sessions + without
    labels = _links(every, lambda t, k: 2)
    out = score_labels(every, labels, kind="link_usefulness", n_boot=0)
    ppi = out["ppi"]
    assert (ppi["metric"], ppi["n_labelled"], ppi["n_unlabelled"]) == ("sdcg_urge", 6, 3)
    judged = sdcg_from_labels(every, labels)
    # Every session judges the same, so PPI = gold mean + (judge mean - judge mean) = gold.
    assert ppi["ppi"]["estimate"] == pytest.approx(gold_sdcg(sessions[0]), abs=TOL)
    assert ppi["judge_mean"] == pytest.approx(judged[0], abs=TOL)


def test_ppi_simulation_reports_coverage() -> None:
    sessions = _sessions(8)
    labels = _links(sessions, lambda t, k: 3 if k == 1 else 0)
    out = score_labels(sessions, labels, kind="link_usefulness", n_boot=0, ppi_labelled=4)
    simulated = out["ppi"]["simulated"]
    assert simulated["labelled"] == 4 and simulated["splits"] == 200
    assert set(simulated["coverage"]) == {"ppi", "ppi_tuned", "gold_mean"}
    with pytest.raises(ValueError, match="between 2 and 6"):
        score_labels(sessions, labels, kind="link_usefulness", n_boot=0, ppi_labelled=7)


def test_meta_cli_prints_calibration_and_rejects_a_bad_ppi_size(
    urge_sample_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "meta",
        str(urge_sample_path),
        "--judge",
        "link_usefulness.dna",
        "--provider",
        "offline",
        "--quiet",
        "--cache-mode",
        "off",
        "--journal",
        "none",
        "--bootstrap",
        "0",
    ]
    assert main([*args, "--ppi-labelled", "6"]) == 0
    text = capsys.readouterr().out
    assert "link labels calibrated (isotonic, leave-one-session-out, n 106)" in text
    assert "as if 6 sessions had gold (200 draws)" in text
    assert main([*args, "--ppi-labelled", "11"]) == 2
    err = capsys.readouterr().err
    assert "--ppi-labelled" in err and "between 2 and 10" in err and "Traceback" not in err


def test_satisfaction_ppi_and_raw_agreement_put_the_judge_on_the_users_scale() -> None:
    # A satisfaction judge rates every session 10 (its top) and the users rate every
    # session 5 (theirs): on the users' scale the judge's mean is 5 and its raw absolute
    # error 0, not 5 (computed by hand from the linear map 1 -> 1, 10 -> 5).
    sessions = [
        dataclasses.replace(
            s, gold=dataclasses.replace(s.gold, session_satisfaction=5, query_satisfaction=None)
        )
        for s in _sessions(4)
    ]
    unlabelled = [
        dataclasses.replace(s, session_id=f"u{i}", gold=None) for i, s in enumerate(_sessions(3))
    ]
    every = sessions + unlabelled
    labels = [
        Label(
            key=JudgmentKey(s.session_id, None, "session", "satisfaction.geval", "v1"),
            value=10,
        )
        for s in every
    ]
    out = score_labels(every, labels, kind="satisfaction", n_boot=0)
    ppi = out["ppi"]
    assert ppi["metric"] == "session_satisfaction"
    assert ppi["judge_mean"] == pytest.approx(5.0, abs=TOL)
    assert ppi["ppi"]["estimate"] == pytest.approx(5.0, abs=TOL)
    assert "1-5" in ppi["judge_scale"]
    raw = out["satisfaction"]["overall"]["calibration"]["session_level"]["raw"]
    assert raw["mae"] == pytest.approx(0.0, abs=TOL)


def test_meta_compares_turn_scores_with_the_users_thumbs() -> None:
    # Three two-turn sessions, thumbs up on turn 1 and down on turn 2; a
    # satisfaction judge rating turn 1 above turn 2 everywhere separates them perfectly
    # (AUC 1, computed by hand), and a link judge whose turn-2 link is labelled lower too.
    sessions = [
        dataclasses.replace(s, gold=dataclasses.replace(s.gold, thumbs=(1, 0)))
        for s in _sessions(3)
    ]
    turns = [
        Label(JudgmentKey(s.session_id, turn, "turn", "satisfaction.geval", "v1"), value)
        for s in sessions
        for turn, value in ((1, 8), (2, 3))
    ]
    out = score_labels(sessions, turns, kind="satisfaction", n_boot=0)
    block = out["feedback"]["turn"]["label"]
    assert (block["n"], block["n_up"], block["n_down"]) == (6, 3, 3)
    assert block["auc"] == pytest.approx(1.0, abs=TOL)
    assert out["feedback"]["score"] == "turn label"
    links = _links(sessions, lambda t, k: 3 if t == 1 else 1)
    out = score_labels(sessions, links, kind="link_usefulness", n_boot=0)
    assert out["feedback"]["score"] == "mean link label of the turn"
    assert out["feedback"]["turn"]["label"]["auc"] == pytest.approx(1.0, abs=TOL)
    assert "expected" not in out["feedback"]["turn"]  # the labels carry no expected value
    # Without thumbs there is no block.
    assert "feedback" not in score_labels(_sessions(3), links, kind="link_usefulness", n_boot=0)


def test_meta_cli_prints_thumbs_agreement_for_a_product_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "product_feedback.jsonl"
    code = main(
        [
            "meta",
            str(fixture),
            "--judge",
            "link_usefulness.dna",
            "--provider",
            "offline",
            "--bootstrap",
            "200",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    # The fixture: 18 turns, 17 with thumbs (11 up, 6 down); two of the thumbs-down turns
    # (fb-005, fb-008) cite no link, so they have no link label to compare.
    assert "thumbs vs mean link label of the turn (label): auc" in out
    assert "n 15 (11 up, 4 down)" in out
