"""``pairwise``: which of two answers to the same query is better, overall and per criterion.

Given a query and two systems' answers with the sources they cite (the source text where the
log has it, cut at ``max_source_chars``), the judge says which answer is better or that they
are equally good, overall and on named criteria (default: correctness, coverage, grounding
in the cited sources, clarity; a user's own as ``name=what it means``), with a short reason.
Every log field is fenced as data.

Both orders by default (``orders="both"``): the answers are shown once as (a, b) and once as
(b, a), and the two verdicts are combined (:func:`combine`): a verdict that flips with the
order is a tie, one order's tie defers to the other's decision. The share of pairs whose two
verdicts agree is the judge's position-consistency rate (Zheng et al., NeurIPS 2023,
"Judging LLM-as-a-judge"). Where the provider gives token log-probabilities, each order also
carries the expected preference: the probability, read at the ``overall`` token, that the
answer shown first is better (a tie counts half), turned into the probability that ``a`` is.

A pair is not a session, so the judge is called per :class:`Pair` (:meth:`PairwiseJudge.
compare`) by ``genir-eval arena``; calling it on one session is a configuration error.

The offline twin is judged without the engine (:meth:`PairwiseJudge.compare_offline`): it
reads the answers' structured evidence, never the prompt, and is antisymmetric by
construction, so one order is computed and the swapped order is recorded as its mirror
(``mirrored: true``), not as a second judgment; and it is neither journaled nor cached, as
computing a verdict costs less than reading a journal row.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.judges.base import JudgeStats, Label, ask
from genir_eval.judges.common import DEFAULT_TOP_LOGPROBS, generate_config
from genir_eval.judges.options import Option, check_judge_options, option_values
from genir_eval.judges.pairwise.twin import (
    AnswerEvidence,
    answer_evidence,
    register_twin,
    twin_reply,
)
from genir_eval.judges.parsing import ReplyError, expect_mapping, extract_object
from genir_eval.judges.probabilities import label_distribution, value_offset
from genir_eval.judges.prompting import (
    fence,
    load_template,
    render_messages,
    template_version,
)
from genir_eval.llm.providers.base import Completion, JudgmentKey, composite_item
from genir_eval.records import Session, Turn

__all__ = [
    "NAME",
    "KIND",
    "Option",
    "Pair",
    "OrderVerdict",
    "PairVerdict",
    "PairwiseJudge",
    "parse_preference",
    "combine",
    "DEFAULT_CRITERIA",
]

NAME = "pairwise"
KIND = "pairwise"
TASK = "pairwise"
VERDICTS = ("a", "b", "tie")

DEFAULT_CRITERIA: Mapping[str, Mapping[str, str]] = {
    "correctness": {
        "en": "what it says is accurate and answers the query",
        "zh": "所述内容准确，并回答了查询",
    },
    "coverage": {
        "en": "it covers the aspects of the query that the sources allow",
        "zh": "覆盖了来源所能支持的查询的各个方面",
    },
    "grounding": {
        "en": "its statements are supported by the sources it cites",
        "zh": "其陈述得到所引用来源的支持",
    },
    "clarity": {
        "en": "it is clear, well organised and easy to read",
        "zh": "清晰、条理分明、易于阅读",
    },
}


@dataclass(frozen=True)
class Pair:
    """Two systems' answers to one query (turn ``turn`` of session ``session_id``)."""

    session_id: str
    turn: int
    query: str
    a: str
    b: str
    answer_a: Turn
    answer_b: Turn
    language: str = "en"


@dataclass(frozen=True)
class OrderVerdict:
    """One order's verdict, in terms of the systems (``a``/``b``/``tie``); ``None`` overall
    means missing (``missing_reason`` says why)."""

    order: str
    overall: str | None
    criteria: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""
    expected_a: float | None = None
    missing_reason: str | None = None
    #: the other order's verdict mirrored, not judged (the offline twin is antisymmetric)
    mirrored: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = {
            "order": self.order,
            "overall": self.overall,
            "criteria": dict(self.criteria),
            "reason": self.reason,
            "expected_a": self.expected_a,
            "missing_reason": self.missing_reason,
        }
        if self.mirrored:
            out["mirrored"] = True
        return out


