"""Real judgments from a real model: every judge against a local OpenAI-compatible server.

Opt-in (``pytest --runlocal``), skipped cleanly when nothing answers at
``$GENIR_LOCAL_BASE_URL`` (default http://127.0.0.1:8091/v1; model ``$GENIR_LOCAL_MODEL``,
default ``local``). ``../shared/localllm`` starts such a server on this machine with a 1.5B
model on the CPU; each judgment takes seconds, so each test judges one real URGE turn.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from genir_eval.ingest import load_sessions
from genir_eval.judges import Label, make_judge
from genir_eval.llm import EngineConfig, open_engine
from genir_eval.llm.providers.openai_provider import OpenAIProvider
from genir_eval.records import Session

pytestmark = pytest.mark.local

# URGE sample row 4: a Factual QA session whose first turn is short and cites 3 links.
SESSION_ID = "urge-4"

RANGES: dict[str, tuple[float, float]] = {
    "link_usefulness": (0, 3),
    "satisfaction": (1, 10),
}

JUDGES = [
    "link_usefulness.dna",
    "link_usefulness.true",
    "link_usefulness.listwise",
    "spans",
    "satisfaction.geval",
    "satisfaction.urs",
    "satisfaction.gah",
    "item-vanilla",
    "rubric-yesno",
    "nuggets",
]
#: Options a judge needs on a small local model: the nugget judge's reply schema bounds its
#: lists (left free, the 1.5B model repeats a phrase until its token budget ends), and its
#: nuggets come from the turn's own sources (no run to pool).
OPTIONS: dict[str, dict[str, Any]] = {
    "nuggets": {
        "response_format": "json_schema",
        "pool": "turn",
        "max_nuggets": 8,
        "max_source_chars": 400,
    },
}


@pytest.fixture(scope="module")
def one_turn(urge_sample_path: Any) -> Session:
    sessions = {s.session_id: s for s in load_sessions(urge_sample_path).sessions}
    session = sessions[SESSION_ID]
    return dataclasses.replace(session, turns=session.turns[:1])


def _judge(local_llm: Any, name: str, session: Session) -> tuple[Any, list[Label]]:
    async def go() -> tuple[Any, list[Label]]:
        provider = OpenAIProvider(
            model=local_llm.model, base_url=local_llm.base_url, api_key="local", timeout=600
        )
        config = EngineConfig(concurrency=1, timeout=600, deadline=1800)
        engine = open_engine(config, provider, quiet=True)
        judge = make_judge(name, **OPTIONS.get(name, {}))
        try:
            return judge, await judge(session, engine)
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("name", JUDGES)
def test_judge_answers_cleanly(local_llm: Any, one_turn: Session, name: str) -> None:
    judge, labels = _judge(local_llm, name, one_turn)
    assert labels, f"{name} returned no label"
    missing = [(lb.key.item, lb.missing_reason) for lb in labels if lb.value is None]
    assert not missing, f"{name}: missing labels {missing}"
    assert judge.stats.parse_failures == 0, f"{name}: {judge.stats.rates()}"
    assert judge.stats.truncations == 0, f"{name}: {judge.stats.rates()}"
    low_high = RANGES.get(judge.kind)
    if low_high is not None:
        graded = [lb for lb in labels if isinstance(lb.value, int | float)]
        assert graded, f"{name}: no graded label"
        for label in graded:
            assert low_high[0] <= label.value <= low_high[1], (label.key.item, label.value)
    if judge.kind == "link_usefulness":
        turn = one_turn.turns[0]
        assert {lb.key.item for lb in labels} == {f"link:{i}" for i in turn.cited_link_ids}
