"""Expected labels from token logprobs (and from samples), by hand and through the judges."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from judge_helpers import run_judge, tiny_session

from genir_eval.judges.probabilities import (
    label_distribution,
    sample_distribution,
    value_offset,
    value_offsets,
)
from genir_eval.llm.providers.base import Completion, TokenLogprob
from genir_eval.testing.fake_llm_server import FakeLLMServer, FakeRequest, ScriptedReply

TOL = 1e-9
ln = math.log
Script = Callable[[FakeRequest], Any]


def _completion(tokens: list[tuple[str, float, tuple[tuple[str, float], ...]]]) -> Completion:
    return Completion(
        text="".join(t[0] for t in tokens),
        logprobs=tuple(TokenLogprob(t, lp, top) for t, lp, top in tokens),
    )


def test_expected_label_and_entropy_by_hand() -> None:
    # '{"O": 2}' with p(2) = .5, p(3) = .3, p(1) = .1 and a non-label "x" at .1.
    # By hand: label mass .9 -> p = (5/9, 3/9, 1/9) over (2, 3, 1);
    # expected = (10 + 9 + 1) / 9 = 20/9; entropy = -sum p log2 p.
    completion = _completion(
        [
            ('{"O": ', 0.0, ()),
            ("2", ln(0.5), (("3", ln(0.3)), ("1", ln(0.1)), ("x", ln(0.1)))),
            ("}", 0.0, ()),
        ]
    )
    offset = value_offset(completion.text, "O")
    assert offset == 6
    found = label_distribution(completion, offset, (0, 1, 2, 3))
    assert found is not None
    assert found.expected == pytest.approx(20 / 9, abs=TOL)
    p = [5 / 9, 3 / 9, 1 / 9]
    assert found.entropy_bits == pytest.approx(-sum(q * math.log2(q) for q in p), abs=TOL)
    assert found.coverage == pytest.approx(0.9, abs=TOL)
    assert found.argmax == 2


def test_leading_space_tokens_and_quotes_count_as_labels() -> None:
    completion = _completion(
        [('{"label":', 0.0, ()), (" 3", ln(0.8), ((" 2", ln(0.2)),)), ("}", 0.0, ())]
    )
    found = label_distribution(completion, value_offset(completion.text, "label"), (0, 1, 2, 3))
    assert found is not None and found.expected == pytest.approx(2.8, abs=TOL)


def test_ten_on_a_digit_split_tokenizer() -> None:
    # "10" written as "1" "0": p("1") = .6 splits by the next token's p("0") = .75 into
    # 10 (.45) and 1 (.15); p("9") = .4. By hand: expected = (4.5 + .15 + 3.6) / 1.0 = 8.25.
    completion = _completion(
        [
            ('{"s": ', 0.0, ()),
            ("1", ln(0.6), (("9", ln(0.4)),)),
            ("0", ln(0.75), ((",", ln(0.25)),)),
            ("}", 0.0, ()),
        ]
    )
    found = label_distribution(completion, 6, range(1, 11))
    assert found is not None
    assert found.probabilities == pytest.approx({1: 0.15, 9: 0.4, 10: 0.45}, abs=TOL)
    assert found.expected == pytest.approx(8.25, abs=TOL)
    # The reply chose "9": what would follow a "1" is unknown, so its mass is unresolved.
    other = _completion([('{"s": ', 0.0, ()), ("9", ln(0.7), (("1", ln(0.3)),)), ("}", 0.0, ())])
    found = label_distribution(other, 6, range(1, 11))
    assert found is not None
    assert found.probabilities == {9: 1.0}
    assert found.unresolved == pytest.approx(0.3, abs=TOL)


def test_no_distribution_without_logprobs_or_off_a_token_start() -> None:
    assert label_distribution(Completion(text='{"O": 2}'), 6, (0, 1, 2, 3)) is None
    completion = _completion([('{"O": 2', 0.0, ()), ("}", 0.0, ())])
    assert label_distribution(completion, 6, (0, 1, 2, 3)) is None


def test_sample_distribution_and_offsets() -> None:
    found = sample_distribution([3, 2, 3, None])
    assert found is not None
    assert found.expected == pytest.approx(8 / 3, abs=TOL)
    assert found.source == "3 samples"
    assert sample_distribution([None]) is None
    assert value_offsets('{"judges": [{"O": 1}, {"O": 3}]}', "O") == [18, 28]


def _dna_tokens(o: str, alternatives: tuple[tuple[str, float], ...]) -> tuple:
    return (
        ('{"M": 2, "T": 2, "O": ', 0.0, ()),
        (o, alternatives[0][1], alternatives[1:]),
        ("}", 0.0, ()),
    )


def test_dna_judge_reports_argmax_and_expected_label(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    # Every link answers O = 2 (argmax), with p(2) = .6, p(3) = .4 -> expected 2.4 by hand.
    tokens = _dna_tokens("2", (("2", ln(0.6)), ("3", ln(0.4))))
    requests: list[FakeRequest] = []

    def script(request: FakeRequest) -> ScriptedReply:
        requests.append(request)
        return ScriptedReply("".join(t[0] for t in tokens), tokens)

    judge, labels = run_judge(fake_server(script), "link_usefulness.dna", [tiny_session()])
    assert [lb.value for lb in labels] == [2, 2, 2]
    assert all(lb.extra["expected"] == pytest.approx(2.4, abs=TOL) for lb in labels)
    assert all(lb.extra["expected_source"] == "logprobs" for lb in labels)
    body = requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 10
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 64


def test_dna_json_schema_option_sends_the_reply_schema(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    requests: list[FakeRequest] = []

    def script(request: FakeRequest) -> str:
        requests.append(request)
        return '{"M": 1, "T": 2, "O": 1}'

    run_judge(
        fake_server(script), "link_usefulness.dna", [tiny_session()], response_format="json_schema"
    )
    fmt = requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["M", "T", "O"]
    assert schema["properties"]["O"]["enum"] == [0, 1, 2, 3]


def test_true_judge_samples_when_the_provider_gives_no_logprobs(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    # With logprobs off and samples=3, the greedy reply (temperature 0) says 3 and the two
    # sampled ones (temperature 0.7) say 1 and 2: argmax 3, expected (3 + 1 + 2) / 3 = 2.
    # The links are judged concurrently, so each question (its prompt) counts its own
    # sampled replies: the first says 1, the second 2, whatever the interleaving.
    asked: dict[str, int] = {}

    def ordered(request: FakeRequest) -> str:
        if request.body["temperature"] == 0:
            return json.dumps({"reasoning": "the page answers it", "label": 3})
        assert "logprobs" not in request.body
        asked[request.last_user_text] = asked.get(request.last_user_text, 0) + 1
        label = asked[request.last_user_text]
        return json.dumps({"reasoning": "the page answers it", "label": label})

    judge, labels = run_judge(
        fake_server(ordered), "link_usefulness.true", [tiny_session()], logprobs=False, samples=3
    )
    assert [lb.value for lb in labels] == [3, 3, 3]
    for label in labels:
        assert label.extra["samples"][0] == 3 and sorted(label.extra["samples"][1:]) == [1, 2]
        assert label.extra["expected"] == pytest.approx(2.0, abs=TOL)
        assert label.extra["expected_source"] == "3 samples"
    assert judge.stats.calls == 9


def test_listwise_judge_reads_each_links_distribution(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    # Turn 1 labels links 1 and 2: '{"labels": {"1": 3, "2": 0}}'; link 1 p(3) = .5,
    # p(2) = .5 -> 2.5; link 2 p(0) = 1 -> 0. Turn 2 (link 1 only) gets no logprobs at its
    # value (a token that does not start at it) and so no expected label.
    turn1 = (
        ('{"labels": {"1": ', 0.0, ()),
        ("3", ln(0.5), (("2", ln(0.5)),)),
        (', "2": ', 0.0, ()),
        ("0", 0.0, ()),
        ("}}", 0.0, ()),
    )
    turn2 = (('{"labels": {"1": 1}}', 0.0, ()),)

    def script(request: FakeRequest) -> ScriptedReply:
        tokens = turn1 if "[2]" in request.last_user_text else turn2
        return ScriptedReply("".join(t[0] for t in tokens), tokens)

    _, labels = run_judge(fake_server(script), "link_usefulness.listwise", [tiny_session()])
    by_item = {(lb.key.turn, lb.key.item): lb for lb in labels}
    assert by_item[(1, "link:1")].value == 3
    assert by_item[(1, "link:1")].extra["expected"] == pytest.approx(2.5, abs=TOL)
    assert by_item[(1, "link:2")].extra["expected"] == pytest.approx(0.0, abs=TOL)
    assert "expected" not in by_item[(2, "link:1")].extra


def test_geval_expected_rating_resolves_a_two_token_ten(
    fake_server: Callable[[Script], FakeLLMServer],
) -> None:
    # '{"scores": [10, 6, 7]}' from a digit-splitting tokenizer. Turn 1: p("1") = .8 then
    # p("0" | "1") = 1 -> 10 at .8, and p("9") = .2: expected 8 + 1.8 = 9.8 by hand (G-Eval's
    # old weighted rating has none here: the number spans two tokens). Turn 2: 6 alone.
    # Session: p(7) = .5, p(8) = .5 -> 7.5.
    tokens = (
        ('{"scores": [', 0.0, ()),
        ("1", ln(0.8), (("9", ln(0.2)),)),
        ("0", 0.0, ()),
        (", ", 0.0, ()),
        ("6", 0.0, ()),
        (", ", 0.0, ()),
        ("7", ln(0.5), (("8", ln(0.5)),)),
        ("]}", 0.0, ()),
    )
    text = "".join(t[0] for t in tokens)
    _, labels = run_judge(
        fake_server(lambda request: ScriptedReply(text, tokens)),
        "satisfaction.geval",
        [tiny_session()],
    )
    assert [lb.value for lb in labels] == [10, 6, 7]
    expected = [lb.extra.get("expected") for lb in labels]
    assert expected == pytest.approx([9.8, 6.0, 7.5], abs=TOL)
    assert "weighted" not in labels[0].extra
    assert labels[2].extra["entropy_bits"] == pytest.approx(1.0, abs=TOL)


def test_reply_inside_a_stripped_code_fence_is_aligned() -> None:
    # As llama.cpp's JSON mode returns it (recorded from the local server): the tokens
    # spell '```json\n{\n  "O": 2\n}\n```', the reply is the JSON inside. By hand: p(2) =
    # e^-.9, p(3) = e^-1.1, p(1) = e^-1.85, p(0) = e^-2.28, normalised.
    tokens = [
        ("```", -0.7, ()),
        ("json", 0.0, ()),
        ("\n", 0.0, ()),
        ("{\n", -0.68, ()),
        (" ", 0.0, ()),
        (' "', 0.0, ()),
        ("O", 0.0, ()),
        ('":', 0.0, ()),
        (" ", 0.0, ()),
        ("2", -0.9, (("3", -1.1), ("1", -1.85), ("0", -2.28))),
        ("\n", 0.0, ()),
        ("}\n", 0.0, ()),
        ("```", 0.0, ()),
    ]
    completion = Completion(
        text='{\n  "O": 2\n}',
        logprobs=tuple(TokenLogprob(t, lp, top) for t, lp, top in tokens),
    )
    found = label_distribution(completion, value_offset(completion.text, "O"), (0, 1, 2, 3))
    assert found is not None
    p = {2: math.exp(-0.9), 3: math.exp(-1.1), 1: math.exp(-1.85), 0: math.exp(-2.28)}
    total = sum(p.values())
    assert found.expected == pytest.approx(sum(k * v for k, v in p.items()) / total, abs=TOL)
    # A reply that is not inside the generated text gets no distribution.
    other = Completion(text='{"O": 2}', logprobs=completion.logprobs)
    assert label_distribution(other, value_offset(other.text, "O"), (0, 1, 2, 3)) is None
