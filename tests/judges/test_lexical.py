from __future__ import annotations

import math

import pytest

from genir_eval.judges.lexical import (
    BM25,
    key_terms,
    rouge_l,
    term_coverage,
    tokenize,
    units,
)


@pytest.mark.parametrize(
    ("text", "ngram", "expected"),
    [
        # Computed by hand: CJK runs as overlapping bigrams, Latin words lower-cased.
        ("服务器用途", 2, ["服务", "务器", "器用", "用途"]),
        ("Web 服务器 hosting!", 2, ["web", "服务", "务器", "hosting"]),
        ("云", 2, ["云"]),
        ("ab，cd", 1, ["ab", "cd"]),
        ("", 2, []),
    ],
)
def test_tokenize(text: str, ngram: int, expected: list[str]) -> None:
    assert tokenize(text, ngram) == expected


def test_units_split_cjk_into_characters_and_latin_into_words() -> None:
    assert units("Nginx 服务器") == ["nginx", "服", "务", "器"]


def test_key_terms_drop_stopwords_and_particle_ngrams() -> None:
    assert key_terms("what is the best web server") == ["best", "web", "server"]
    # "的用" straddles a particle and is dropped; "用途" stays.
    assert key_terms("服务器的用途") == ["服务", "务器", "用途"]


def test_bm25_matches_the_formula() -> None:
    docs = [["a", "b", "a"], ["b", "c"], ["d"]]
    index = BM25(docs, k1=1.2, b=0.75)
    avgdl = 2.0
    idf_a = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    tf_part = 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / avgdl))
    # Computed by hand from the docstring's formula.
    assert index.score(["a"], 0) == pytest.approx(idf_a * tf_part, abs=1e-12)
    assert index.score(["a"], 1) == 0.0
    # Query-term frequency multiplies (the pseudo-relevance-feedback weighting).
    assert index.score(["a", "a"], 0) == pytest.approx(2 * idf_a * tf_part, abs=1e-12)
    scores = index.scores(["b"])
    assert scores[2] == 0.0 and scores[1] > scores[0] > 0.0  # shorter doc wins on equal tf


def test_bm25_empty_collection() -> None:
    assert BM25([]).scores(["a"]) == []


@pytest.mark.parametrize(
    ("candidate", "reference", "p", "r", "f"),
    [
        # Computed by hand: LCS("a b c d", "a c d e") = "a c d" = 3.
        ("a b c d", "a c d e", 0.75, 0.75, 0.75),
        # LCS("服务器", "服务的器材") = 3 of 3 and 3 of 5 units.
        ("服务器", "服务的器材", 1.0, 0.6, 0.75),
        ("x y", "a b", 0.0, 0.0, 0.0),
        ("", "", 1.0, 1.0, 1.0),
        ("a", "", 0.0, 0.0, 0.0),
    ],
)
def test_rouge_l(candidate: str, reference: str, p: float, r: float, f: float) -> None:
    score = rouge_l(candidate, reference)
    assert (score.precision, score.recall, score.f) == pytest.approx((p, r, f), abs=1e-9)


def test_term_coverage() -> None:
    assert term_coverage(["服务", "用途"], "服务器可以用于多种用途") == 1.0
    assert term_coverage(["服务", "价格"], "服务器") == 0.5
    assert term_coverage([], "anything") == 0.0
