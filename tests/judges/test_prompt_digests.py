"""Every judge's prompts, rendered for the fixture session, are those of the checked-in table.

``bench/prompt_digests.tsv`` holds a digest of each registered judge's requests (messages,
role by role, and the settings sent with them) in both prompt languages for
``fixtures/prompt_session.jsonl``. A change that moves what a model reads fails here until
the table is rewritten (``python bench/prompt_digests.py --write``) in the same commit, so
the commit that changes a prompt says so, and the real model's figures can be measured
again for the judges it moved.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from genir_eval.judges.prompt_digests import judge_prompts

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "prompt_digests", ROOT / "bench" / "prompt_digests.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
TABLE = BENCH.read_table()


@pytest.fixture(scope="module")
def session():
    return BENCH.fixture_session()


def test_the_table_lists_every_judge_in_both_languages() -> None:
    from genir_eval.judges import judge_names

    assert set(TABLE) == {(name, lang) for name in judge_names() for lang in ("en", "zh")}


@pytest.mark.parametrize(("judge", "language"), sorted(TABLE))
def test_prompts_are_the_tables(session, judge: str, language: str) -> None:
    prompts = judge_prompts(judge, session, language)
    assert prompts.requests, f"{judge} rendered no prompt"
    assert prompts.digest == TABLE[(judge, language)], (
        f"{judge} [{language}]: what the model reads changed. If that is meant, rewrite the "
        "table (python bench/prompt_digests.py --write) in this commit and measure the real "
        "model again (README, judge quality); see python bench/prompt_digests.py --show "
        f"{judge} --language {language}"
    )


def test_the_fixture_holds_what_prompt_building_treats_specially(session) -> None:
    """The digests can only see a change to how blank-line runs, chat tokens and fence
    lines are handled if the fixture holds them."""
    texts = [s.text for t in session.turns for s in t.statements]
    texts += [str(link.text) for t in session.turns for link in t.links]
    joined = "\n".join(texts)
    assert "\n\n\n" in joined
    assert "<|im_start|>" in joined and "[INST]" in joined and "<<<END" in joined


def test_a_one_character_change_of_a_value_moves_the_digest(session) -> None:
    first = session.turns[0]
    query = first.query + "!"
    changed = replace(session, turns=(replace(first, query=query), *session.turns[1:]))
    before = judge_prompts("link_usefulness.dna", session, "en")
    after = judge_prompts("link_usefulness.dna", changed, "en")
    assert before.digest != after.digest


def test_a_setting_sent_beside_the_messages_moves_the_digest(session) -> None:
    prompts = judge_prompts("link_usefulness.dna", session, "en")
    request = json.loads(json.dumps(prompts.requests[0]))
    request["config"]["max_tokens"] += 1
    moved = replace(prompts, requests=(request, *prompts.requests[1:]))
    assert moved.digest != prompts.digest


def test_show_gives_each_message_with_its_role(session) -> None:
    prompts = judge_prompts("link_usefulness.dna", session, "zh")
    shown = prompts.show()
    for request in prompts.requests:
        for role, content in request["messages"]:
            assert f"=== {role} ===\n{content}" in shown


def test_check_names_the_judge_that_moved(session) -> None:
    prompts = [judge_prompts("spans", session, "en")]
    table = {("spans", "en"): "0" * 16}
    assert BENCH.differences(prompts, table) == [
        f"spans [en]: table {'0' * 16}, now {prompts[0].digest}"
    ]
    assert BENCH.differences(prompts, {("spans", "en"): prompts[0].digest}) == []
