"""The nugget judge's offline twin: nuggets and their assignment from the log alone.

A baseline, not a reader. What it reads, step by step (each answers the real prompt's reply
format from the request's structured context, never from the prompt):

- **creation**: the sentences of the sources in the window and the nuggets listed so far,
  each scored by its **relevance** to the query (and the session's earlier queries): with the
  ``semantic`` extra the cosine similarity of the sentence and the query under a static
  sentence-embedding model (:mod:`genir_eval.judges.offline.semantic`), else the share of the
  query's content terms (stemmed: "backups" = "backup") the sentence holds. A sentence with
  fewer than :data:`MIN_TERMS` content terms, or sharing no content term with the query
  and below :data:`SEMANTIC_RELATED` in meaning, is no fact of the query. Near-duplicates
  (:data:`DUPLICATE` of one's stemmed terms in the other's) keep the more relevant; the
  :data:`MAX_WORDS` first words of a sentence are its nugget, the ``max_nuggets`` most
  relevant are kept.
- **importance**: ``vital`` when the nugget's relevance reaches :data:`VITAL_SEMANTIC`
  (semantic) or :data:`VITAL_LEXICAL` (lexical), else ``okay``.
- **assignment**: the nugget against the whole answer (:mod:`.coverage`): with the semantic
  extra, the nugget cut into clauses, each credited with the share of its content words the
  answer holds anywhere (a word also counting when the answer has one within embedding
  reach: "mutations" for "mutation") or its meaning's closeness to the answer's closest
  passage, averaged; with the lexical evidence alone, the share of the nugget's stemmed
  content words anywhere in the answer. ``support`` and ``partial_support`` from the marks
  cross-validation chose (:data:`~.coverage.ADOPTED`), capped at ``partial_support`` when a
  number of the nugget is not in the answer, ``not_support`` when the answer's closest
  passage denies a word the nugget affirms or the reverse ("does not hold" against
  "holds"). A nugget restated in other words is found by its meaning and by stems, not by
  shared word sequences, so an answer copying the sources' wording earns no more than one
  saying the same in its own (``tests/judges/nuggets`` has the case); a passage-length
  nugget an answer states across several sentences is found where the former reading
  (:func:`passage_assignment`, one passage of a sentence or two) missed it.

What it is worth: on the development nuggets (``fixtures/nuggets/``: 52 labelled pairs of six
topics, passage-length nuggets graded 1-4), choosing the assignment design by
cross-validation over topics reaches Cohen's kappa 0.685 [0.507, 0.752] with the labels out
of sample (plain word overlap 0.480, the former passage reading 0.465;
``python bench/nugget_assignment_cv.py``). On the CrowdRAG development topics, with the
twin's own nuggets, nugget recall orders 57.9% [0.51, 0.65] of people's decided
``quality_overall`` pairs the same way (48.8% with the former passage reading), the six
systems against people's win rates with Kendall tau 0.83 (-0.28 before;
``python bench/bench_nuggets.py agreement ../shared/crowdrag``). It is a baseline for the
plumbing and for a real model to beat, not a measure of coverage people would sign.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any

from genir_eval.judges.lexical import key_terms
from genir_eval.judges.nuggets.coverage import adopted, coverage_label
from genir_eval.judges.nuggets.judge import TASK_ASSIGN, TASK_CREATE, TASK_IMPORTANCE
from genir_eval.judges.offline.citations import negated_terms, numbers, passages, sentences
from genir_eval.judges.offline.semantic import cosine_matrix, embedder
from genir_eval.llm.providers.base import Request
from genir_eval.llm.providers.offline import register_offline

__all__ = [
    "MIN_TERMS",
    "MAX_WORDS",
    "NUGGET_UNIT",
    "units",
    "DUPLICATE",
    "SEMANTIC_RELATED",
    "VITAL_SEMANTIC",
    "VITAL_LEXICAL",
    "FULL_TERMS",
    "PARTIAL_TERMS",
    "FULL_SEMANTIC",
    "PARTIAL_SEMANTIC",
    "stems",
    "relevance",
    "assignment",
    "passage_assignment",
    "create_reply",
    "importance_reply",
    "assign_reply",
]

MIN_TERMS = 4
MAX_WORDS = 30
#: What one nugget is cut from: a whole source sentence, or each clause of one (split at
#: ``,;:`` and dashes, a clause of fewer than :data:`MIN_TERMS` content terms joined to the
#: one before): TREC's nuggets are 1-12 words, and a sentence often states several facts.
NUGGET_UNIT = "sentence"
DUPLICATE = 0.7
SEMANTIC_RELATED = 0.35
VITAL_SEMANTIC = 0.55
VITAL_LEXICAL = 0.5
FULL_TERMS = 0.75
PARTIAL_TERMS = 0.45
FULL_SEMANTIC = 0.75
PARTIAL_SEMANTIC = 0.6

_SUFFIXES = ("ingly", "edly", "ies", "ing", "ied", "ed", "es", "ly", "s")


@functools.lru_cache(maxsize=65_536)
def _stem(term: str) -> str:
    """A light English stem: a common suffix off a word of at least five letters
    ("backups" -> "backup", "restored" -> "restor", "studies" -> "stud")."""
    if not term.isascii() or len(term) < 5:
        return term
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            return term[: -len(suffix)]
    return term


def stems(text: str) -> frozenset[str]:
    """The stemmed content terms of ``text``."""
    return frozenset(_stem(t) for t in key_terms(text))


def _share(wanted: frozenset[str], present: frozenset[str]) -> float:
    return len(wanted & present) / len(wanted) if wanted else 0.0


def relevance(texts: Sequence[str], query: str) -> list[float]:
    """Each text's relevance to ``query`` (see the module docstring): a cosine under the
    semantic model, else the share of the query's stemmed terms the text holds."""
    model = embedder()
    if model is not None and texts:
        return [float(v) for v in cosine_matrix(model, [query], list(texts))[0]]
    wanted = stems(query)
    return [_share(wanted, stems(t)) for t in texts]


