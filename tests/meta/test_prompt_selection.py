"""Prompt selection over random query splits (Thomas et al.)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from genir_eval.ingest import load_sessions
from genir_eval.judges.prompting import load_template
from genir_eval.llm import offline_engine
from genir_eval.meta.prompt_selection import select_prompts, split_selection


def _queries(n: int, good: bool) -> dict[Any, list[tuple[float | None, int]]]:
    # A "good" variant predicts gold exactly; a "bad" one reverses it (constructed by hand).
    out = {}
    for q in range(n):
        gold = [0, 1, 2, 3]
        out[("s", q)] = [(float(g if good else 3 - g), g) for g in gold]
    return out


def test_split_selection_finds_the_better_variant() -> None:
    per_variant = {"baseline": _queries(20, good=False), "better": _queries(20, good=True)}
    result = split_selection(per_variant, n_splits=50, seed=1)
    assert result["most_frequent_winner"] == "better"
    assert result["selection_wins"] == {"better": 50}
    assert result["best_beats_baseline_rate"] == 1.0
    assert result["mean_heldout_margin"] == pytest.approx(2.0, abs=1e-12)  # 1 - (-1)


def test_select_prompts_offline_with_paraphrase(urge_sample_path: Path, tmp_path: Path) -> None:
    paraphrase = tmp_path / "plain.txt"
    paraphrase.write_text(
        load_template("link_dna", "zh").replace("非常有用", "很有用"), encoding="utf-8"
    )
    sessions = load_sessions(urge_sample_path).sessions

    async def go() -> dict[str, Any]:
        engine = offline_engine(quiet=True)
        try:
            return await select_prompts(
                sessions, engine, paraphrases=[paraphrase], n_splits=40, seed=3
            )
        finally:
            await engine.aclose()

    result = asyncio.run(go())
    assert "paraphrase:plain" in result["variants"]
    assert result["n_queries"] == 30 and result["n_splits"] == 40
    assert sum(result["selection_wins"].values()) == 40
    assert 0.0 <= result["best_beats_baseline_rate"] <= 1.0
    # The offline twin ignores the prompt's wording: a paraphrase scores as the baseline.
    assert (
        result["variants"]["paraphrase:plain"]["spearman"]
        == result["variants"]["baseline"]["spearman"]
    )