@dataclass(frozen=True)
class PairVerdict:
    """A pair's combined verdict; ``winner is None`` when every order is missing."""

    pair: Pair
    winner: str | None
    criteria: Mapping[str, str]
    orders: tuple[OrderVerdict, ...]
    reason: str
    consistent: bool | None
    expected_a: float | None = None
    missing_reason: str | None = None


class PairwiseJudge:
    """The pairwise preference judge (see the module docstring)."""

    name = NAME
    kind = KIND
    task = TASK
    template = "pairwise"

    OPTIONS: tuple[Option, ...] = (
        Option(
            "criteria",
            "correctness,coverage,grounding,clarity",
            "criteria judged beside the overall verdict, comma-separated; a criterion of your "
            "own as name=what it means",
        ),
        Option(
            "orders",
            "both",
            "both: judge each pair in both orders (a flip is a tie); one: as listed only",
            choices=("both", "one"),
        ),
        Option("max_source_chars", 1500, "each cited source's text is cut at this", range=(0, 1e6)),
        Option("max_answer_chars", 6000, "each answer is cut at this", range=(100, 1e7)),
        Option(
            "logprobs",
            True,
            "ask for token log-probabilities: the expected preference beside the verdict",
            choices=(True, False),
        ),
        Option("top_logprobs", DEFAULT_TOP_LOGPROBS, "alternatives per token", range=(1, 20)),
        Option(
            "model", None, "model for this judge (default: the provider's default)", type="text"
        ),
        Option("temperature", 0.0, "sampling temperature", range=(0, 2)),
        Option("max_tokens", 400, "reply token budget", range=(16, 100_000)),
        Option(
            "language",
            None,
            "prompt language, en or zh (default: the query's)",
            choices=("en", "zh"),
        ),
        Option(
            "template",
            None,
            "a prompt file of your own replacing the built-in template",
            type="text",
        ),
    )

    def __init__(self, **options: Any) -> None:
        check_judge_options(self.name, self.OPTIONS, options)
        self.options: Mapping[str, Any] = option_values(self.OPTIONS, options)
        self.criteria = _criteria(str(self.options["criteria"]))
        self.stats = JudgeStats()
        # an answer meets every other system's: its evidence is read once while the caller
        # holds the answer (the arena, a window of pairs), and forgotten with it
        self._evidence: weakref.WeakKeyDictionary[Turn, AnswerEvidence] = (
            weakref.WeakKeyDictionary()
        )
        self._templates: dict[str, tuple[str, str]] = {}

    def evidence(self, turn: Turn) -> AnswerEvidence:
        """The twin's evidence about ``turn``, read once per answer."""
        found = self._evidence.get(turn)
        if found is None:
            found = self._evidence[turn] = answer_evidence(turn)
        return found

    async def __call__(self, session: Session, engine: Any) -> list[Label]:
        raise ConfigError(
            f"{NAME} compares two systems' answers: run it with `genir-eval arena`, not on "
            "one system's sessions"
        )

    def language(self, pair: Pair) -> str:
        return str(self.options.get("language") or pair.language)

    async def compare(self, pair: Pair, engine: Any) -> PairVerdict:
        """Judge ``pair`` in one or both orders and combine the verdicts."""
        shown = [(pair.a, pair.b)]
        if self.options["orders"] == "both":
            shown.append((pair.b, pair.a))
        orders = await asyncio.gather(*(self._order(pair, f, s, engine) for f, s in shown))
        return combine(pair, tuple(orders), list(self.criteria))

    def compare_offline(self, pair: Pair) -> PairVerdict:
        """The offline twin's verdict on ``pair``, computed here rather than through an
        engine (see the module docstring): order (a, b) judged, order (b, a), when both are
        asked, its mirror. ``consistent`` is ``None``: one judgment cannot disagree with
        itself, so it says nothing about position bias."""
        reply = twin_reply(
            self.evidence(pair.answer_a), self.evidence(pair.answer_b), list(self.criteria)
        )
        side = {1: "a", 2: "b", 0: "tie"}
        overall = side[reply["overall"]]
        criteria = {name: side[choice] for name, choice in reply["criteria"].items()}
        orders = [OrderVerdict("ab", overall, criteria, reply["reason"])]
        if self.options["orders"] == "both":
            orders.append(OrderVerdict("ba", overall, criteria, mirrored=True))
        return PairVerdict(pair, overall, criteria, tuple(orders), reply["reason"], None)

    async def _order(self, pair: Pair, first: str, second: str, engine: Any) -> OrderVerdict:
        language = self.language(pair)
        text, version = self._template(language)
        answers = {pair.a: pair.answer_a, pair.b: pair.answer_b}
        messages = render_messages(
            text, self._values(answers[first], answers[second], pair, language)
        )
        key = JudgmentKey(
            pair.session_id, pair.turn, composite_item("order", first, second), NAME, version
        )
        logprobs = bool(self.options["logprobs"])
        config = generate_config(
            engine,
            self.options,
            response_format="json",
            max_tokens=int(self.options["max_tokens"]),
            logprobs=logprobs,
            top_logprobs=int(self.options["top_logprobs"]) if logprobs else None,
        )
        context = {
            "first": self.evidence(answers[first]),
            "second": self.evidence(answers[second]),
            "criteria": list(self.criteria),
        }
        names = list(self.criteria)
        label = await ask(
            engine,
            key,
            messages,
            config,
            TASK,
            context,
            lambda reply: parse_preference(reply, names),
            stats=self.stats,
            language=language,
            extra=_expected_first,
        )
        return _as_order(label, first, second, pair.a)

    def _template(self, language: str) -> tuple[str, str]:
        found = self._templates.get(language)
        if found is None:
            text = load_template(str(self.options.get("template") or self.template), language)
            shaping = {k: v for k, v in self.options.items() if k != "model"}
            found = self._templates[language] = (text, template_version(text, shaping))
        return found

    def _values(self, first: Turn, second: Turn, pair: Pair, language: str) -> dict[str, Any]:
        limit = int(self.options["max_answer_chars"])
        return {
            "query": fence(pair.query, "QUERY"),
            "answer_1": fence(_cut(first.response_text, limit), "ANSWER 1"),
            "answer_2": fence(_cut(second.response_text, limit), "ANSWER 2"),
            "sources_1": self._sources(first, "1"),
            "sources_2": self._sources(second, "2"),
            "criteria": "\n".join(
                f"- {name}: {_describe(name, meaning, language)}"
                for name, meaning in self.criteria.items()
            ),
            "criteria_slots": ", ".join(f'"{name}": 1 or 2 or 0' for name in self.criteria),
        }

    def _sources(self, turn: Turn, which: str) -> str:
        limit = int(self.options["max_source_chars"])
        cited = set(turn.cited_link_ids)
        blocks = [
            fence(
                f"[{link.id}] {link.title}\n{link.url}\n{_cut(link.text or '', limit)}".strip(),
                f"SOURCE {which}.{link.id}",
            )
            for link in turn.links
            if link.id in cited
        ]
        return "\n".join(blocks) if blocks else "(none)"

    def __repr__(self) -> str:
        return f"make_judge({NAME!r}, criteria={self.options['criteria']!r})"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def _describe(name: str, meaning: str, language: str) -> str:
    if meaning:
        return meaning
    known = DEFAULT_CRITERIA.get(name)
    return known[language if language in known else "en"] if known else name


