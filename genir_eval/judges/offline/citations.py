"""The ``citation_support`` judge's offline twin: a lexical entailment baseline.

It is a baseline, not an entailment model: it reads the statement and the cited source's
text and checks what can be checked by matching words.

- **Coverage**: the share of the statement's content terms (:func:`key_terms`: words, CJK
  character bigrams, stopwords dropped) found in the source, and in the passage of one or
  two adjacent source sentences that covers most of them (the evidence it quotes; two
  sentences so that "It was completed in 1889" can lean on the sentence naming "it").
- **Number agreement**: every number in the statement (``1,200`` = ``1200``) must appear in
  the source; a number the source does not have makes the verdict ``none``.
- **Negation agreement**: the statement and its best passage must agree on being negated
  (``not``, ``no``, ``never``, ``n't``, ``without``; 不 没 无 未 非); a mismatch is ``none``.
- **Entity agreement**: capitalised words inside the statement (names) must appear in the
  source; one missing caps the verdict at ``partial``.

Verdict (a-priori thresholds, not fitted): coverage of the whole source below 0.4 is
``none``; otherwise ``full`` when the best passage alone covers at least 0.7 and the
entities agree, else ``partial``. Judged from title and url only (``basis="title_url"``),
the best it gives is ``partial`` (coverage of the title and url words at least 0.5), and it
quotes nothing.

Restatement (with the ``semantic`` extra, :mod:`genir_eval.judges.offline.semantic`): word
overlap calls a statement that says a passage's content in other words unsupported, and so
rewards answers that copy. With the semantic model installed, a statement whose words the
source misses (coverage below 0.4, where the lexical verdict is ``none``) is judged by
meaning instead: the cosine similarity of the statement with its closest passage (one or two
adjacent sentences) at least :data:`SEMANTIC_FULL` is ``full`` (``partial`` when a name is
missing), at least :data:`SEMANTIC_PARTIAL` ``partial``. Where the words are found, the
lexical checks stand (they see what is missing: a name, a part of the claim), and a number
the source lacks or a negation mismatch is ``none`` either way. The two thresholds are where the similarity of
statements with the passages they cite parts from their similarity with same-topic passages
they do not cite (medians 0.63 and 0.46 on the CrowdRAG development topics; partial at the
uncited passages' upper quartile, full at their 90th percentile, 0.56 and 0.64 rounded; one
topic left out at a time, 0.553-0.573 and 0.634-0.644: ``bench/bench_preferences.py
--thresholds``), not fitted to any preference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.common import JudgeContext
from genir_eval.judges.offline.instructions import without_instructions
from genir_eval.judges.offline.lexical import key_terms, tokenize
from genir_eval.judges.offline.reasons import support_reason
from genir_eval.llm.providers.base import Request
from genir_eval.llm.providers.offline import register_offline

__all__ = [
    "COVERAGE_NONE",
    "COVERAGE_FULL",
    "numbers",
    "negated",
    "entities",
    "sentences",
    "passages",
    "support_verdict",
]

COVERAGE_NONE = 0.4  # below: the source hardly speaks of the statement
COVERAGE_FULL = 0.7  # one sentence covering this much of the statement can support it fully
TITLE_PARTIAL = 0.5
SEMANTIC_PARTIAL = 0.55  # a statement this close to a passage restates part of it
SEMANTIC_FULL = 0.65  # this close, the passage says what the statement says

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nor|neither|without|cannot)\b|n't\b|[不没无未非]", re.IGNORECASE
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+")


def numbers(text: str) -> set[str]:
    """The numbers of ``text`` normalised: thousands separators dropped, ``1.50`` = ``1.5``."""
    out = set()
    for raw in _NUMBER.findall(text):
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
            raw = raw.replace(",", "")
        raw = raw.replace(",", ".")
        if "." in raw:
            raw = raw.rstrip("0").rstrip(".")
        out.add(raw.lstrip("0") or "0")
    return out


def negated(text: str) -> bool:
    """Whether ``text`` carries an odd number of negation cues (double negation cancels)."""
    return len(_NEGATION.findall(text)) % 2 == 1


def entities(text: str) -> set[str]:
    """Capitalised words not opening a sentence: the names a statement commits to."""
    return {m.group(0).lower() for m in _NAME.finditer(text.strip())}


def sentences(text: str) -> list[tuple[int, int]]:
    """The source cut into sentences (and lines): ``(start, end)`` offsets of each, without
    surrounding whitespace, empty ones dropped."""
    spans = []
    start = 0
    for match in [*_SENTENCE.finditer(text), None]:
        end = match.start() if match is not None else len(text)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        if match is not None:
            start = match.end()
    return spans


def passages(text: str) -> list[str]:
    """Candidate evidence: every sentence, and every two adjacent sentences as they stand
    in ``text`` (verbatim, so a quote of them is found in the source)."""
    spans = sentences(text)
    out = [text[a:b] for a, b in spans]
    out += [text[spans[i][0] : spans[i + 1][1]] for i in range(len(spans) - 1)]
    return out


def _coverage(terms: Sequence[str], text: str) -> float:
    if not terms:
        return 0.0
    present = set(tokenize(text))
    return sum(1 for t in terms if t in present) / len(terms)


def support_verdict(statement: str, source: str) -> tuple[str, str, dict[str, Any]]:
    """``(support, evidence, features)`` for a statement against a source text. Clauses of
    the source that address the judge (:func:`without_instructions`) are not evidence."""
    source = without_instructions(source)
    terms = key_terms(statement)
    coverage = _coverage(terms, source)
    best, best_coverage = "", 0.0
    for passage in passages(source):  # sentences first: a pair must cover more to win
        value = _coverage(terms, passage)
        if value > best_coverage:
            best, best_coverage = passage, value
    missing_numbers = sorted(numbers(statement) - numbers(source))
    negation_mismatch = bool(best) and negated(statement) != negated(best)
    missing_names = sorted(entities(statement) - set(tokenize(source)))
    features: dict[str, Any] = {
        "coverage": round(coverage, 4),
        "best_passage_coverage": round(best_coverage, 4),
        "missing_numbers": missing_numbers,
        "negation_mismatch": negation_mismatch,
        "missing_entities": missing_names,
    }
    if missing_numbers or negation_mismatch:
        return "none", "", features
    if coverage >= COVERAGE_NONE:
        if best_coverage >= COVERAGE_FULL and not missing_names:
            return "full", best, features
        return "partial", best, features
    semantic = _semantic_verdict(statement, source, features)
    if semantic is None:
        return "none", "", features
    if semantic[0] == "full" and missing_names:
        return "partial", semantic[1], features
    return semantic


def _semantic_verdict(
    statement: str, source: str, features: dict[str, Any]
) -> tuple[str, str, dict[str, Any]] | None:
    """The semantic model's verdict and the passage it rests on; ``None`` without the model."""
    from genir_eval.judges.offline.semantic import cosine_matrix, embedder

    model = embedder()
    if model is None:
        return None
    candidates = passages(source) or [source]
    similarity = cosine_matrix(model, [statement], candidates)[0]
    best = int(similarity.argmax())
    value = float(similarity[best])
    features["semantic_similarity"] = round(value, 4)
    if value >= SEMANTIC_FULL:
        return "full", candidates[best], features
    if value >= SEMANTIC_PARTIAL:
        return "partial", candidates[best], features
    return "none", "", features


def _title_verdict(statement: str, title: str, url: str) -> str:
    words = " ".join([title, re.sub(r"[/_.:-]+", " ", url)])
    return "partial" if _coverage(key_terms(statement), words) >= TITLE_PARTIAL else "none"


def offline_reply(request: Request) -> str:
    """The twin's reply to a ``citation_support`` request, in the judge's reply format."""
    context = request.context
    if not isinstance(context, JudgeContext):
        raise TypeError("the citation_support twin needs a JudgeContext")
    extra: Mapping[str, Any] = context.extra
    statement = str(extra["statement"])
    source = extra.get("source")
    if extra.get("basis") != "source_text" or not source:
        verdict = _title_verdict(statement, str(extra.get("title", "")), str(extra.get("url", "")))
        reason = support_reason(verdict, None, "title_url")
        return json.dumps(
            {"support": verdict, "evidence": "", "reason": reason}, ensure_ascii=False
        )
    verdict, evidence, features = support_verdict(statement, str(source))
    reason = support_reason(verdict, features, "source_text")
    return json.dumps(
        {"support": verdict, "evidence": evidence, "features": features, "reason": reason},
        ensure_ascii=False,
    )


register_offline("citation_support", offline_reply)