def _nugget_text(sentence: str) -> str:
    words = " ".join(sentence.split()).split(" ")
    return " ".join(words[:MAX_WORDS]) + (" ..." if len(words) > MAX_WORDS else "")


_CLAUSE = re.compile(r"\s*(?:[;:,]|\s[-–—]\s)\s*")


def units(sentence: str) -> list[str]:
    """The pieces of a source sentence that become nuggets (:data:`NUGGET_UNIT`)."""
    if NUGGET_UNIT != "clause":
        return [sentence]
    out: list[str] = []
    for piece in _CLAUSE.split(sentence):
        if out and len(key_terms(piece)) < MIN_TERMS:
            out[-1] = f"{out[-1]}, {piece}"
        elif piece.strip():
            out.append(piece.strip())
    return out


def create_reply(context: dict[str, Any]) -> dict[str, Any]:
    """The creation step's reply: the listed nuggets and the window's sentences, the most
    relevant distinct ones first, at most ``max_nuggets``."""
    query = " ".join([*context.get("earlier", []), context["query"]])
    query_stems = stems(query)
    candidates = list(context.get("nuggets", []))
    for source in context.get("sources", []):
        for a, b in sentences(source):
            for piece in units(source[a:b]):
                if len(key_terms(piece)) >= MIN_TERMS:
                    candidates.append(_nugget_text(piece))
    scores = relevance(candidates, query)
    semantic = embedder() is not None
    ranked = sorted(zip(scores, candidates, strict=True), key=lambda pair: -pair[0])
    kept: list[tuple[str, frozenset[str]]] = []
    for score, text in ranked:
        terms = stems(text)
        related = bool(terms & query_stems) or (semantic and score >= SEMANTIC_RELATED)
        if not related or any(
            _share(terms, other) >= DUPLICATE or _share(other, terms) >= DUPLICATE
            for _, other in kept
        ):
            continue
        kept.append((text, terms))
        if len(kept) >= int(context["max_nuggets"]):
            break
    return {"nuggets": [text for text, _ in kept]}


def importance_reply(context: dict[str, Any]) -> dict[str, Any]:
    """The importance step's reply: vital when relevant enough to the query."""
    ids = [i for i, _ in context["nuggets"]]
    texts = [t for _, t in context["nuggets"]]
    mark = VITAL_SEMANTIC if embedder() is not None else VITAL_LEXICAL
    scores = relevance(texts, context["query"])
    return {
        "importance": {
            i: "vital" if s >= mark else "okay" for i, s in zip(ids, scores, strict=True)
        }
    }


