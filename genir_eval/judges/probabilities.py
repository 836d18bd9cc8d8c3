"""Labels from token probabilities: the expected label and its entropy, not only the argmax.

A graded judge's reply holds its label as a number token (``"O": 2``). With token
log-probabilities the model's whole distribution over the labels at that token is known:
its mean, the **expected label** ``sum_l p(l) l / sum_l p(l)``, breaks the ties a 0-3 or 1-10
argmax leaves and ranks items by how sure the model is (G-Eval's probability-weighted
score, Liu et al. EMNLP 2023, applied to every graded judge); its entropy says how sure. A
provider without logprobs gets the same figures from the labels of k sampled replies
(:func:`sample_distribution`).

Tokenizers that split numbers into digits (Qwen, Llama 3) write 10 as "1" "0": for a 1-10
scale, the mass of "1" is split between 1 and 10 by the next token's probability of "0" when
the reply's own token is "1"; when the reply chose another digit, what would have followed
a "1" is unknown, so that mass is left out and reported as ``unresolved``.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from genir_eval.llm.providers.base import Completion, TokenLogprob

__all__ = [
    "LabelDistribution",
    "label_distribution",
    "sample_distribution",
    "value_offset",
    "value_offsets",
]


@dataclass(frozen=True)
class LabelDistribution:
    """Probabilities over a judge's labels (normalised over the labels found), with how
    much of the token's probability they held (``coverage``) and how much could not be
    assigned (``unresolved``)."""

    probabilities: Mapping[int, float]
    coverage: float = 1.0
    unresolved: float = 0.0
    source: str = "logprobs"

    @property
    def expected(self) -> float:
        return sum(label * p for label, p in self.probabilities.items())

    @property
    def entropy_bits(self) -> float:
        return -sum(p * math.log2(p) for p in self.probabilities.values() if p > 0) + 0.0

    @property
    def argmax(self) -> int:
        return max(self.probabilities, key=lambda label: (self.probabilities[label], -label))

    def as_extra(self) -> dict[str, Any]:
        """The fields a label keeps in ``extra``: ``expected``, ``entropy_bits``,
        ``label_probabilities`` (label -> p, keys as strings for JSON) and their source."""
        return {
            "expected": self.expected,
            "entropy_bits": self.entropy_bits,
            "label_probabilities": {str(k): v for k, v in sorted(self.probabilities.items())},
            "expected_source": self.source,
            **({"unresolved_mass": self.unresolved} if self.unresolved > 0 else {}),
        }


def _digits(token: str) -> str:
    return token.strip().strip("\"'")


def _token_at(
    logprobs: Sequence[TokenLogprob], offset: int, text: str
) -> tuple[int, TokenLogprob, str] | None:
    starts: list[int] = []
    position = 0
    for token in logprobs:
        starts.append(position)
        position += len(token.token)
    generated = "".join(token.token for token in logprobs)
    if generated != text:
        # A server may return less than it generated: llama.cpp's JSON mode lets the model
        # write a fenced block and returns only the JSON inside, with the logprobs of every
        # generated token. The reply's offsets are then shifted by where it sits.
        shift = generated.find(text)
        if shift < 0:
            return None
        offset += shift
    index = bisect.bisect_right(starts, offset) - 1
    if index < 0:
        return None
    token = logprobs[index]
    digits = _digits(token.token)
    if not digits.isdigit() or starts[index] + token.token.find(digits) != offset:
        return None
    return index, token, digits


def label_distribution(
    completion: Completion, offset: int, labels: Sequence[int]
) -> LabelDistribution | None:
    """The distribution over ``labels`` at the number that starts at character ``offset``
    of the reply, from the token log-probabilities (the generated token and its top
    alternatives). ``None`` without logprobs, when no token starts there, when the number
    is split over tokens in a way the labels do not allow, or when no alternative is a
    label."""
    logprobs = completion.logprobs
    if not logprobs:
        return None
    found = _token_at(logprobs, offset, completion.text)
    if found is None:
        return None
    index, token, digits = found
    wanted = set(labels)
    following = logprobs[index + 1] if index + 1 < len(logprobs) else None
    next_digit = following is not None and following.token[:1].isdigit()
    if next_digit and int(digits + _digits(following.token)[:1]) not in wanted:  # type: ignore[union-attr]
        return None
    candidates: dict[str, float] = dict(token.top) if token.top else {}
    candidates.setdefault(token.token, token.logprob)
    mass: dict[int, float] = {}
    total = unresolved = 0.0
    for alternative, logprob in candidates.items():
        text = _digits(alternative)
        p = math.exp(logprob)
        total += p
        if not text.isdigit():
            continue
        value = int(text)
        splits_into_ten = value == 1 and 10 in wanted
        if splits_into_ten:
            if digits == "1" and following is not None:
                q0 = _probability_of(following, "0")
                mass[10] = mass.get(10, 0.0) + p * q0
                if 1 in wanted:
                    mass[1] = mass.get(1, 0.0) + p * (1.0 - q0)
            else:
                unresolved += p
            continue
        if value in wanted:
            mass[value] = mass.get(value, 0.0) + p
    held = sum(mass.values())
    if held <= 0.0:
        return None
    return LabelDistribution(
        probabilities={label: p / held for label, p in sorted(mass.items())},
        coverage=held / total if total > 0 else 0.0,
        unresolved=unresolved,
    )


def _probability_of(token: TokenLogprob, text: str) -> float:
    """The probability that the position of ``token`` starts with ``text``."""
    candidates: dict[str, float] = dict(token.top) if token.top else {}
    candidates.setdefault(token.token, token.logprob)
    return min(1.0, sum(math.exp(lp) for alt, lp in candidates.items() if alt.startswith(text)))


def sample_distribution(values: Sequence[int | float | None]) -> LabelDistribution | None:
    """The empirical distribution of k sampled labels (missing samples left out)."""
    present = [int(round(v)) for v in values if v is not None]
    if not present:
        return None
    counts = Counter(present)
    n = len(present)
    return LabelDistribution(
        probabilities={label: c / n for label, c in sorted(counts.items())},
        source=f"{n} samples",
    )


def value_offset(text: str, *keys: str) -> int | None:
    """Offset of the integer value of the first of ``keys`` found as a JSON key in ``text``
    (the last occurrence: a reply that restates its label ends with the final one)."""
    for key in keys:
        matches = list(re.finditer(rf"[\"']{re.escape(key)}[\"']\s*:\s*\"?(\d)", text))
        if matches:
            return matches[-1].start(1)
    return None


def value_offsets(text: str, key: str) -> list[int]:
    """Offsets of every integer value of ``key`` in ``text``, in order (one per object of
    a list reply)."""
    return [m.start(1) for m in re.finditer(rf"[\"']{re.escape(key)}[\"']\s*:\s*\"?(\d)", text)]
