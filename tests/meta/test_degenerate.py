"""Constant labels and reasons copied from the prompt."""

from __future__ import annotations

import json

import pytest

from genir_eval.meta.degenerate import copied_share, degeneracy, label_spread, reason_texts

TOL = 1e-9

RUBRIC = (
    "Rate how useful the linked page is for the user's task on a scale from 0 to 3. "
    "3 means the page fully answers the need and is trustworthy. "
    "Query: {query}\nTitle: {title}\n"
)


def test_label_spread_by_hand() -> None:
    # (3, 3, 3, 1): mode 3 at 3/4; entropy -(.75 log2 .75 + .25 log2 .25) = 0.8112781245
    out = label_spread([3, 3, None, 3, 1])
    assert (out["n"], out["distinct"], out["mode"]) == (4, 2, 3)
    assert out["mode_share"] == pytest.approx(0.75, abs=TOL)
    assert out["entropy_bits"] == pytest.approx(0.8112781245, abs=1e-9)
    assert not out["constant"] and not out["nearly_constant"]


def test_constant_and_nearly_constant() -> None:
    assert label_spread([3] * 41)["constant"]
    nearly = label_spread([3] * 19 + [2])
    assert nearly["nearly_constant"] and not nearly["constant"]
    assert not label_spread([])["constant"]


def test_reason_texts_reads_json_strings_or_the_whole_reply() -> None:
    raw = json.dumps({"O": 3, "reasoning": "the page explains the installation steps well"})
    assert reason_texts(raw) == ["the page explains the installation steps well"]
    assert reason_texts('{"O": 2}') == []
    assert reason_texts("The page is useful because it answers the question.") == [
        "The page is useful because it answers the question."
    ]


def test_copied_share_counts_instruction_ngrams() -> None:
    copy = "3 means the page fully answers the need and is trustworthy"
    assert copied_share(copy, [RUBRIC]) == pytest.approx(1.0, abs=TOL)
    own = "the guide lists every command needed to install the package on linux"
    assert copied_share(own, [RUBRIC]) == pytest.approx(0.0, abs=TOL)
    # Chinese: character 8-grams
    assert (
        copied_share(
            "请根据用户的任务判断网页的有用程度", ["请根据用户的任务判断网页的有用程度，0到3分。"]
        )
        == 1.0
    )


def test_degeneracy_flags_a_collapsed_judge() -> None:
    reply = json.dumps(
        {"reasoning": "3 means the page fully answers the need and is trustworthy", "O": 3}
    )
    out = degeneracy([3] * 41, [reply] * 41, [RUBRIC])
    assert out["flags"] == ["constant", "copies_prompt", "repeats_one_reason"]
    assert "every one of its 41 labels is 3" in out["note"]
    assert out["reasons"]["copy_rate"] == pytest.approx(1.0, abs=TOL)


def test_degeneracy_quiet_for_a_judge_that_judges() -> None:
    replies = [
        json.dumps(
            {"reasoning": f"page {i} covers topic {i} with concrete examples of use", "O": i % 4}
        )
        for i in range(12)
    ]
    out = degeneracy([i % 4 for i in range(12)], replies, [RUBRIC])
    assert out["flags"] == [] and out["note"] == ""


def test_the_true_judges_collapse_on_a_small_model_is_flagged() -> None:
    # Recorded from Qwen2.5-Coder-1.5B-Instruct (llama.cpp, json_schema) judging URGE sample
    # row 7 with link_usefulness.true under its earlier prompt: the reasoning is that
    # prompt's Chinese label-3 line, quoted here as the instruction it copied (the current
    # prompt was rewritten so the model no longer does this).
    reply = (
        '{\n  "reasoning": "网页直接服务于用户任务，标题及引用它的语句与查询和意图匹配；'
        "回答引用它次数多、位置靠前；用户满意，且引用它的语句包含用户标记为有用的文字。"
        '",\n  "label": 3\n}'
    )
    earlier_rubric = (
        "标签 3（非常有用）：网页直接服务于用户任务；标题及引用它的语句与查询和意图匹配；"
        "回答引用它次数多、位置靠前；用户满意，且引用它的语句包含用户标记为有用的文字；"
    )
    instructions = [earlier_rubric]
    out = degeneracy([3] * 4, [reply] * 4, instructions)
    assert out["flags"] == ["constant", "copies_prompt", "repeats_one_reason"]
    assert out["reasons"]["median_copied_share"] > 0.5