def assignment(nugget: str, answer: str) -> tuple[str, str]:
    """The answer's assignment of ``nugget`` and the reason: the nugget's coverage over the
    whole answer under the adopted design (:func:`~.coverage.adopted`), capped at
    ``partial_support`` when a number of the nugget is not in the answer, ``not_support``
    when the answer's closest passage denies a word the nugget affirms or the reverse."""
    design, partial, full = adopted()
    label, score = coverage_label(nugget, answer, design=design, marks=(partial, full))
    pieces = passages(answer) or [answer]
    wanted = stems(nugget)
    shares = [_share(wanted, stems(p)) for p in pieces]
    closest = pieces[max(range(len(pieces)), key=lambda i: shares[i])]
    missing = sorted(numbers(nugget) - numbers(answer))
    if missing and label == "support":
        label = "partial_support"
    denied = _denial(nugget, closest) if label != "not_support" else []
    if denied:
        label = "not_support"
    found = round(_share(wanted, stems(answer)) * len(wanted))
    read = (
        f"{design} {score:.2f} of the nugget across the answer (partial from {partial:g}, "
        f"full from {full:g}); {found}/{len(wanted)} of its content words in the answer"
    )
    if missing:
        read += f", the answer lacks {', '.join(missing)}"
    if denied:
        read += f", one says the opposite of the other on {', '.join(denied)}"
    evidence = " ".join(closest.split())[:160] if label != "not_support" else ""
    return label, read + (f": '{evidence}'" if evidence else "")


def passage_assignment(nugget: str, answer: str) -> tuple[str, str]:
    """The answer's assignment of ``nugget`` against its best passage, and the reason (the
    module docstring's reading, before the coverage designs)."""
    pieces = passages(answer) or [answer]
    wanted = stems(nugget)
    shares = [_share(wanted, stems(p)) for p in pieces]
    best = max(range(len(pieces)), key=lambda i: shares[i])
    words = shares[best]
    model = embedder()
    meaning = None
    if model is not None and answer.strip():
        similarity = cosine_matrix(model, [nugget], pieces)[0]
        closest = int(similarity.argmax())
        meaning = float(similarity[closest])
        if meaning > words and meaning >= PARTIAL_SEMANTIC:
            best = closest
    full = words >= FULL_TERMS or (meaning is not None and meaning >= FULL_SEMANTIC)
    part = words >= PARTIAL_TERMS or (meaning is not None and meaning >= PARTIAL_SEMANTIC)
    label = "support" if full else "partial_support" if part else "not_support"
    missing = sorted(numbers(nugget) - numbers(answer))
    if missing and label == "support":
        label = "partial_support"
    denied = _denial(nugget, pieces[best]) if label != "not_support" else []
    if denied:
        label = "not_support"
    read = f"{round(words * len(wanted))}/{len(wanted)} of its content words"
    if meaning is not None:
        read += f", meaning {meaning:.2f}"
    if missing:
        read += f", the answer lacks {', '.join(missing)}"
    if denied:
        read += f", one says the opposite of the other on {', '.join(denied)}"
    evidence = " ".join(pieces[best].split())[:160] if label != "not_support" else ""
    return label, f"{read}" + (f": '{evidence}'" if evidence else "")


def _denial(nugget: str, passage: str) -> list[str]:
    """The stemmed words one of ``nugget`` and ``passage`` denies and the other affirms
    (:func:`~genir_eval.judges.offline.citations.negated_terms`): "holds more caffeine"
    against "does not hold more caffeine"."""
    nugget_denies = {_stem(t) for t in negated_terms(nugget)}
    passage_denies = {_stem(t) for t in negated_terms(passage)}
    affirmed_n, affirmed_p = stems(nugget) - nugget_denies, stems(passage) - passage_denies
    return sorted((passage_denies & affirmed_n) | (nugget_denies & affirmed_p))


def assign_reply(context: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for nugget_id, text in context["nuggets"]:
        label, reason = assignment(text, context["answer"])
        out[nugget_id] = {"assignment": label, "reason": reason}
    return {"assignments": out}


def _handler(build: Any) -> Any:
    def handle(request: Request) -> str:
        return json.dumps(build(request.context), ensure_ascii=False)

    return handle


register_offline(TASK_CREATE, _handler(create_reply))
register_offline(TASK_IMPORTANCE, _handler(importance_reply))
register_offline(TASK_ASSIGN, _handler(assign_reply))
