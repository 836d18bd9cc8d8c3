"""What the runs' repeated judgments (``run --repeats``, ``repeats.jsonl``) say in a
comparison: which runs carry them (:class:`JudgeRepeats`), each compared key's judgments for
the nested resample (:func:`~genir_eval.meta.paired.nested_bootstrap`), the judge's own
scatter, and the notes the verdict carries in the decision layer's words
(:func:`~genir_eval.meta.decide.repeats_words`, :func:`~genir_eval.meta.decide.scatter_words`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from genir_eval.meta.decide import repeats_words, scatter_words
from genir_eval.meta.paired import within_scatter

__all__ = ["JudgeRepeats", "judge_repeats", "judgments", "noise_notes"]


@dataclass(frozen=True)
class JudgeRepeats:
    """What the runs' repeated judgments (``run --repeats``) say of a compared score:
    ``carried_by`` ``"both"``, ``"A"`` or ``"B"``; with both, the interval is the nested
    resample's and ``within_sd`` (pooled over both runs) and ``repeats`` (the harmonic mean
    of a repeated session's judgments) give the judge's own scatter."""

    carried_by: str
    sessions: int
    within_sd: float | None = None
    repeats: float | None = None

    @property
    def scatter(self) -> float | None:
        """The judge's own scatter of a session's score averaged over its repeats."""
        if self.within_sd is None or not self.repeats:
            return None
        return self.within_sd / math.sqrt(self.repeats)

    def to_dict(self) -> dict[str, Any]:
        return {
            "carried_by": self.carried_by,
            "sessions": self.sessions,
            "within_sd": self.within_sd,
            "repeats": self.repeats,
            "scatter": self.scatter,
        }


def judgments(key: str, value: float, repeats: Mapping[str, Sequence[float | None]]) -> list[float]:
    """A key's judgments in one run: its repeats' values (a missing one left out), else its
    one score."""
    judged = [float(v) for v in repeats.get(key, ()) if v is not None and math.isfinite(v)]
    return judged or [value]


def judge_repeats(
    keys: Sequence[str],
    units: Sequence[str],
    repeats: tuple[Mapping[str, Sequence[float | None]], Mapping[str, Sequence[float | None]]]
    | None,
) -> JudgeRepeats | None:
    """Which runs repeated their judgments of the compared ``keys`` (each of session
    ``units[i]``), and the judge's scatter when both did (None when neither did)."""
    if repeats is None:
        return None
    compared = set(keys)
    held = [
        {k for k, v in side.items() if k in compared and sum(x is not None for x in v) >= 2}
        for side in repeats
    ]
    session_of = dict(zip(keys, units, strict=True))
    if held[0] and held[1]:
        both = held[0] & held[1]
        scatter = within_scatter(
            [judgments(k, 0.0, side) for side in repeats for k in sorted(both)]
        )
        return JudgeRepeats(
            "both",
            len({session_of[k] for k in both}),
            within_sd=scatter[0] if scatter else None,
            repeats=scatter[1] if scatter else None,
        )
    for label, side in zip("AB", held, strict=True):
        if side:
            return JudgeRepeats(label, len({session_of[k] for k in side}))
    return None


def noise_notes(c: Any, name: str) -> tuple[str, ...]:
    """What the runs' repeated judgments say beside the verdict, in the decision layer's
    words (:func:`~genir_eval.meta.decide.repeats_words`, :func:`scatter_words`)."""
    r = c.repeats
    if r is None:
        return ()
    notes = [repeats_words(name, r.carried_by, r.sessions, c.sessions)]
    if r.carried_by == "both" and r.within_sd is not None and r.repeats is not None:
        assert c.mean_delta is not None
        smaller = scatter_words(name, c.mean_delta, r.within_sd, r.repeats)
        if smaller is not None:
            notes.append(smaller)
    return tuple(notes)
