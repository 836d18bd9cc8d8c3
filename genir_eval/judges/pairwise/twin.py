"""The pairwise judge's offline twin: which of two cited answers is better, from the log alone.

A baseline that must beat the simple rule "the answer citing more distinct passages wins"
(64% agreement with people on CrowdRAG-25, Gienapp et al., SIGIR 2025). It reads three
kinds of evidence from each answer, each a count or share the log states, and every
constant below is an a-priori choice, not a fitted weight:

- **coverage**: the number of distinct sources the answer cites (an answer drawing on more
  of the retrieved passages covers more of the topic);
- **clarity**: the answer's layout blocks, its non-empty lines (paragraphs, list items,
  headings): an answer broken into parts is easier to read than one block of text;
- **synthesis**: the share of the answer's word 5-grams that are *not* copied verbatim from
  the text of the sources it cites. An answer pasted from its sources leaves the reader to
  do the synthesis the engine was asked for (known only when the cited sources' text is in
  the log; without it the evidence is left out for both answers).

Each kind is compared on its own scale, so no unit has to be chosen and swapping the answers
negates the comparison exactly: a **count** (sources, blocks) as the log ratio
``ln((x1 + 1) / (x2 + 1))`` (doubling counts the same at any size, and 0 needs no special
case); a **share** (synthesis, support, grounding), already on the common scale [0, 1], as
the plain difference ``x1 - x2`` (a relative difference would call 0.15 against 0.30 as large
a gap as 0.5 against 1.0). The overall preference sums coverage, clarity and synthesis. A tie
only when that sum is exactly 0 (the evidence is equal). The criteria read the evidence that
speaks to them: coverage <- coverage; clarity <- clarity; grounding <- the share of the
answer's statements that carry a citation; correctness <- the lexical support of the cited
statements by their sources (share of a statement's content words found in the sources it
cites, averaged) where the text is known, else grounding. A criterion the twin has no reading
for (a user's own) is judged on the overall evidence.

The overall design was chosen by cross-validation over the 20 development topics of
CrowdRAG-25 (``python bench/twin_cv.py``: 5 x repeated 4-fold over topics, the design best
on three folds judging the fourth, among 14 a-priori designs with no fitted weight):
choosing this way agrees with people's gold winner on 0.681 [0.636, 0.727] of the decided
pairs it never saw (ties counted half; 95% bootstrap over topics), against 0.628 [0.571,
0.689] for its simplest ingredient, the distinct-passages rule, on the same folds; Kendall
tau of the six systems' out-of-sample ranking against people's win rates 0.69-0.97 over the
repeats (mean 0.820). This design was the one chosen in 13 of the 20 folds. The support
reading, which the overall summed before, is left out: the human answers of CrowdRAG copy
their passages (high support) and people prefer the LLM syntheses, so support alone agrees
with people on 0.42 of the pairs, below chance. The held-out topics are the test.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from genir_eval.judges.offline.features import synthesis as copied_synthesis
from genir_eval.llm.providers.base import Request
from genir_eval.llm.providers.offline import register_offline
from genir_eval.records import Turn

__all__ = [
    "AnswerEvidence",
    "answer_evidence",
    "compare_evidence",
    "preference",
    "twin_reply",
    "register_twin",
    "OVERALL_EVIDENCE",
]

#: The evidence the overall preference sums (see the module docstring: chosen by
#: cross-validation over topics, ``bench/twin_cv.py``).
OVERALL_EVIDENCE = ("coverage", "clarity", "synthesis")
#: Evidence that is a count (compared as a log ratio); the rest are shares in [0, 1].
COUNTS = frozenset({"coverage", "clarity"})
_CRITERION_EVIDENCE = {
    "coverage": ("coverage",),
    "clarity": ("clarity",),
    "grounding": ("grounding",),
    "correctness": ("support",),
}
_WORD = re.compile(r"\w+", re.UNICODE)
_MARKER = re.compile(r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")
_STOP = frozenset(
    "the a an and or of to in on for with is are was were be by as at that this it its from "
    "which can also their they has have not but more other such these may into about than "
    "how what".split()
)


@dataclass(frozen=True)
class AnswerEvidence:
    """What the twin reads from one answer; ``None`` where the log does not say."""

    coverage: float
    clarity: float
    grounding: float
    synthesis: float | None
    support: float | None


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _content(text: str) -> set[str]:
    return {w for w in set(_words(text)) - _STOP if not w.isdigit()}


def answer_evidence(turn: Turn) -> AnswerEvidence:
    """The twin's evidence about one answer (see the module docstring)."""
    text = turn.response_text
    cited = set(turn.cited_link_ids)
    blocks = sum(1 for line in text.splitlines() if line.strip())
    statements = [s for s in turn.statements if s.text.strip()]
    grounding = sum(1 for s in statements if s.citations) / len(statements) if statements else 0.0
    sources = {link.id: link.text for link in turn.links if link.id in cited and link.text}
    synthesis: float | None = None
    support: float | None = None
    if sources:
        synthesis = copied_synthesis(turn)
        source_content = {cid: _content(source) for cid, source in sources.items()}
        shares = []
        for statement in statements:
            if not statement.citations:
                continue
            own = _content(_MARKER.sub(" ", statement.text))
            if not own:
                continue
            theirs: set[str] = set()
            for cid in statement.citations:
                if cid in source_content:
                    theirs |= source_content[cid]
            shares.append(len(own & theirs) / len(own))
        support = sum(shares) / len(shares) if shares else None
    return AnswerEvidence(
        coverage=float(len(cited)),
        clarity=float(blocks),
        grounding=grounding,
        synthesis=synthesis,
        support=support,
    )


