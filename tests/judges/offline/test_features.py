"""The satisfaction twins' log signals on tiny inline sessions (invented data)."""

from __future__ import annotations

import pytest
from judge_helpers import run_judge

from genir_eval.judges.offline.features import (
    citation_support,
    clarity,
    copy_words,
    key_terms,
    query_similarity,
    reformulation,
    sentence_count,
    synthesis,
    term_coverage,
    turn_evidence,
)
from genir_eval.judges.offline.twins import (
    answer_quality,
    dimension_readings,
    session_reading,
    turn_rating,
    weighted_overall,
)
from genir_eval.judges.satisfaction.common import GAH_DIMENSIONS, URS_DIMENSIONS
from genir_eval.records import Link, Session, Statement, Turn

ANSWER = "Servers answer requests from other computers over a network."


def _turn(index: int, query: str, response: str = ANSWER, cited: bool = True) -> Turn:
    return Turn(
        index=index,
        query=query,
        response_text=response,
        statements=(Statement(response, (1,) if cited else ()),),
    )


def _session(*turns: Turn, intent: str | None = None) -> Session:
    return Session(session_id="s", turns=turns, task_type="Factual QA", intent=intent)


@pytest.mark.parametrize(
    "text, expected",
    [
        # source: Lucene CJKAnalyzer / StandardAnalyzer behaviour, worked by hand
        ("服务器价格", {"服务", "务器", "器价", "价格"}),
        ("价", {"价"}),
        ("What is a web server?", {"what", "web", "server"}),
        ("11月 nginx 新闻", {"11", "月", "nginx", "新闻"}),
        ("I am", {"am"}),
    ],
)
def test_key_terms(text: str, expected: set[str]) -> None:
    assert key_terms(text) == expected


def test_query_similarity_is_jaccard_of_key_terms() -> None:
    # {web, server, price} vs {web, server, cost}: 2 shared of 4, by hand
    assert query_similarity("web server price", "the web server cost") == pytest.approx(0.5)
    assert query_similarity("web server", "") == 0.0


def test_reformulation_reads_the_next_query_only() -> None:
    session = _session(
        _turn(1, "web server price"),
        _turn(2, "web server price per month"),
        _turn(3, "hiking boots"),
    )
    first, second, last = session.turns
    assert reformulation(session, first) == pytest.approx(3 / 5)  # by hand
    assert reformulation(session, second) == 0.0  # topic shift: no evidence
    assert reformulation(session, last) is None  # nothing follows


def test_a_reformulated_follow_up_lowers_the_previous_turn() -> None:
    asked = _turn(1, "servers network requests")
    moved_on = _session(asked, _turn(2, "hiking boots"))
    reasked = _session(asked, _turn(2, "servers network requests explained"))
    alone = _session(asked)

    def readings(session: Session) -> dict[str, float]:
        return dimension_readings(turn_evidence(session, session.turns[0]))

    # a topic shift and the end of the session are neutral
    assert readings(moved_on) == readings(alone)
    assert turn_rating(moved_on, asked) == turn_rating(alone, asked)
    # re-asking lowers user satisfaction (URS) and the G-Eval rating, not the answer's facts
    assert readings(reasked)["user_satisfaction"] < readings(alone)["user_satisfaction"]
    assert turn_rating(reasked, asked) < turn_rating(alone, asked)
    assert readings(reasked)["factuality"] == readings(alone)["factuality"]
    # GAH rates the answer alone: the user's behaviour does not enter its dimensions
    gah = {d: readings(reasked)[d] for d in GAH_DIMENSIONS}
    assert gah == {d: readings(alone)[d] for d in GAH_DIMENSIONS}


def test_query_term_coverage_raises_completeness() -> None:
    query = "server price per month"
    covered = _turn(1, query, "A small server costs a low price per month.")
    missed = _turn(1, query, "Hiking boots should fit well.")
    assert term_coverage(query, covered.response_text) == 1.0
    assert term_coverage(query, missed.response_text) == 0.0
    session = _session(covered)
    assert dimension_readings(turn_evidence(session, covered))["completeness"] == 1.0
    assert dimension_readings(turn_evidence(_session(missed), missed))["completeness"] == 0.0


def test_intent_alignment_falls_back_to_the_query_without_intent() -> None:
    turn = _turn(1, "server price", "The server price is low.")
    assert turn_evidence(_session(turn), turn).intent_alignment == 1.0
    with_intent = _session(turn, intent="hiking boots")
    assert turn_evidence(with_intent, turn).intent_alignment == 0.0


def test_citation_support_weighs_statements_by_their_text() -> None:
    turn = Turn(
        index=1,
        query="q",
        response_text="",
        statements=(Statement("a" * 30, (1,)), Statement("b" * 10, (2, 3)), Statement("c" * 60)),
    )
    assert citation_support(turn) == pytest.approx(40 / 100)  # by hand
    assert citation_support(_turn(1, "q", cited=False)) == 0.0


def test_cited_coverage_reads_only_cited_statements() -> None:
    turn = Turn(
        index=1,
        query="server price",
        response_text="Servers are computers. The price is low.",
        statements=(Statement("Servers are computers.", (1,)), Statement("The price is low.")),
    )
    assert turn_evidence(_session(turn), turn).cited_coverage == pytest.approx(0.0)
    assert turn_evidence(_session(turn), turn).query_coverage == pytest.approx(0.5)


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("One. Two! Three?", 3),
        ("一句。两句！三句？", 3),
        ("1. Pick a plan with 2.5 GB", 1),  # a list number and a decimal point are no ends
        ("", 0),
    ],
)
def test_sentence_count(text: str, sentences: int) -> None:
    assert sentence_count(text) == sentences


