"""``link_usefulness.dna``: description-narrative-aspects prompts for cited-link usefulness.

After Thomas, Spielman, Craswell and Mitra, "Large language models can accurately predict
searcher preferences" (SIGIR 2024): the prompt gives the query with the topic's description
(here the user's own statement of the session's search intent) and narrative (here the
queries asked earlier in the session), what the rater sees of the result (title, url, and
the response statements that cite it), asks for aspects first (M: match to the need, T:
trustworthiness) and then the overall label O on URGE's 0-3 scale. Each part is a switch, as
is the role sentence and "several simulated judges" (the label is then their mean), so
:mod:`genir_eval.meta.prompt_selection` can compare the variants; a user-supplied
paraphrase replaces the template text via ``template=<path>``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

from genir_eval.judges.base import Label, ask, register_judge
from genir_eval.judges.common import (
    BuiltinJudge,
    JudgeContext,
    citing_statements,
    generate_config,
    history,
)
from genir_eval.judges.parsing import (
    ReplyError,
    expect_int,
    expect_key,
    expect_mapping,
    extract_object,
)
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.records import Session

__all__ = ["DnaLinkJudge", "link_usefulness_dna", "parse_dna"]

NAME = "link_usefulness.dna"


def parse_dna(text: str, *, aspects: bool, judges: int) -> dict[str, Any]:
    """``{"O": label, ...}`` or ``{"judges": [...]}``: the overall label (the mean over
    simulated judges) plus the aspect ratings."""
    obj = expect_mapping(extract_object(text, want=dict))
    if judges > 1:
        raters = expect_key(obj, "judges", "raters")
        if not isinstance(raters, list) or not raters:
            raise ReplyError("'judges' must be a non-empty list")
        if len(raters) != judges:
            raise ReplyError(f"expected {judges} judges, got {len(raters)}")
        parsed = [_one(expect_mapping(r, "judge"), aspects) for r in raters]
        mean = sum(p["O"] for p in parsed) / len(parsed)
        return {"value": mean, "judges": parsed}
    one = _one(obj, aspects)
    return {"value": one["O"], **{k: v for k, v in one.items() if k != "O"}}


def _one(obj: Mapping[str, Any], aspects: bool) -> dict[str, int]:
    out = {"O": expect_int(expect_key(obj, "O", "overall", "label"), 0, 3, "O")}
    if aspects:
        out["M"] = expect_int(expect_key(obj, "M", "match"), 0, 3, "M")
        out["T"] = expect_int(expect_key(obj, "T", "trust", "trustworthiness"), 0, 3, "T")
    return out


class DnaLinkJudge(BuiltinJudge):
    name = NAME
    kind = "link_usefulness"
    template = "link_dna"
    task = NAME

    def __init__(
        self,
        *,
        role: bool = True,
        description: bool = True,
        narrative: bool = True,
        aspects: bool = True,
        judges: int = 1,
        **options: Any,
    ) -> None:
        if int(judges) < 1:
            raise ValueError("judges must be >= 1")
        super().__init__(
            role=bool(role),
            description=bool(description),
            narrative=bool(narrative),
            aspects=bool(aspects),
            judges=int(judges),
            **options,
        )

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        flags = {k: bool(self.options[k]) for k in ("role", "description", "narrative")}
        flags["aspects"] = bool(self.options["aspects"])
        flags["multiple"] = int(self.options["judges"]) > 1
        aspects, judges = flags["aspects"], int(self.options["judges"])
        config = generate_config(engine, self.options, response_format="json")

        def parse(reply: str) -> dict[str, Any]:
            return parse_dna(reply, aspects=aspects, judges=judges)

        calls = []
        for turn in session.turns:
            for link_id in turn.cited_link_ids:
                link = turn.link(link_id)
                values = {
                    "query": fence(turn.query, "QUERY"),
                    "intent": fence(session.intent or "(not given)", "INTENT"),
                    "history": fence(history(session, turn), "EARLIER QUERIES"),
                    "title": fence(link.title if link else "(unknown)", "TITLE"),
                    "url": fence(link.url if link else "(unknown)", "URL"),
                    "statements": fence(citing_statements(turn, link_id), "STATEMENTS"),
                    "judges": judges,
                }
                messages = render_messages(text, values, flags)
                context = JudgeContext(session, turn, self.options, link_id=link_id)
                key = self.key(session, turn.index, f"link:{link_id}", version)
                calls.append(
                    ask(
                        engine,
                        key,
                        messages,
                        config,
                        self.task,
                        context,
                        parse,
                        stats=self.stats,
                        language=language,
                    )
                )
        labels = await asyncio.gather(*calls)
        return [_flatten(label) for label in labels]


def _flatten(label: Label) -> Label:
    """Move the parsed aspects into ``extra`` so ``value`` is the label itself."""
    if not isinstance(label.value, Mapping):
        return label
    parsed = dict(label.value)
    value = parsed.pop("value")
    if isinstance(value, float) and math.isclose(value, round(value)):
        value = int(round(value))
    return Label(
        key=label.key,
        value=value,
        raw=label.raw,
        prompt_hash=label.prompt_hash,
        extra={**label.extra, **parsed},
    )


@register_judge(NAME)
def link_usefulness_dna(**options: Any) -> DnaLinkJudge:
    """Options: role, description, narrative, aspects (bools), judges (int), template
    (a paraphrase file), language, model, temperature."""
    return DnaLinkJudge(**options)
