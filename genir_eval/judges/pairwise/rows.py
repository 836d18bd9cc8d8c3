"""How pairwise verdicts become rows (``pairs.jsonl``) and how they meet people's gold.

A row is one compared pair: ``session_id``, ``turn``, ``a``, ``b`` (system names),
``winner`` (``"a"``, ``"b"``, ``"tie"``, or ``None`` with ``missing_reason``), ``orders``
(each order's verdict), ``criteria`` (the combined per-criterion verdicts), ``reason``,
``consistent`` (the two orders agreed) and ``expected_a`` (from log-probabilities), plus the
style covariates of both answers the style-controlled ranking reads.

Gold preferences are rows of the canonical preferences format: ``session_id``, ``turn``,
``a``, ``b``, ``winner`` (``"a"``/``"b"``/``"tie"``); a pair rated several times has the
majority of its decided labels as its gold winner, ties dropped (CrowdRAG-25's rule).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from genir_eval.judges.pairwise.judge import PairVerdict
from genir_eval.records import Turn

__all__ = [
    "PAIRS_VERSION",
    "style_features",
    "pair_row",
    "gold_winners",
    "Agreement",
    "agreement_with_gold",
]

PAIRS_VERSION = 1
# a line's indent is whitespace other than a line break (``\s`` there ran over the blank lines
# below each line start: quadratic in a run of them)
_MARKUP = re.compile(r"^[^\S\n]*(?:[-*+]\s|\d+[.)]\s|#{1,6}\s)|\*\*|__|`", re.MULTILINE)


def style_features(turn: Turn) -> dict[str, float]:
    """What sways people besides quality (Search Arena's style control, Miroyan et al. 2025):
    the answer's length in words, its distinct cited sources, its markup elements (list
    items, headings, bold, code)."""
    return {
        "length": float(len(turn.response_text.split())),
        "sources": float(len(set(turn.cited_link_ids))),
        "markup": float(len(_MARKUP.findall(turn.response_text))),
    }


def pair_row(
    verdict: PairVerdict, styles: tuple[Mapping[str, float], Mapping[str, float]] | None = None
) -> dict[str, Any]:
    """The ``pairs.jsonl`` row of ``verdict``; ``styles``: both answers' :func:`style_features`
    when the caller has them already (an answer meets every other system's)."""
    pair = verdict.pair
    style_a, style_b = styles or (style_features(pair.answer_a), style_features(pair.answer_b))
    return {
        "version": PAIRS_VERSION,
        "session_id": pair.session_id,
        "turn": pair.turn,
        "a": pair.a,
        "b": pair.b,
        "winner": verdict.winner,
        "criteria": dict(verdict.criteria),
        "reason": verdict.reason,
        "consistent": verdict.consistent,
        "expected_a": verdict.expected_a,
        "orders": [o.to_dict() for o in verdict.orders],
        "missing_reason": verdict.missing_reason,
        "style": {"a": dict(style_a), "b": dict(style_b)},
    }


PairKey = tuple[str, int, str, str]


def _key(session_id: str, turn: int, a: str, b: str) -> tuple[PairKey, bool]:
    """The unordered pair's key and whether ``a``/``b`` were swapped to make it."""
    if a <= b:
        return (session_id, turn, a, b), False
    return (session_id, turn, b, a), True


def gold_winners(rows: Iterable[Mapping[str, Any]]) -> dict[PairKey, str]:
    """Each gold pair's winning system name: the majority of its decided labels (ties and
    pairs without a majority left out)."""
    votes: dict[PairKey, Counter[str]] = defaultdict(Counter)
    for row in rows:
        key, _ = _key(str(row["session_id"]), int(row.get("turn") or 1), row["a"], row["b"])
        winner = row.get("winner")
        if winner in ("a", "b"):
            votes[key][str(row[winner])] += 1
        else:
            votes[key]  # noqa: B018 - the pair exists, undecided
    out: dict[PairKey, str] = {}
    for key, counter in votes.items():
        ranked = counter.most_common()
        if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
            out[key] = ranked[0][0]
    return out


@dataclass(frozen=True)
class Agreement:
    """The judge against people on the decided gold pairs."""

    gold_pairs: int
    judged: int
    agree: int
    ties: int
    unjudged: int

    @property
    def rate(self) -> float | None:
        """Agreement with a judge's tie counted half (it decided nothing)."""
        return (self.agree + 0.5 * self.ties) / self.judged if self.judged else None

    @property
    def decided_rate(self) -> float | None:
        decided = self.judged - self.ties
        return self.agree / decided if decided else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold_pairs": self.gold_pairs,
            "judged": self.judged,
            "agree": self.agree,
            "ties": self.ties,
            "unjudged": self.unjudged,
            "rate": self.rate,
            "decided_rate": self.decided_rate,
        }


def agreement_with_gold(
    judged: Iterable[Mapping[str, Any]], gold: Mapping[PairKey, str]
) -> Agreement:
    """How often the judge's winner is people's (``judged``: ``pairs.jsonl`` rows, read once;
    only the gold pairs' verdicts are kept)."""
    verdicts: dict[PairKey, str | None] = {}
    for row in judged:
        key, _ = _key(str(row["session_id"]), int(row["turn"]), row["a"], row["b"])
        if key not in gold:
            continue
        winner = row.get("winner")
        verdicts[key] = None if winner is None else "tie" if winner == "tie" else row[winner]
    agree = ties = judged_n = 0
    for key, winner in gold.items():
        got = verdicts.get(key)
        if got is None:
            continue
        judged_n += 1
        if got == "tie":
            ties += 1
        elif got == winner:
            agree += 1
    return Agreement(len(gold), judged_n, agree, ties, len(gold) - judged_n)
