"""Every registered judge with what it labels and the options it takes (name, default, help):
what ``genir-eval judges`` lists and a scenario's ``options = {...}`` may set.

The options are declared here, apart from the judges' code, in one table a reader (and the
command line) can scan; a test checks the table against the registry, so a new judge or a
renamed option cannot be left out.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from genir_eval.judges.base import judge_names, make_judge

__all__ = ["JudgeOption", "JudgeEntry", "JUDGE_OPTIONS", "COMMON_OPTIONS", "judge_catalog"]


@dataclass(frozen=True)
class JudgeOption:
    name: str
    default: Any
    help: str


@dataclass(frozen=True)
class JudgeEntry:
    name: str
    kind: str
    summary: str
    options: tuple[JudgeOption, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "summary": self.summary,
            "options": [
                {"name": o.name, "default": o.default, "help": o.help} for o in self.options
            ],
        }


COMMON_OPTIONS: tuple[JudgeOption, ...] = (
    JudgeOption("model", None, "model for this judge (default: the provider's default)"),
    JudgeOption("temperature", 0.0, "sampling temperature"),
    JudgeOption("max_tokens", None, "reply token budget (default: the judge's own)"),
    JudgeOption("language", None, "prompt language, en or zh (default: the session's)"),
)
_TEMPLATE = JudgeOption(
    "template", None, "a prompt file of your own replacing the built-in template"
)
_LOGPROBS = JudgeOption(
    "logprobs",
    True,
    "ask for token log-probabilities and report the expected label (probability-weighted) "
    "and its entropy beside the label",
)
_TOP_LOGPROBS = JudgeOption(
    "top_logprobs", 10, "alternatives asked per token for the expected label"
)
_SAMPLES = JudgeOption(
    "samples",
    1,
    "without logprobs: k replies (the greedy one and k-1 at temperature 0.7), expected label = "
    "their mean",
)
_RESPONSE_FORMAT = JudgeOption(
    "response_format",
    "json_object",
    "json_object, or json_schema: send the reply's schema for servers that enforce it",
)
_CONTEXT = JudgeOption(
    "context_tokens",
    8192,
    "the model's context window: long sessions' responses are cut to fit it",
)
_GRADED = (_LOGPROBS, _TOP_LOGPROBS, _SAMPLES, _RESPONSE_FORMAT)
_SESSION = (_LOGPROBS, _TOP_LOGPROBS, _CONTEXT)
_ITEM = (
    JudgeOption("answer", "explicit", "pseudo-answer style: explicit or implicit"),
    JudgeOption("judgment", "listwise", "utility judgment: listwise or pointwise"),
    JudgeOption("max_iterations", 3, "iterations of the answer -> judge -> rank loop"),
    JudgeOption("rouge_threshold", None, "stop when answers agree this much (ROUGE-L; off)"),
    JudgeOption("k", 5, "top-k links kept by item-ar"),
    JudgeOption("samples", 5, "shuffled samples of item-ksample"),
    JudgeOption("seed", 0, "shuffle seed of item-ksample"),
    JudgeOption("offline_threshold", 0.5, "the offline twin's lexical threshold"),
    JudgeOption("offline_feedback", 0.5, "weight of feedback signals in the offline twin"),
)
_DIRECT = (JudgeOption("links_only", True, "grade only the passages of cited links"),)

JUDGE_OPTIONS: dict[str, tuple[JudgeOption, ...]] = {
    "link_usefulness.dna": (
        JudgeOption("role", True, "start the prompt with the rater's role"),
        JudgeOption("description", True, "give the user's intent as the topic description"),
        JudgeOption("narrative", True, "give the session's earlier queries as the narrative"),
        JudgeOption("aspects", True, "ask for match (M) and trust (T) before the label"),
        JudgeOption("judges", 1, "simulated raters in one call; the label is their mean"),
        *_GRADED,
        _TEMPLATE,
    ),
    "link_usefulness.true": (
        JudgeOption(
            "signals",
            "relevance,behaviour,satisfaction",
            "log signal groups in the prompt (comma-separated, for ablations)",
        ),
        *_GRADED,
        _TEMPLATE,
    ),
    "link_usefulness.listwise": (_LOGPROBS, _TOP_LOGPROBS, _RESPONSE_FORMAT, _TEMPLATE),
    "citation_support": (
        JudgeOption(
            "allow_title_only",
            False,
            "judge a link without source text from its title and url (else: missing)",
        ),
        JudgeOption(
            "quote",
            "strict",
            "strict: a supported verdict must quote the source; lenient: keep it, flagged",
        ),
        JudgeOption("max_source_chars", 6000, "source text beyond this is cut (and marked)"),
        _TEMPLATE,
    ),
    "spans": (_RESPONSE_FORMAT, _TEMPLATE),
    "satisfaction.geval": (*_SESSION, _TEMPLATE),
    "satisfaction.urs": (*_SESSION, _TEMPLATE),
    "satisfaction.gah": (*_SESSION, _TEMPLATE),
    "item-as": _ITEM,
    "item-ars": _ITEM,
    "item-ar": _ITEM,
    "item-vanilla": _ITEM,
    "item-joint": _ITEM,
    "item-ksample": _ITEM,
    "rubric": (
        JudgeOption("n", 10, "questions per bank"),
        JudgeOption("kind", "questions", "bank of questions or nuggets"),
        JudgeOption("scope", "turn", "one bank per turn, or per session"),
        JudgeOption("mode", "generate", "generate: read or make banks; grade: read only"),
        JudgeOption("rubric_dir", None, "folder of bank files (default: kept in the labels)"),
        JudgeOption("grading", "passage", "one call per passage, or per question and passage"),
        JudgeOption("label", "max", "a passage's label: max grade or count of answered"),
        JudgeOption("min_questions", 1, "answered questions needed for a relevant passage"),
        JudgeOption("threshold", 4, "grade (0-5) counted as answered"),
    ),
    "rubric-thomas": (*_DIRECT, JudgeOption("threshold", 1, "grade (0-2) counted as relevant")),
    "rubric-yesno": (*_DIRECT, JudgeOption("threshold", 1, "yes (1) counted as relevant")),
}
"""Each judge's own options, by registry name; every judge also takes :data:`COMMON_OPTIONS`."""


