"""Parsing ITEM's replies: pseudo-answers, utility sets, rankings, pointwise verdicts."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from genir_eval.judges.parsing import ReplyError, expect_key, extract_object

__all__ = ["parse_answer", "useful_parser", "joint_parser", "ranking_parser", "parse_pointwise"]


def parse_answer(text: str) -> str:
    obj = extract_object(text, want=dict)
    answer = expect_key(obj, "answer", "information")
    if not isinstance(answer, str) or not answer.strip():
        raise ReplyError("field 'answer' must be a non-empty string")
    return answer.strip()


def citation_ids(value: Any, known: Sequence[int], what: str) -> list[int]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ReplyError(f"{what} must be a list of citation numbers")
    out: list[int] = []
    for v in value:
        digits = re.sub(r"[^\d]", "", str(v)) if not isinstance(v, bool) else ""
        if not digits:
            raise ReplyError(f"{what}: {v!r} is not a citation number")
        cid = int(digits)
        if cid not in known:
            raise ReplyError(f"{what}: unknown citation number {cid}")
        if cid not in out:
            out.append(cid)
    return out


def useful_parser(known: Sequence[int]) -> Callable[[str], list[int]]:
    def parse(text: str) -> list[int]:
        obj = extract_object(text)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "useful", "utility", "selected")
        return sorted(citation_ids(obj, known, "useful"), key=list(known).index)

    return parse


def joint_parser(known: Sequence[int]) -> Callable[[str], dict[str, Any]]:
    useful = useful_parser(known)

    def parse(text: str) -> dict[str, Any]:
        obj = extract_object(text, want=dict)
        answer = expect_key(obj, "answer")
        if not isinstance(answer, str) or not answer.strip():
            raise ReplyError("field 'answer' must be a non-empty string")
        return {"answer": answer.strip(), "useful": useful(json.dumps(obj, ensure_ascii=False))}

    return parse


def ranking_parser(known: Sequence[int]) -> Callable[[str], list[int]]:
    """A permutation of ``known``. Ids the reply leaves out are appended in the order they
    were shown (as RankGPT does), so a long list cut short still ranks; unknown ids are an
    error, and so is a ranking naming none of the candidates."""

    def parse(text: str) -> list[int]:
        obj = extract_object(text)
        if isinstance(obj, Mapping):
            obj = expect_key(obj, "ranking", "ranked", "order")
        ranked = citation_ids(obj, known, "ranking")
        if known and not ranked:
            raise ReplyError("ranking is empty")
        return ranked + [cid for cid in known if cid not in ranked]

    return parse


_YES = {"true", "yes", "1", "useful", "是", "有", "有用"}
_NO = {"false", "no", "0", "not useful", "否", "无", "没有", "无用"}


def parse_pointwise(text: str) -> bool:
    obj = extract_object(text, want=dict)
    value = expect_key(obj, "useful", "utility")
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise ReplyError(f"field 'useful' must be true or false, got {value!r}")
