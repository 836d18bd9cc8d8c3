"""Log-probabilities from a provider are checked before anything reads or caches them.

A log-probability above 0 (710 overflowed ``math.exp``: every run of that server crashed),
NaN or ``+inf`` is not one: the reply is malformed, retried like one, and when every attempt
gets it the judgment is missing with the reason; nothing is cached. ``-inf`` (probability 0)
is one, and a rounding just above 0 reads as 0.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from llm_helpers import make_request, openai_engine

from genir_eval.llm import Cache, Completion, Failure
from genir_eval.llm.providers.base import ProviderError
from genir_eval.llm.providers.openai_provider import _completion
from genir_eval.testing import FakeLLMServer, FakeRequest
from genir_eval.testing.fake_llm_server import ScriptedReply


def _body(logprob: object, top: object = -0.5) -> dict[str, object]:
    return {
        "model": "m",
        "choices": [
            {
                "message": {"content": "2"},
                "finish_reason": "stop",
                "logprobs": {
                    "content": [
                        {
                            "token": "2",
                            "logprob": logprob,
                            "top_logprobs": [
                                {"token": "2", "logprob": logprob},
                                {"token": "3", "logprob": top},
                            ],
                        }
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }


@pytest.mark.parametrize(
    "value",
    [710.0, 1e308, float("nan"), float("inf"), 0.5, "-0.1", True, None],
    ids=["710", "1e308", "nan", "inf", "positive", "text", "bool", "null"],
)
def test_a_value_that_is_no_log_probability_makes_the_reply_malformed(value: object) -> None:
    with pytest.raises(ProviderError) as caught:
        _completion(_body(value))
    assert caught.value.error_class == "transient"
    assert "log-probability" in str(caught.value)


def test_an_alternative_out_of_range_is_caught_too() -> None:
    with pytest.raises(ProviderError, match="log-probability"):
        _completion(_body(-0.1, top=800.0))


@pytest.mark.parametrize(
    ("value", "read"),
    [(-0.25, -0.25), (0.0, 0.0), (4e-7, 0.0), (float("-inf"), float("-inf"))],
)
def test_log_probabilities_read(value: float, read: float) -> None:
    completion = _completion(_body(value))
    assert completion.logprobs is not None
    assert completion.logprobs[0].logprob == read


def test_a_server_that_always_sends_710_gives_a_missing_judgment_not_a_crash(
    tmp_path: Path,
) -> None:
    calls: list[FakeRequest] = []

    def reply(request: FakeRequest) -> ScriptedReply:
        calls.append(request)
        return ScriptedReply("2", logprobs=(("2", 710.0, (("3", -1.0),)),))

    with FakeLLMServer(reply=reply) as server:

        async def go() -> Completion | Failure:
            async with openai_engine(
                server, cache_path=tmp_path / "c.sqlite", max_attempts=3
            ) as engine:
                return await engine.complete(make_request(0, logprobs=True, top_logprobs=2))

        result = asyncio.run(go())
    assert isinstance(result, Failure)
    assert "log-probability" in result.message
    assert len(calls) == 3  # retried as a malformed reply, then given up
    with Cache(tmp_path / "c.sqlite") as cache:
        assert cache.stats()["rows"] == 0


def test_a_bad_reply_then_a_good_one_is_used(tmp_path: Path) -> None:
    replies = iter(
        [
            ScriptedReply("2", logprobs=(("2", float("nan"), ()),)),
            ScriptedReply("2", logprobs=(("2", -0.2, (("3", -1.8),)),)),
        ]
    )

    with FakeLLMServer(reply=lambda request: next(replies)) as server:

        async def go() -> Completion | Failure:
            async with openai_engine(server, max_attempts=3) as engine:
                return await engine.complete(make_request(0, logprobs=True, top_logprobs=2))

        result = asyncio.run(go())
    assert isinstance(result, Completion) and result.logprobs is not None
    assert result.logprobs[0].logprob == pytest.approx(-0.2)
