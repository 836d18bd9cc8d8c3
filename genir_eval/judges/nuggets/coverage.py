"""How much of a nugget an answer states, read over the whole answer: the nugget twin's
evidence for nuggets of any length.

A nugget written by an assessor is often a passage excerpt of 30 words or more, which no
answer restates within one or two sentences: an answer covers it across several, in its own
words. Each design below scores a (nugget, answer) pair in ``[0, 1]``; the twin assigns
``support`` from the design's full mark on, ``partial_support`` from its partial mark on,
else ``not_support`` (:func:`adopted` gives the design and marks):

- ``overlap``: the share of the nugget's stemmed content terms found anywhere in the answer
  (plain word overlap, the baseline every design must beat);
- ``coverage``: the same share where a term also counts when the answer holds a word whose
  embedding lies within :data:`TERM_MATCH` cosine of it (``semantic`` extra: "mutations" for
  "mutation", "efficient" for "efficiency", beyond what the stemmer joins);
- ``pieces``: the nugget cut into clauses (:func:`pieces`), each credited with the larger of
  its ``coverage`` and its meaning's closeness to the answer's closest passage (cosine
  rescaled from :data:`COSINE_NONE` = 0 to :data:`COSINE_FULL` = 1), averaged: a paraphrase
  of one clause counts for that clause, wherever it stands in the answer;
- ``blend``: the mean of ``coverage`` and the whole nugget's rescaled closeness to its
  closest passage;
- ``passage``: the twin's former reading (:func:`~.twin.passage_assignment`), a nugget
  against its best sentence or two, with fixed marks.

Which design the twin ships and its marks were chosen by cross-validation over topics on
the development nuggets (``fixtures/nuggets/``: 52 labelled (nugget, answer) pairs of six
topics, passage-length nuggets graded 1-4; ``python bench/nugget_assignment_cv.py``): each
fold's design and marks chosen on the other topics by Cohen's kappa with the labels on "gives
the nugget" (support or partial), judged on the fold's topics. The result is in
:data:`ADOPTED`'s comment; a design that does not beat ``overlap`` out of sample falls back
to it (as it does with the lexical evidence alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from genir_eval.judges.lexical import key_terms, passages
from genir_eval.judges.offline.semantic import cosine_matrix, embedder, unit_vectors

__all__ = [
    "DESIGNS",
    "ADOPTED",
    "adopted",
    "TERM_MATCH",
    "COSINE_NONE",
    "COSINE_FULL",
    "pieces",
    "design_score",
    "coverage_label",
]

#: A word of the answer stands for a nugget's term from this cosine on (word embeddings:
#: inflections and derivations score 0.75-0.97, unrelated words below 0.35).
TERM_MATCH = 0.7
#: The cosine of a nugget (or clause) with a passage read as no evidence, and as full.
COSINE_NONE = 0.45
COSINE_FULL = 0.85
#: The fewest content terms a clause of a nugget has on its own (shorter ones join the last).
MIN_PIECE_TERMS = 3
_CLAUSE = re.compile(r"\s*(?:[;:,]|\s[-–—]\s|\bso\b|\bwhile\b|\bwhich\b)\s*")
_SUFFIXES = ("ingly", "edly", "ies", "ing", "ied", "ed", "es", "ly", "s")


def _stem(term: str) -> str:
    if not term.isascii() or len(term) < 5:
        return term
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            return term[: -len(suffix)]
    return term


def _terms(text: str) -> list[str]:
    return key_terms(text)


def pieces(nugget: str) -> list[str]:
    """The nugget's clauses: cut at ``,;:``, dashes and "so"/"while"/"which", a clause of
    fewer than :data:`MIN_PIECE_TERMS` content terms joined to the one before."""
    out: list[str] = []
    for piece in _CLAUSE.split(nugget):
        if not piece or not piece.strip():
            continue
        if out and len(_terms(piece)) < MIN_PIECE_TERMS:
            out[-1] = f"{out[-1]} {piece.strip()}"
        else:
            out.append(piece.strip())
    return out or [nugget]


def _overlap(nugget: str, answer: str) -> float:
    wanted = {_stem(t) for t in _terms(nugget)}
    present = {_stem(t) for t in _terms(answer)}
    return len(wanted & present) / len(wanted) if wanted else 0.0


def _coverage(nugget: str, answer: str) -> float:
    wanted = _terms(nugget)
    if not wanted:
        return 0.0
    found = _terms(answer)
    present = {_stem(t) for t in found}
    missing = [t for t in wanted if _stem(t) not in present]
    model = embedder()
    matched = len(wanted) - len(missing)
    if missing and found and model is not None:
        similarity = unit_vectors(model, missing) @ unit_vectors(model, found).T
        matched += int((similarity.max(axis=1) >= TERM_MATCH).sum())
    return matched / len(wanted)


def _closeness(texts: list[str], answer: str) -> list[float]:
    """Each text's cosine with the answer's closest passage, rescaled to ``[0, 1]``; zeros
    without the semantic extra."""
    model = embedder()
    if model is None or not answer.strip():
        return [0.0] * len(texts)
    best = cosine_matrix(model, texts, passages(answer) or [answer]).max(axis=1)
    scaled = (best - COSINE_NONE) / (COSINE_FULL - COSINE_NONE)
    return [float(v) for v in np.clip(scaled, 0.0, 1.0)]


def _pieces(nugget: str, answer: str) -> float:
    parts = pieces(nugget)
    close = _closeness(parts, answer)
    return float(np.mean([max(_coverage(p, answer), c) for p, c in zip(parts, close, strict=True)]))


def _blend(nugget: str, answer: str) -> float:
    return (_coverage(nugget, answer) + _closeness([nugget], answer)[0]) / 2


#: The designs that score a pair (``passage`` labels it with its own marks instead).
DESIGNS: dict[str, Callable[[str, str], float]] = {
    "overlap": _overlap,
    "coverage": _coverage,
    "pieces": _pieces,
    "blend": _blend,
}

#: The design the twin ships and its marks (partial, full), by the evidence that runs (see
#: the module docstring), from ``python bench/nugget_assignment_cv.py`` (10 x 3-fold over
#: the six development topics, seed 0). Semantic: ``pieces`` was chosen in 29 of 30 folds;
#: choosing reaches kappa 0.685 [0.507, 0.752] out of sample against 0.480 [0.256, 0.720]
#: for ``overlap`` alone (the former passage reading: 0.465); adopted with the marks it
#: fits on all six topics. Lexical: choosing (0.464) does not beat ``overlap`` alone
#: (0.480): ``overlap`` is adopted.
ADOPTED: dict[str, tuple[str, float, float]] = {
    "semantic": ("pieces", 0.3, 0.4),
    "lexical": ("overlap", 0.2, 0.3),
}


def adopted() -> tuple[str, float, float]:
    """The design and its marks (partial, full) for the evidence that runs."""
    return ADOPTED["semantic" if embedder() is not None else "lexical"]


def design_score(design: str, nugget: str, answer: str) -> float:
    """The pair's score under ``design`` (one of :data:`DESIGNS`)."""
    return DESIGNS[design](nugget, answer)


def coverage_label(
    nugget: str, answer: str, *, design: str | None = None, marks: tuple[float, float] | None = None
) -> tuple[str, float]:
    """The answer's assignment of ``nugget`` under ``design`` with ``marks`` (partial, full),
    by default the adopted ones (:func:`adopted`), and the score."""
    chosen, low, high = adopted()
    score = design_score(design or chosen, nugget, answer)
    partial, full = marks or (low, high)
    label = "support" if score >= full else "partial_support" if score >= partial else "not_support"
    return label, score