def _criteria(spec: str) -> dict[str, str]:
    """``"correctness,depth=goes beyond the obvious"`` -> ``{name: meaning ('' = built-in)}``."""
    out: dict[str, str] = {}
    for part in spec.split(","):
        name, _, meaning = part.partition("=")
        name = name.strip()
        if not name:
            continue
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(
                f"{NAME}: criterion name {name!r} must be a word (letters, digits, _ or -)"
            )
        if not meaning.strip() and name not in DEFAULT_CRITERIA:
            raise ConfigError(
                f"{NAME}: criterion {name!r} is not built in "
                f"({', '.join(DEFAULT_CRITERIA)}): say what it means as {name}=..."
            )
        out[name] = meaning.strip()
    return out


_CHOICE = {1: 1, 2: 2, 0: 0, "1": 1, "2": 2, "0": 0, "tie": 0}


def _choice(value: Any, what: str) -> int:
    key = value.strip().lower() if isinstance(value, str) else value
    if isinstance(key, bool) or key not in _CHOICE:
        raise ReplyError(f"{what} must be 1, 2 or 0, got {value!r}")
    return _CHOICE[key]


def parse_preference(reply: str, criteria: Sequence[str]) -> dict[str, Any]:
    """``{"overall": 1|2|0, "criteria": {name: 1|2|0}, "reason": str}`` from a reply, or
    :class:`ReplyError` naming what is wrong (a missing criterion is unusable, not a tie)."""
    obj = expect_mapping(extract_object(reply, want=dict))
    if "overall" not in obj:
        raise ReplyError("the reply has no 'overall' verdict")
    given = obj.get("criteria") or {}
    if not isinstance(given, Mapping):
        raise ReplyError("'criteria' must be an object")
    verdicts = {}
    for name in criteria:
        if name not in given:
            raise ReplyError(f"the reply has no verdict for criterion {name!r}")
        verdicts[name] = _choice(given[name], f"criterion {name!r}")
    reason = obj.get("reason", "")
    return {
        "overall": _choice(obj["overall"], "'overall'"),
        "criteria": verdicts,
        "reason": reason if isinstance(reason, str) else str(reason),
    }