def test_clarity_is_free_of_length() -> None:
    sentence = "Servers answer requests."
    assert clarity(sentence) == 1.0  # a short answer
    assert clarity("\n".join([f"- {sentence}"] * 20)) == 1.0  # a long list
    wall = " ".join([sentence] * 20)
    assert clarity(wall) == pytest.approx(5 / 20)  # one block of 20 sentences, by hand
    assert clarity("\n\n".join([" ".join([sentence] * 5)] * 4)) == 1.0  # the same, paragraphed


def test_designs_weigh_their_emphasised_dimensions_twice() -> None:
    readings = {d: 0.0 for d in (*GAH_DIMENSIONS, *URS_DIMENSIONS["Factual QA"])}
    readings.update(factuality=1.0, correctness=1.0)
    urs = URS_DIMENSIONS["Factual QA"]
    assert weighted_overall(readings, urs, "urs") == pytest.approx(2 / 7)  # by hand
    assert weighted_overall(readings, GAH_DIMENSIONS, "gah") == pytest.approx(2 / 7)
    readings.update(correctness=0.0)
    assert weighted_overall(readings, GAH_DIMENSIONS, "gah") == 0.0
    assert weighted_overall(readings, ("factuality", "clarity"), "none") == pytest.approx(0.5)


def test_dimensions_without_a_log_signal_read_answer_quality() -> None:
    turn = _turn(1, "servers network", "Hiking boots.", cited=False)
    evidence = turn_evidence(_session(turn), turn)
    readings = dimension_readings(evidence, ("creativity", "a_custom_dimension", "factuality"))
    assert readings == {
        "creativity": answer_quality(evidence),
        "a_custom_dimension": answer_quality(evidence),
        "factuality": 0.0,
    }


def test_answer_quality_and_session_reading() -> None:
    turn = _turn(1, "servers network")
    evidence = turn_evidence(_session(turn), turn)
    # citation support 1, intent alignment (= query coverage) 1, clarity 1; completeness the
    # mean of query coverage 1 and one source's breadth 1 - 2^-0.5; no source text, so no
    # synthesis reading: (1 + 1 + (1 + 1 - 2**-0.5) / 2 + 1) / 4, by hand
    assert answer_quality(evidence) == pytest.approx((3 + (2 - 2**-0.5) / 2) / 4)
    assert session_reading([0.2, 0.4, 0.9]) == pytest.approx(0.5)
    assert session_reading([]) == 0.0


def test_offline_twins_reply_in_the_judges_formats() -> None:
    session = _session(
        _turn(1, "servers network requests"),
        _turn(2, "servers network requests explained", "Hiking boots.", cited=False),
        intent="servers on a network",
    )
    results = {}
    for name in ("satisfaction.urs", "satisfaction.gah", "satisfaction.geval"):
        _, labels = run_judge(None, name, [session])
        assert [lb.key.item for lb in labels] == ["turn", "turn", "session"]
        assert all(lb.value is not None and 1 <= lb.value <= 10 for lb in labels)
        results[name] = labels
    for name in ("satisfaction.urs", "satisfaction.gah"):
        for label in results[name]:
            dims = label.extra["dimensions"]
            assert label.extra["dimension_mean"] == pytest.approx(sum(dims.values()) / len(dims))
    assert set(results["satisfaction.gah"][0].extra["dimensions"]) == set(GAH_DIMENSIONS)
    assert set(results["satisfaction.urs"][0].extra["dimensions"]) == set(
        URS_DIMENSIONS["Factual QA"]
    )
    # the re-asked first turn: URS's user satisfaction is low, GAH's dimensions do not see it
    urs_first = results["satisfaction.urs"][0].extra["dimensions"]
    assert urs_first["user_satisfaction"] < urs_first["factuality"]


SOURCE = "Servers answer requests from other computers over a network and return pages."


def _cited(response: str, source: str | None = SOURCE) -> Turn:
    return Turn(
        index=1,
        query="what do servers do",
        response_text=response,
        statements=(Statement(response, (1,)),),
        links=(Link(id=1, title="Servers", url="https://example.org/servers", text=source),),
    )


def test_synthesis_is_the_share_of_five_word_runs_not_pasted_from_cited_sources() -> None:
    pasted = _cited("Servers answer requests from other computers over a network [1].")
    assert synthesis(pasted) == 0.0  # every 5-word run is in the source (the mark is not text)
    own = _cited("A server waits for clients and replies to what they ask for [1].")
    assert synthesis(own) == 1.0
    # 10 words -> 6 runs, of which only "servers answer requests from other" is copied
    part = _cited("Servers answer requests from other machines that ask for them [1].")
    assert synthesis(part) == pytest.approx(1 - 1 / 6)
    assert synthesis(_cited("Servers answer requests.")) is None  # shorter than one run
    assert synthesis(_cited(ANSWER, source=None)) is None  # no source text to compare with


def test_synthesis_reads_each_cjk_character_as_a_word() -> None:
    assert copy_words("服务器 answers 请求") == ["服", "务", "器", "answers", "请", "求"]
    pasted = _cited("服务器响应来自网络的请求。", source="服务器响应来自网络中其他计算机的请求。")
    # 12 characters -> 8 runs: 服务器响应 务器响应来 器响应来自 响应来自网 应来自网络 are in
    # the source, 来自网络的 自网络的请 网络的请求 are not
    assert synthesis(pasted) == pytest.approx(3 / 8)


def test_answer_quality_credits_an_answer_in_its_own_words_over_a_pasted_one() -> None:
    pasted = _cited(SOURCE)
    own = _cited("A server waits for clients over a network and replies with the pages asked.")
    quality = {
        name: answer_quality(turn_evidence(_session(turn), turn))
        for name, turn in (("pasted", pasted), ("own", own))
    }
    assert quality["own"] > quality["pasted"]
