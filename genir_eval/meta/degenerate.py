"""Judges that stopped judging: (nearly) constant labels, reasons copied from the prompt.

A small model asked to grade links can answer the same label for every item, its reason a
copy of the rubric's wording. Its correlation with gold is then undefined (or meaningless)
and would show as a blank; :func:`degeneracy` says instead what happened, with the figures
that show it, for ``genir-eval meta``, ``run`` and the report.

- ``label_spread``: how many distinct labels, the modal label and its share, and the
  entropy of the label distribution (bits); ``constant`` when one label is all there is,
  ``nearly_constant`` when the modal label's share reaches ``NEARLY_CONSTANT_SHARE``.
- ``reason_copying``: the free-text fields of each reply (``reasoning``, ``explanation``, a
  reply that is not JSON as a whole), and for each the share of its word 4-grams (character
  8-grams for text without spaces, as Chinese) found in the judge's instructions (its
  prompt template, where the logged data are placeholders, so quoting the log does not
  count); a reply ``copies`` when that share reaches ``COPY_SHARE``. Also the share of the
  most common reason text among replies (the same reason for every item).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

__all__ = [
    "NEARLY_CONSTANT_SHARE",
    "COPY_SHARE",
    "label_spread",
    "reason_texts",
    "copied_share",
    "reason_copying",
    "degeneracy",
]

#: The modal label's share from which a judge's labels are called nearly constant.
NEARLY_CONSTANT_SHARE = 0.9
#: The share of a reason's n-grams found in the instructions from which it is a copy.
COPY_SHARE = 0.5
#: A flagged judge: this share of its replies copy the instructions, or repeat one reason.
FLAG_SHARE = 0.5
_MIN_REASON_CHARS = 20
_WORD_N = 4
_CHAR_N = 8


def label_spread(values: Iterable[Hashable | None]) -> dict[str, Any]:
    """Distribution of the present labels: ``n``, ``distinct``, ``mode``, ``mode_share``,
    ``entropy_bits``, and the flags ``constant`` and ``nearly_constant``."""
    present = [v for v in values if v is not None]
    counts = Counter(present)
    n = len(present)
    if not n:
        return {
            "n": 0,
            "distinct": 0,
            "mode": None,
            "mode_share": None,
            "entropy_bits": None,
            "constant": False,
            "nearly_constant": False,
        }
    mode, top = counts.most_common(1)[0]
    entropy = -sum((c / n) * math.log2(c / n) for c in counts.values())
    share = top / n
    return {
        "n": n,
        "distinct": len(counts),
        "mode": mode,
        "mode_share": share,
        "entropy_bits": entropy + 0.0,
        "constant": len(counts) == 1 and n > 1,
        "nearly_constant": n > 1 and share >= NEARLY_CONSTANT_SHARE,
    }


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def reason_texts(raw: str) -> list[str]:
    """The free text of a reply: its JSON object's string values of at least 20 characters,
    or the whole reply when it holds no JSON object."""
    start, end = raw.find("{"), raw.rfind("}")
    if start != -1 and end > start:
        try:
            parsed = json.loads(raw[start : end + 1])
        except json.JSONDecodeError:
            parsed = None
        if parsed is not None:
            return [s.strip() for s in _strings(parsed) if len(s.strip()) >= _MIN_REASON_CHARS]
    text = raw.strip()
    return [text] if len(text) >= _MIN_REASON_CHARS else []


def _grams(text: str) -> set[tuple[str, ...]] | set[str]:
    words = re.findall(r"\w+", text.lower())
    if len(words) >= _WORD_N and len(text.split()) > 1:
        return {tuple(words[i : i + _WORD_N]) for i in range(len(words) - _WORD_N + 1)}
    compact = re.sub(r"\s+", "", text.lower())
    return {compact[i : i + _CHAR_N] for i in range(len(compact) - _CHAR_N + 1)}


def copied_share(reason: str, instructions: Sequence[str]) -> float | None:
    """The share of ``reason``'s n-grams that occur in any of ``instructions``; ``None`` when
    the reason is too short to have one."""
    grams = _grams(reason)
    if not grams:
        return None
    source: set[Any] = set()
    for text in instructions:
        source |= _grams_both(text)
    return len(grams & source) / len(grams)


def _grams_both(text: str) -> set[Any]:
    words = re.findall(r"\w+", text.lower())
    compact = re.sub(r"\s+", "", text.lower())
    out: set[Any] = {tuple(words[i : i + _WORD_N]) for i in range(len(words) - _WORD_N + 1)}
    out |= {compact[i : i + _CHAR_N] for i in range(len(compact) - _CHAR_N + 1)}
    return out


def reason_copying(raws: Iterable[str | None], instructions: Sequence[str]) -> dict[str, Any]:
    """Over the replies with a reason: how many copy the instructions (``copy_rate``), the
    median copied share, and the share of the most common reason text
    (``repeated_reason_share``). Rates are ``None`` without any reason."""
    reasons = [" ".join(reason_texts(r)) for r in raws if r]
    reasons = [r for r in reasons if r]
    shares = [s for s in (copied_share(r, instructions) for r in reasons) if s is not None]
    shares.sort()
    top = Counter(reasons).most_common(1)
    return {
        "n_reasons": len(reasons),
        "copy_rate": (sum(1 for s in shares if s >= COPY_SHARE) / len(shares)) if shares else None,
        "median_copied_share": shares[len(shares) // 2] if shares else None,
        "repeated_reason_share": top[0][1] / len(reasons) if top and len(reasons) > 1 else None,
    }


def degeneracy(
    values: Sequence[Hashable | None],
    raws: Sequence[str | None] = (),
    instructions: Sequence[str] = (),
) -> dict[str, Any]:
    """Label spread and reason copying of one judge's labels, with ``flags``: the names of
    what went wrong (``constant``, ``nearly_constant``, ``copies_prompt``,
    ``repeats_one_reason``) and ``note``, one sentence for people; both empty when nothing
    did."""
    spread = label_spread(values)
    copying = reason_copying(raws, instructions) if raws else None
    flags: list[str] = []
    if spread["constant"]:
        flags.append("constant")
    elif spread["nearly_constant"]:
        flags.append("nearly_constant")
    if copying is not None:
        if (copying["copy_rate"] or 0.0) >= FLAG_SHARE and instructions:
            flags.append("copies_prompt")
        if (copying["repeated_reason_share"] or 0.0) >= FLAG_SHARE:
            flags.append("repeats_one_reason")
    notes = []
    if "constant" in flags:
        notes.append(f"every one of its {spread['n']} labels is {spread['mode']!r}")
    elif "nearly_constant" in flags:
        notes.append(
            f"{spread['mode_share']:.0%} of its {spread['n']} labels are {spread['mode']!r}"
        )
    if "copies_prompt" in flags and copying is not None:
        notes.append(f"{copying['copy_rate']:.0%} of its reasons copy the prompt's instructions")
    if "repeats_one_reason" in flags and copying is not None:
        notes.append(f"{copying['repeated_reason_share']:.0%} of its replies give the same reason")
    return {
        "labels": spread,
        "reasons": copying,
        "flags": flags,
        "note": ("; ".join(notes) + ": its correlations say nothing") if notes else "",
    }