def _expected_first(completion: Completion, value: Mapping[str, Any]) -> dict[str, Any]:
    offset = value_offset(completion.text, "overall")
    if offset is None:
        return {}
    found = label_distribution(completion, offset, [0, 1, 2])
    if found is None:
        return {}
    p = found.probabilities
    return {"expected_first": p.get(1, 0.0) + 0.5 * p.get(0, 0.0), "coverage": found.coverage}


def _as_order(label: Label, first: str, second: str, a: str) -> OrderVerdict:
    order = "ab" if first == a else "ba"
    if label.value is None:
        return OrderVerdict(order, None, missing_reason=label.missing_reason or "missing")
    value = label.value

    def system(choice: int) -> str:
        shown = {1: first, 2: second}.get(choice)
        return "tie" if shown is None else ("a" if shown == a else "b")

    expected = label.extra.get("expected_first")
    expected_a = None
    if isinstance(expected, (int, float)):
        expected_a = float(expected) if first == a else 1.0 - float(expected)
    return OrderVerdict(
        order,
        system(int(value["overall"])),
        {name: system(int(choice)) for name, choice in value["criteria"].items()},
        str(value.get("reason", "")),
        expected_a,
    )


def _merge(verdicts: Sequence[str]) -> str:
    """Both orders' verdicts as one: +1 for ``a``, -1 for ``b``; a flip sums to a tie."""
    score = sum(1 if v == "a" else -1 if v == "b" else 0 for v in verdicts)
    return "a" if score > 0 else "b" if score < 0 else "tie"


def combine(pair: Pair, orders: tuple[OrderVerdict, ...], criteria: Sequence[str]) -> PairVerdict:
    """One verdict from the orders judged (the missing ones left out)."""
    present = [o for o in orders if o.overall is not None]
    if not present:
        reasons = "; ".join(o.missing_reason or "missing" for o in orders)
        return PairVerdict(pair, None, {}, orders, "", None, missing_reason=reasons)
    winner = _merge([o.overall for o in present if o.overall is not None])
    merged = {
        name: _merge([o.criteria[name] for o in present if name in o.criteria]) for name in criteria
    }
    consistent = present[0].overall == present[1].overall if len(present) == 2 else None
    expected = [o.expected_a for o in present if o.expected_a is not None]
    return PairVerdict(
        pair,
        winner,
        merged,
        orders,
        present[0].reason,
        consistent,
        expected_a=sum(expected) / len(expected) if expected else None,
    )


register_twin(TASK)
