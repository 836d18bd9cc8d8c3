"""``link_usefulness.listwise``: all cited links of a turn labelled in one call.

One request per turn shows every cited link with the statements citing it and asks for a
``{"labels": {id: 0-3}}`` object covering exactly those ids; a reply that skips an id, adds an
unknown one, or leaves the range is repaired once and otherwise the whole turn is missing.
Seeing the links side by side lets the model compare them (as listwise relevance judging
does), at the cost of one failure taking out the whole turn.
"""

from __future__ import annotations

import asyncio
from typing import Any

from genir_eval.judges.base import Label, ask, register_judge
from genir_eval.judges.common import BuiltinJudge, JudgeContext, citing_statements, graded_config
from genir_eval.judges.options import LOGPROBS, RESPONSE_FORMAT, TOP_LOGPROBS
from genir_eval.judges.parsing import (
    ReplyError,
    expect_id_map,
    expect_key,
    expect_mapping,
    extract_object,
)
from genir_eval.judges.probabilities import label_distribution, value_offset
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.llm.providers.base import Completion
from genir_eval.records import Session, Turn

__all__ = [
    "ListwiseLinkJudge",
    "link_usefulness_listwise",
    "parse_listwise",
    "listwise_schema",
    "listwise_expected",
]

NAME = "link_usefulness.listwise"
LABELS = (0, 1, 2, 3)


def listwise_schema(ids: tuple[int, ...]) -> dict[str, Any]:
    """The JSON schema of a reply labelling exactly ``ids``."""
    keys = [str(i) for i in ids]
    labels = {
        "type": "object",
        "properties": {k: {"type": "integer", "enum": list(LABELS)} for k in keys},
        "required": keys,
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"labels": labels},
        "required": ["labels"],
        "additionalProperties": False,
    }


def listwise_expected(completion: Completion, ids: tuple[int, ...]) -> dict[str, Any]:
    """``{"expected_by_link": {id: extra}}``: each link's expected label from the logprobs at
    its value; links whose value has no usable distribution are left out."""
    found: dict[str, Any] = {}
    for link_id in ids:
        offset = value_offset(completion.text, str(link_id))
        distribution = (
            label_distribution(completion, offset, LABELS) if offset is not None else None
        )
        if distribution is not None:
            found[str(link_id)] = distribution.as_extra()
    return {"expected_by_link": found} if found else {}


def parse_listwise(text: str, ids: tuple[int, ...]) -> dict[int, int]:
    obj = expect_mapping(extract_object(text, want=dict))
    try:
        labels = expect_key(obj, "labels", "links", "usefulness")
    except ReplyError:
        labels = obj  # a bare {"1": 3, ...} object
    return expect_id_map(labels, ids, 0, 3, "labels")


def _links_block(turn: Turn) -> str:
    blocks = []
    for link_id in turn.cited_link_ids:
        link = turn.link(link_id)
        title = link.title if link else "(unknown)"
        url = link.url if link else "(unknown)"
        body = f"{title}\n{url}\n{citing_statements(turn, link_id, limit=600)}"
        blocks.append(f"[{link_id}]\n{fence(body, f'LINK {link_id}')}")
    return "\n\n".join(blocks)


class ListwiseLinkJudge(BuiltinJudge):
    name = NAME
    kind = "link_usefulness"
    template = "link_listwise"
    task = NAME
    OPTIONS = (LOGPROBS, TOP_LOGPROBS, RESPONSE_FORMAT, *BuiltinJudge.OPTIONS)

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        turns = [t for t in session.turns if t.cited_link_ids]

        async def one(turn: Turn) -> list[Label]:
            ids = tuple(turn.cited_link_ids)
            config = graded_config(
                engine, self.values, max_tokens=16 + 8 * len(ids), schema=listwise_schema(ids)
            )
            values = {
                "query": fence(turn.query, "QUERY"),
                "intent": fence(session.intent or "(not given)", "INTENT"),
                "links": _links_block(turn),
            }
            label = await ask(
                engine,
                self.key(session, turn.index, "links", version),
                render_messages(text, values),
                config,
                self.task,
                JudgeContext(session, turn, self.options, extra={"ids": ids}),
                lambda reply: parse_listwise(reply, ids),
                stats=self.stats,
                language=language,
                extra=lambda completion, _: listwise_expected(completion, ids),
            )
            by_link = dict(label.extra.get("expected_by_link") or {})
            shared = {k: v for k, v in label.extra.items() if k != "expected_by_link"}
            out = []
            for link_id in ids:
                value = None
                if label.value is not None:
                    # Journal rows come back from JSON with string keys.
                    value = {int(k): v for k, v in label.value.items()}[link_id]
                out.append(
                    Label(
                        key=self.key(session, turn.index, f"link:{link_id}", version),
                        value=value,
                        missing_reason=label.missing_reason,
                        raw=label.raw,
                        prompt_hash=label.prompt_hash,
                        extra={**shared, **by_link.get(str(link_id), {}), "listwise": True},
                    )
                )
            return out

        results = await asyncio.gather(*(one(t) for t in turns))
        return [label for labels in results for label in labels]


@register_judge(NAME)
def link_usefulness_listwise(**options: Any) -> ListwiseLinkJudge:
    """Options: template, language, model, temperature, logprobs, response_format,
    max_tokens (as for ``link_usefulness.dna``)."""
    return ListwiseLinkJudge(**options)
