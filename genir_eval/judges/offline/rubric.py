"""The RUBRIC judges' offline twin: questions templated over the key phrases of the query
and intent; a grade is the lexical coverage of a question's terms in the passage."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from genir_eval.judges.lexical import STOPWORDS, key_terms, tokenize
from genir_eval.judges.offline.reasons import rubric_reason
from genir_eval.judges.rubric.grading import GRADE_MAX
from genir_eval.llm.providers.offline import register_offline

__all__ = ["offline_questions"]


# Words of the templates below: they are not what a question asks about, so grading
# leaves them out of the question's terms.
_QUESTION_TEMPLATES = {
    "en": ("What does a good answer say about {phrase}?", "{query}"),
    "zh": ("关于“{phrase}”，好的回答应给出什么信息？", "{query}"),
}
_TEMPLATE_TERMS = frozenset(
    key_terms(_QUESTION_TEMPLATES["en"][0].format(phrase=""))
    + key_terms(_QUESTION_TEMPLATES["zh"][0].format(phrase=""))
)
_SPLIT_CJK = re.compile(
    "|".join(sorted((w for w in STOPWORDS if not w.isascii()), key=len, reverse=True))
)
_RUNS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_]+", re.UNICODE)


def _phrases(text: str) -> list[str]:
    """Content phrases of ``text``: CJK runs cut at function words, and Latin words that
    are not stopwords; each at least two characters, in order, without repeats."""
    out: list[str] = []
    for match in _RUNS.finditer(text or ""):
        run = match.group(0)
        pieces = _SPLIT_CJK.split(run) if not run.isascii() else [run.lower()]
        for piece in pieces:
            if len(piece) >= 2 and piece.lower() not in STOPWORDS and piece not in out:
                out.append(piece)
    return out


def offline_questions(query: str, intent: str | None, n: int, language: str) -> list[str]:
    """The offline twin's bank: the query itself, then one templated sub-question per key
    phrase of the query and then of the intent, up to ``n``."""
    template, whole = _QUESTION_TEMPLATES["zh" if language == "zh" else "en"]
    questions = [whole.format(query=query.strip())] if query.strip() else []
    for phrase in _phrases(query) + _phrases(intent or ""):
        question = template.format(phrase=phrase)
        if question not in questions:
            questions.append(question)
    return questions[:n]


def _question_terms(question: str) -> list[str]:
    terms = [t for t in key_terms(question) if t not in _TEMPLATE_TERMS]
    return terms or key_terms(question)


def _lexical_grade(question: str, passage: str) -> tuple[int, str]:
    """``round(5 * coverage)`` of the question's terms in the passage, and the passage
    sentence that covers most of them as the extracted answer."""
    terms = _question_terms(question)
    if not terms:
        return 0, ""
    present = set(tokenize(passage))
    covered = sum(1 for t in terms if t in present) / len(terms)
    grade = int(round(GRADE_MAX * covered + 1e-9))
    sentences = [s for s in re.split(r"(?<=[。！？.!?；;\n])", passage) if s.strip()]
    best = max(
        sentences,
        key=lambda s: sum(1 for t in terms if t in set(tokenize(s))),
        default="",
    )
    return grade, (best.strip()[:200] if grade > 0 else "")


def _offline_rubric(request: Any) -> str:
    ctx: Mapping[str, Any] = request.context
    step = ctx["step"]
    if step == "generate":
        questions = offline_questions(ctx["query"], ctx.get("intent"), ctx["n"], ctx["language"])
        return json.dumps({"questions": questions}, ensure_ascii=False)
    if step == "grade":
        entries = []
        for qid, text in ctx["questions"]:
            grade, answer = _lexical_grade(text, ctx["passage"])
            entries.append({"question": qid, "grade": grade, "answer": answer})
        if request.task == "rubric.grade_pair":
            only = entries[0]
            return json.dumps(
                {"grade": only["grade"], "answer": only["answer"]}, ensure_ascii=False
            )
        reason = rubric_reason(entries, GRADE_MAX)
        return json.dumps({"grades": entries, "reason": reason}, ensure_ascii=False)
    # Direct baselines: query-term coverage of the passage.
    terms = key_terms(ctx["query"])
    present = set(tokenize(ctx["passage"]))
    covered = (sum(1 for t in terms if t in present) / len(terms)) if terms else 0.0
    if step == "thomas":
        overall = 2 if covered >= 0.5 else 1 if covered >= 0.2 else 0
        return json.dumps({"M": overall, "T": 1, "O": overall})
    return json.dumps({"relevant": "yes" if covered >= 0.3 else "no"})


for _task in (
    "rubric.generate",
    "rubric.grade",
    "rubric.grade_pair",
    "rubric.thomas",
    "rubric.yesno",
):
    register_offline(_task, _offline_rubric)
