"""``spans``: which text units of a response were useful for the user's need.

The response is shown cut into URGE's punctuation-delimited units (``Turn.segments``),
numbered from 0; the reply lists the useful ones (``{"useful_segments": [..]}``). The label of
item ``"spans"`` is the sorted tuple of indices; ``extra["texts"]`` holds the units' text so
they can be compared with the user's and the annotators' marks, which URGE stores as text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from functools import partial
from typing import Any

from genir_eval.figures import number_text
from genir_eval.judges.base import Label, ask, register_judge
from genir_eval.judges.common import BuiltinJudge, JudgeContext, graded_config
from genir_eval.judges.kinds import JudgeCell, JudgeKind, JudgeTable
from genir_eval.judges.options import RESPONSE_FORMAT
from genir_eval.judges.parsing import expect_index_list, extract_object
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.records import USEFUL_SPANS as EVIDENCE
from genir_eval.records import Session, Turn

__all__ = ["SpansJudge", "SpansKind", "spans", "parse_spans", "segments_block", "spans_schema"]

NAME = "spans"


def parse_spans(text: str, n_segments: int) -> list[int]:
    return list(expect_index_list(extract_object(text), n_segments, "useful_segments"))


def spans_schema(n_segments: int) -> dict[str, Any]:
    """The JSON schema of a reply for a turn of ``n_segments`` units."""
    index = {"type": "integer", "minimum": 0, "maximum": max(0, n_segments - 1)}
    return {
        "type": "object",
        "properties": {"useful_segments": {"type": "array", "items": index}},
        "required": ["useful_segments"],
        "additionalProperties": False,
    }


def segments_block(turn: Turn) -> str:
    lines = [f"[{i}] {segment.text}" for i, segment in enumerate(turn.segments)]
    return fence("\n".join(lines), "ANSWER UNITS")


class SpansJudge(BuiltinJudge):
    name = NAME
    kind = "spans"
    template = "spans"
    task = NAME
    OPTIONS = (RESPONSE_FORMAT, *BuiltinJudge.OPTIONS)

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)

        async def one(turn: Turn) -> Label:
            n = len(turn.segments)
            # About 4 tokens per listed index ("12, "), every unit at most.
            config = graded_config(
                engine, self.values, max_tokens=32 + 4 * n, schema=spans_schema(n), logprobs=False
            )
            values = {
                "query": fence(turn.query, "QUERY"),
                "intent": fence(session.intent or "(not given)", "INTENT"),
                "segments": segments_block(turn),
            }
            label = await ask(
                engine,
                self.key(session, turn.index, "spans", version),
                render_messages(text, values),
                config,
                self.task,
                JudgeContext(session, turn, self.options),
                lambda reply: parse_spans(reply, n),
                stats=self.stats,
                language=language,
            )
            if label.value is None:
                return label
            indices = [int(i) for i in label.value]
            texts = [turn.segments[i].text for i in indices if i < n]
            return Label(
                key=label.key,
                value=indices,
                raw=label.raw,
                prompt_hash=label.prompt_hash,
                extra={**label.extra, "texts": texts, "n_segments": n},
            )

        return list(await asyncio.gather(*(one(t) for t in session.turns if t.segments)))


@register_judge(NAME)
def spans(**options: Any) -> SpansJudge:
    """Options: template, language, model, temperature, response_format (json_object or
    json_schema), max_tokens."""
    return SpansJudge(**options)


#: The gold marks a spans judge is compared with, as ``meta.json``'s spans block names them.
SPAN_REFERENCES = {
    "vs_user": ("user", "the user's marks"),
    "vs_annotators": ("annotators", "the annotators' marks"),
    "human_reference_user_vs_annotators": (
        "user vs annotators (human reference)",
        "user vs annotators (human reference)",
    ),
}


class SpansKind(JudgeKind):
    """The spans kind: a turn label (item ``spans``) listing the useful units; its turn
    score is the share of the response's units it marks, compared with the user's and the
    annotators' marks."""

    name = NAME
    evidence = EVIDENCE
    own_items = frozenset({NAME})
    marks_units = True
    own_score = (
        "0-1",
        "the share of a turn's text units the judge marks useful; a session aggregates its turns",
    )

    def turn_value(self, value: Any, n_segments: int) -> float | None:
        if not isinstance(value, list):
            return None
        return len(set(value)) / n_segments if n_segments else None

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        rows: list[list[Any]] = []
        for judge, block in blocks.items():
            for key, (title, _) in SPAN_REFERENCES.items():
                figures = block.get(key)
                if isinstance(figures, Mapping) and figures.get("n_turns"):
                    human = key.startswith("human")
                    who = JudgeCell(judge, f" vs {title}", instead=title if human else None)
                    rows.append(
                        [
                            who,
                            figures.get("n_turns"),
                            figures.get("precision"),
                            figures.get("recall"),
                            figures.get("f1"),
                        ]
                    )
        if not rows:
            return None
        head = ("", "turns", "precision", "recall", "F1")
        return JudgeTable("Useful spans vs gold marks (micro-averaged)", head, rows)

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = [
            [
                JudgeCell(judge, f": {title}"),
                m.get("n_turns"),
                m.get("precision"),
                m.get("recall"),
                m.get("f1"),
                m.get("macro_f1"),
            ]
            for judge, block in blocks.items()
            for name, (_, title) in SPAN_REFERENCES.items()
            if isinstance(m := block.get(name), Mapping)
        ]
        head = ("judge: against", "turns", "precision", "recall", "F1", "macro F1")
        return JudgeTable("Useful spans vs gold", head, rows, key="span-agreement")

    def meta_lines(self, result: Mapping[str, Any]) -> list[str]:
        n = partial(number_text, missing="n/a")
        spans = result.get(self.name)
        if not spans:
            return []
        lines = []
        for name in SPAN_REFERENCES:
            b = spans[name]
            lines.append(f"spans {name}: P {n(b['precision'])} R {n(b['recall'])} F1 {n(b['f1'])}")
        return lines


KIND = SpansKind()