def _declared_on_class() -> dict[str, tuple[JudgeOption, ...]]:
    """The options of the judge kinds that declare their table on the class (``OPTIONS``,
    each with default, bound and help: the pairwise kind), read from that one declaration."""
    found = {}
    for name in judge_names():
        table = getattr(make_judge(name), "OPTIONS", None)
        if table is not None:
            found[name] = tuple(JudgeOption(o.name, o.default, o.help) for o in table)
    return found


JUDGE_OPTIONS.update(_declared_on_class())


SUMMARIES: dict[str, str] = {
    "item-as": "ITEM (Zhang et al. 2024): a pseudo-answer from the selected links, then a "
    "utility judgment over all links; repeated until the useful set stops changing",
    "item-ars": "ITEM: a pseudo-answer, the links ranked by relevance to it, then a utility "
    "judgment over that order; repeated until the useful set stops changing",
    "item-ar": "ITEM: a pseudo-answer, the links ranked by utility; the top k are the useful "
    "set; repeated until it stops changing",
    "item-vanilla": "ITEM baseline: one listwise utility judgment of the links, no answer",
    "item-joint": "ITEM baseline: the pseudo-answer and the utility judgment in one call",
    "item-ksample": "ITEM baseline: several listwise judgments over seeded shuffles of the "
    "links, majority vote",
    "rubric": "RUBRIC (Farzi & Dietz 2024): a bank of questions per turn, each statement and "
    "cited link graded 0-5 on how well it answers them",
    "rubric-thomas": "RUBRIC baseline: each passage graded 0-2 directly (Thomas et al. 2024, "
    "M/T/O aspects)",
    "rubric-yesno": "RUBRIC baseline: each passage judged relevant or not directly",
}
"""Judges described on their own where one module registers several (the ITEM variants and
baselines, RUBRIC and its baselines); the others are summarised by their module's docstring."""

#: Options that only one ITEM judge reads: shown for that judge only.
_ITEM_ONLY = {"k": "item-ar", "samples": "item-ksample", "seed": "item-ksample"}

_ROLE = re.compile(r":\w+:`~?([^`]+)`")


def _summary(name: str, judge: Any) -> str:
    if name in SUMMARIES:
        return SUMMARIES[name]
    module = sys.modules.get(type(judge).__module__)
    doc = (module.__doc__ if module else None) or type(judge).__doc__ or ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    if first.startswith("``") and ":" in first:
        first = first.split(":", 1)[1].strip()
    # no reStructuredText roles or literals on a terminal
    return _ROLE.sub(r"\1", first).replace("``", "")


def _applies(name: str, option: JudgeOption) -> bool:
    only = _ITEM_ONLY.get(option.name)
    return only is None or not name.startswith("item-") or name == only


def judge_catalog() -> list[JudgeEntry]:
    """Every registered judge, by name: kind, one-line summary, options with defaults."""
    entries = []
    for name in judge_names():
        judge = make_judge(name)
        own = tuple(o for o in JUDGE_OPTIONS.get(name, ()) if _applies(name, o))
        names = {o.name for o in own}
        common = tuple(o for o in COMMON_OPTIONS if o.name not in names)
        entries.append(JudgeEntry(name, str(judge.kind), _summary(name, judge), (*own, *common)))
    return entries
