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

from genir_eval.judges.base import Label, register_judge
from genir_eval.judges.common import (
    BuiltinJudge,
    JudgeContext,
    ask_graded,
    graded_config,
    history,
    link_values,
    mean_distribution,
)
from genir_eval.judges.options import (
    LOGPROBS,
    RESPONSE_FORMAT,
    SAMPLES,
    TOP_LOGPROBS,
    Option,
    check_judge_options,
    option_values,
)
from genir_eval.judges.parsing import (
    ReplyError,
    expect_int,
    expect_key,
    expect_mapping,
    extract_object,
)
from genir_eval.judges.probabilities import label_distribution, value_offset, value_offsets
from genir_eval.judges.prompting import fence, render_messages
from genir_eval.llm.providers.base import Completion
from genir_eval.records import Session

__all__ = ["DnaLinkJudge", "link_usefulness_dna", "parse_dna", "dna_schema", "dna_expected"]

NAME = "link_usefulness.dna"
LABELS = (0, 1, 2, 3)


def _rater_schema(aspects: bool) -> dict[str, Any]:
    keys = ["M", "T", "O"] if aspects else ["O"]
    return {
        "type": "object",
        "properties": {k: {"type": "integer", "enum": list(LABELS)} for k in keys},
        "required": keys,
        "additionalProperties": False,
    }


def dna_schema(*, aspects: bool, judges: int) -> dict[str, Any]:
    """The JSON schema of a reply (for ``response_format=json_schema``)."""
    if judges <= 1:
        return _rater_schema(aspects)
    return {
        "type": "object",
        "properties": {
            "judges": {
                "type": "array",
                "items": _rater_schema(aspects),
                "minItems": judges,
                "maxItems": judges,
            }
        },
        "required": ["judges"],
        "additionalProperties": False,
    }


def dna_expected(completion: Completion, judges: int) -> dict[str, Any]:
    """The expected overall label (and entropy) from the reply's token logprobs at each
    ``O`` value (the mean over simulated judges); empty when not available."""
    if judges <= 1:
        offset = value_offset(completion.text, "O", "overall", "label")
        found = label_distribution(completion, offset, LABELS) if offset is not None else None
        return found.as_extra() if found is not None else {}
    offsets = value_offsets(completion.text, "O")
    if len(offsets) != judges:
        return {}
    return mean_distribution([label_distribution(completion, o, LABELS) for o in offsets])


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
    OPTIONS = (
        Option("role", True, "start the prompt with the rater's role"),
        Option("description", True, "give the user's intent as the topic description"),
        Option("narrative", True, "give the session's earlier queries as the narrative"),
        Option("aspects", True, "ask for match (M) and trust (T) before the label"),
        Option(
            "judges", 1, "simulated raters in one call; the label is their mean", range=(1, 100)
        ),
        LOGPROBS,
        TOP_LOGPROBS,
        SAMPLES,
        RESPONSE_FORMAT,
        *BuiltinJudge.OPTIONS,
    )
    #: the prompt's switches: always among the options the judge is named by (its prompt
    #: version and ``repr``), given or not
    SWITCHES = ("role", "description", "narrative", "aspects", "judges")

    def __init__(self, **options: Any) -> None:
        check_judge_options(NAME, self.OPTIONS, options)
        values = option_values(self.OPTIONS, options)
        switches = {name: values[name] for name in self.SWITCHES}
        switches["judges"] = int(switches["judges"])
        super().__init__(**{**options, **switches})

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        language = self.language(session)
        text = self.template_text(language)
        version = self.prompt_version(text)
        flags = {k: bool(self.values[k]) for k in ("role", "description", "narrative")}
        flags["aspects"] = bool(self.values["aspects"])
        flags["multiple"] = int(self.values["judges"]) > 1
        aspects, judges = flags["aspects"], int(self.values["judges"])
        config = graded_config(
            engine,
            self.values,
            max_tokens=(48 if aspects else 24) * judges + 16,
            schema=dna_schema(aspects=aspects, judges=judges),
        )
        samples = int(self.values["samples"])

        def parse(reply: str) -> dict[str, Any]:
            return parse_dna(reply, aspects=aspects, judges=judges)

        def expected(completion: Completion, _: Any) -> dict[str, Any]:
            return dna_expected(completion, judges)

        async def judged(key: Any, messages: Any, context: Any) -> Label:
            return await ask_graded(
                engine,
                key,
                messages,
                config,
                self.task,
                context,
                parse,
                stats=self.stats,
                language=language,
                expected=expected,
                samples=samples,
                finish=_flatten,
            )

        calls = []
        for turn in session.turns:
            for link_id in turn.cited_link_ids:
                values: dict[str, Any] = {
                    **link_values(session, turn, link_id),
                    "history": fence(history(session, turn), "EARLIER QUERIES"),
                    "judges": judges,
                }
                messages = render_messages(text, values, flags)
                context = JudgeContext(session, turn, self.options, link_id=link_id)
                key = self.key(session, turn.index, f"link:{link_id}", version)
                calls.append(judged(key, messages, context))
        return list(await asyncio.gather(*calls))


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
    """The DNA judge; its options are :attr:`DnaLinkJudge.OPTIONS`."""
    return DnaLinkJudge(**options)
