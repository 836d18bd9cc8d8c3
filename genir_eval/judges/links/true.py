"""``link_usefulness.true``: a task-aware rubric with log signals for cited-link usefulness.

After Dewan et al., "TRUE: A Reproducible Framework for LLM-Driven Relevance Judgment"
(2025): the prompt gives the query, intent and task type, what the rater sees of the link,
and signals computed from the log, then a rubric with one block per label (the signal
criteria plus exception cases, e.g. "high satisfaction supports high usefulness even with
low alignment"). Signal groups can be switched off for ablation with ``signals=``:
``relevance`` (title/statement alignment with query and intent), ``behaviour`` (how often and
how early the answer cites the link) and ``satisfaction`` (the user's query and session
satisfaction, and whether the citing statements hold text the user marked useful).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from genir_eval.judges.base import Label, register_judge
from genir_eval.judges.common import (
    BuiltinJudge,
    JudgeContext,
    ask_graded,
    graded_config,
    link_values,
)
from genir_eval.judges.offline.features import LinkEvidence, link_evidence
from genir_eval.judges.options import (
    LOGPROBS,
    RESPONSE_FORMAT,
    SAMPLES,
    TOP_LOGPROBS,
    Option,
    check_judge_options,
)
from genir_eval.judges.parsing import expect_int, expect_key, expect_mapping, extract_object
from genir_eval.judges.probabilities import label_distribution, value_offset
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.llm.providers.base import Completion
from genir_eval.records import Session, Turn

__all__ = [
    "SIGNAL_GROUPS",
    "TRUE_SCHEMA",
    "TrueLinkJudge",
    "link_usefulness_true",
    "parse_true",
    "signal_text",
    "true_expected",
]

NAME = "link_usefulness.true"
SIGNAL_GROUPS = ("relevance", "behaviour", "satisfaction")
LABELS = (0, 1, 2, 3)
TRUE_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 300},
        "label": {"type": "integer", "enum": list(LABELS)},
    },
    "required": ["reasoning", "label"],
    "additionalProperties": False,
}


def true_expected(completion: Completion, _: Any = None) -> dict[str, Any]:
    """The expected label (and entropy) from the logprobs at the reply's label."""
    offset = value_offset(completion.text, "label", "usefulness", "O")
    found = label_distribution(completion, offset, LABELS) if offset is not None else None
    return found.as_extra() if found is not None else {}


def parse_true(text: str) -> int:
    obj = expect_mapping(extract_object(text, want=dict))
    return expect_int(expect_key(obj, "label", "usefulness", "O"), 0, 3, "label")


def _groups(signals: Iterable[str] | str | None) -> tuple[str, ...]:
    if signals is None:
        return SIGNAL_GROUPS
    if isinstance(signals, str):
        signals = [s for s in signals.replace("+", ",").split(",") if s.strip()]
    chosen = tuple(s.strip() for s in signals)
    unknown = [s for s in chosen if s not in SIGNAL_GROUPS]
    if unknown:
        raise ValueError(f"unknown signal groups {unknown}; expected some of {SIGNAL_GROUPS}")
    return tuple(g for g in SIGNAL_GROUPS if g in chosen)


