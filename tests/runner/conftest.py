from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from genir_eval.rundir.folder import SessionRow, TurnRow, write_run

RunFactory = Callable[..., Path]


@pytest.fixture
def make_scores_run(tmp_path: Path) -> RunFactory:
    """A run directory whose sessions have the given ``sdcg_urge`` scores (one turn each)."""

    def make(name: str, scores: Mapping[str, float | None], metric: str = "sdcg_urge") -> Path:
        sessions = [SessionRow(sid, n_turns=1, scores={metric: v}) for sid, v in scores.items()]
        turns = [TurnRow(sid, 1, scores={metric: v}) for sid, v in scores.items()]
        info = {"version": 1, "scenario": {"name": name, "meta": {"headline": metric}}}
        return write_run(
            tmp_path / name, links=[], turns=turns, sessions=sessions, meta=None, info=info
        )

    return make


@pytest.fixture
def make_turn_run(tmp_path: Path) -> RunFactory:
    """A run directory whose sessions have two turns each, with their own ``sdcg_urge``
    scores: ``scores`` maps a session id to ``(session score, turn 1, turn 2)``, so the
    session and turn levels differ."""

    def make(name: str, scores: Mapping[str, tuple[float, float, float]]) -> Path:
        metric = "sdcg_urge"
        sessions = [
            SessionRow(sid, n_turns=2, scores={metric: s}) for sid, (s, _, _) in scores.items()
        ]
        turns = [
            TurnRow(sid, turn, scores={metric: value})
            for sid, values in scores.items()
            for turn, value in ((1, values[1]), (2, values[2]))
        ]
        info = {"version": 1, "scenario": {"name": name, "meta": {"headline": metric}}}
        return write_run(
            tmp_path / name, links=[], turns=turns, sessions=sessions, meta=None, info=info
        )

    return make