def compare_evidence(name: str, x: float, y: float) -> float:
    """How much more of evidence ``name`` the first answer has (positive: more): a count's
    log ratio ``ln((x + 1) / (y + 1))``, a share's difference ``x - y``. Antisymmetric, so
    swapping the answers negates it exactly and the twin never depends on the order it is
    shown them."""
    # log1p(x) - log1p(y), not log of the ratio: a difference of the same two floats is
    # exactly negated by the swap, so the mirrored order needs no second computation
    return math.log1p(x) - math.log1p(y) if name in COUNTS else x - y


_KINDS = ("coverage", "clarity", "grounding", "support", "synthesis")


def _comparisons(first: AnswerEvidence, second: AnswerEvidence) -> dict[str, float]:
    """Each kind of evidence compared (:func:`compare_evidence`), a kind either answer has
    no reading for left out (``support`` -> ``grounding``)."""
    out = {}
    for name in _KINDS:
        x, y = getattr(first, name), getattr(second, name)
        if (x is None or y is None) and name == "support":
            x, y = first.grounding, second.grounding
        if x is not None and y is not None:
            out[name] = compare_evidence(name, float(x), float(y))
    return out


def preference(first: AnswerEvidence, second: AnswerEvidence, evidence: Sequence[str]) -> float:
    """Sum of the comparisons over ``evidence`` (positive: the first is better),
    leaving out a kind either answer has no reading for (``support`` -> ``grounding``)."""
    found = _comparisons(first, second)
    return sum(found.get(name, 0.0) for name in evidence)


def _verdict(score: float) -> int:
    return 1 if score > 0 else 2 if score < 0 else 0


def _describe(first: AnswerEvidence, second: AnswerEvidence) -> str:
    parts = [
        f"cites {first.coverage:g} vs {second.coverage:g} distinct sources",
        f"{first.clarity:g} vs {second.clarity:g} layout blocks",
    ]
    if first.support is not None and second.support is not None:
        parts.append(
            f"{first.support:.0%} vs {second.support:.0%} of cited statements' words in their "
            "sources"
        )
    if first.synthesis is not None and second.synthesis is not None:
        parts.append(
            f"{1 - first.synthesis:.0%} vs {1 - second.synthesis:.0%} copied from its sources"
        )
    return "Answer 1 vs Answer 2: " + "; ".join(parts)


def twin_reply(
    first: AnswerEvidence, second: AnswerEvidence, criteria: Sequence[str]
) -> dict[str, Any]:
    """The reply the pairwise judge's prompt asks for (1: first answer, 2: second, 0: tie)."""
    found = _comparisons(first, second)
    overall = sum(found.get(name, 0.0) for name in OVERALL_EVIDENCE)
    verdicts = {
        name: _verdict(sum(found.get(kind, 0.0) for kind in _CRITERION_EVIDENCE[name]))
        if name in _CRITERION_EVIDENCE
        else _verdict(overall)
        for name in criteria
    }
    return {"reason": _describe(first, second), "criteria": verdicts, "overall": _verdict(overall)}


def _evidence_from(context: Mapping[str, Any], which: str) -> AnswerEvidence:
    value = context[which]
    return value if isinstance(value, AnswerEvidence) else AnswerEvidence(**value)


def _handle(request: Request) -> str:
    # the structured context, never the rendered prompt: text planted in an answer cannot
    # steer the twin
    context = request.context
    reply = twin_reply(
        _evidence_from(context, "first"), _evidence_from(context, "second"), context["criteria"]
    )
    return json.dumps(reply, ensure_ascii=False)


def register_twin(task: str) -> None:
    """Register the twin with the engine's offline provider under the judge's ``task``."""
    register_offline(task, _handle)


def evidence_dict(evidence: AnswerEvidence) -> dict[str, Any]:
    return asdict(evidence)