def signal_text(
    evidence: LinkEvidence, turn: Turn, session: Session, groups: Iterable[str], language: str
) -> str:
    """The signals block of the prompt, one line per signal of the enabled groups."""
    groups = tuple(groups)
    zh = language == "zh"
    lines: list[str] = []
    n_statements = len(turn.statements)
    order = list(turn.cited_link_ids)
    if "relevance" in groups:
        lines.append(
            (f"标题与查询/意图的字符重合度：{evidence.title_alignment:.2f}（0-1）")
            if zh
            else f"title-query/intent character overlap: {evidence.title_alignment:.2f} (0-1)"
        )
        lines.append(
            (f"引用语句与查询/意图的字符重合度：{evidence.statement_alignment:.2f}（0-1）")
            if zh
            else (
                "citing statements' character overlap with query/intent: "
                f"{evidence.statement_alignment:.2f} (0-1)"
            )
        )
    if "behaviour" in groups:
        rank = order.index(evidence.link_id) + 1 if evidence.link_id in order else None
        lines.append(
            (f"被 {n_statements} 条语句中的 {evidence.citation_count} 条引用")
            if zh
            else f"cited by {evidence.citation_count} of {n_statements} statements"
        )
        lines.append(
            (f"首次引用顺序：第 {rank} 个（共 {len(order)} 个来源）")
            if zh
            else f"first cited as source {rank} of {len(order)}"
        )
    if "satisfaction" in groups:
        q = evidence.query_satisfaction
        gold = session.gold
        s = gold.session_satisfaction if gold is not None else None
        if q is not None:
            rating = 1 + 4 * q
            lines.append(
                f"用户对该回答的满意度：{rating:.0f}/5"
                if zh
                else f"user's satisfaction with this answer: {rating:.0f}/5"
            )
        if s is not None:
            lines.append(
                f"用户对整个会话的满意度：{s:.0f}/5"
                if zh
                else f"user's satisfaction with the session: {s:.0f}/5"
            )
        if evidence.span_overlap is not None:
            lines.append(
                f"用户标记为有用的文字中，位于引用语句内的比例：{evidence.span_overlap:.2f}"
                if zh
                else (
                    "share of the text the user marked useful that lies in the citing "
                    f"statements: {evidence.span_overlap:.2f}"
                )
            )
    if not lines:
        return "（无）" if zh else "(none)"
    return "\n".join(f"- {line}" for line in lines)


class TrueLinkJudge(BuiltinJudge):
    name = NAME
    kind = "link_usefulness"
    template = "link_true"
    task = NAME
    OPTIONS = (
        Option(
            "signals",
            ",".join(SIGNAL_GROUPS),
            "log signal groups in the prompt (comma-separated, for ablations)",
            type="texts",
        ),
        LOGPROBS,
        TOP_LOGPROBS,
        SAMPLES,
        RESPONSE_FORMAT,
        *BuiltinJudge.OPTIONS,
    )

    def __init__(self, **options: Any) -> None:
        check_judge_options(NAME, self.OPTIONS, options)
        # the groups chosen, in their order, always among the options the judge is named by
        self.groups = _groups(options.get("signals"))
        super().__init__(**{**options, "signals": ",".join(self.groups)})

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        flags = {g: g in self.groups for g in SIGNAL_GROUPS}
        config = graded_config(engine, self.values, max_tokens=256, schema=TRUE_SCHEMA)
        samples = int(self.values["samples"])

        async def judged(key: Any, messages: Any, context: JudgeContext) -> Label:
            return await ask_graded(
                engine,
                key,
                messages,
                config,
                self.task,
                context,
                parse_true,
                stats=self.stats,
                language=language,
                expected=true_expected,
                samples=samples,
            )

        calls = []
        for turn in session.turns:
            for link_id in turn.cited_link_ids:
                evidence = link_evidence(session, turn, link_id)
                values = {
                    **link_values(session, turn, link_id),
                    "task_type": fence(session.task_type or "unknown", "TASK TYPE"),
                    "signals": signal_text(evidence, turn, session, self.groups, language),
                }
                messages = render_messages(text, values, flags)
                context = JudgeContext(
                    session, turn, self.options, link_id=link_id, extra={"groups": self.groups}
                )
                key = self.key(session, turn.index, f"link:{link_id}", version)
                calls.append(judged(key, messages, context))
        return list(await asyncio.gather(*calls))


@register_judge(NAME)
def link_usefulness_true(**options: Any) -> TrueLinkJudge:
    """The TRUE judge; its options are :attr:`TrueLinkJudge.OPTIONS`."""
    return TrueLinkJudge(**options)
