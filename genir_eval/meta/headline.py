"""Which score a run leads with, and the evidence that it tracks people.

A run whose scenario names no headline leads with the session score of the judge that has
measured evidence of tracking what people say: a figure whose 95% interval excludes chance
(pair agreement with people's preferred answer above 0.5, or a correlation with users' own
satisfaction above 0). Among the judges that ran, the one whose best such figure has the
highest lower bound leads (on a correlation's scale, :func:`_strength`). The figures are data, not prose:
``genir_eval/data/headline_evidence.json``, each with the data set, the statistic, its
interval, who judged (the offline twin or a named model) and the command that measured it
(``python bench/bench_headline.py --write`` writes the offline twins' rows).

Grounding scores (the statement-usefulness measures such as ``sdcg_urge`` and the citation
measures: does each citation support its statement) are never the quality headline: on
CrowdRAG-25 the answers people prefer restate their passages, and these scores pick the
answer people prefer no better than a coin (the evidence file holds the figures). When no
judge with evidence ran, the run still leads with a score (a judge's own score, else a
grounding measure) and says that nothing shows it tracks people.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.meta.decide import chance_of, interval_text, relation
from genir_eval.metrics.parse import parse_measure

__all__ = [
    "EVIDENCE_PATH",
    "CHOSEN_BY",
    "Figure",
    "Headline",
    "choose_headline",
    "evidence",
    "figures_for",
    "is_grounding",
]

EVIDENCE_PATH = Path(__file__).resolve().parent.parent / "data" / "headline_evidence.json"

#: How a run's headline was chosen (``run.json``'s ``headline.chosen_by``).
CHOSEN_BY = {
    "scenario": "named by the scenario",
    "evidence": "the judge with measured evidence of tracking people",
    "no evidence": "no judge with evidence of tracking people ran",
}


@dataclass(frozen=True)
class Figure:
    """One measurement of how a score tracks people."""

    score: str
    statistic: str
    data: str
    value: float
    ci95: tuple[float, float] | None
    n: int | None
    judged_by: str
    command: str
    measured: str

    @property
    def chance(self) -> float:
        """What the statistic is when the score knows nothing (0.5 agreement, 0 r)."""
        return chance_of(self.statistic)

    @property
    def tracks(self) -> bool:
        """Whether the 95% interval lies above chance (of enough values to have one):
        evidence the score tracks people."""
        return relation(self.statistic, self.value, self.ci95, self.n).severity == "good"

    def verdict(self) -> str:
        """The figure in words, by :func:`genir_eval.meta.decide.relation`'s rules."""
        return relation(self.statistic, self.value, self.ci95, self.n, against="people").words

    def text(self) -> str:
        """The figure as one line: statistic, value, interval, size, verdict, source."""
        size = (
            f" of {self.n} decided pairs"
            if self.statistic == "pair agreement"
            else f" (n = {self.n})"
        )
        return (
            f"{self.statistic} {interval_text(self.value, self.ci95, self.n)}{size}: "
            f"{self.verdict()}; "
            f"{self.data}; judged by {self.judged_by}"
        )


def _figure(row: Any, where: str) -> Figure:
    try:
        ci = row.get("ci95")
        return Figure(
            score=str(row["score"]),
            statistic=str(row["statistic"]),
            data=str(row["data"]),
            value=float(row["value"]),
            ci95=(float(ci[0]), float(ci[1])) if ci else None,
            n=None if row.get("n") is None else int(row["n"]),
            judged_by=str(row["judged_by"]),
            command=str(row["command"]),
            measured=str(row["measured"]),
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise ConfigError(f"{where}: bad evidence row: {error!r}") from None


def read_evidence(path: Path) -> tuple[Figure, ...]:
    """The figures of an evidence file (see the module docstring)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the headline evidence: {error}") from None
    rows = document.get("figures") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise ConfigError(f"{path}: 'figures': expected a list")
    return tuple(_figure(row, f"{path}: figures[{i}]") for i, row in enumerate(rows))


@lru_cache(maxsize=1)
def evidence() -> tuple[Figure, ...]:
    """The package's evidence file, read once."""
    return read_evidence(EVIDENCE_PATH)


def figures_for(score: str, figures: Sequence[Figure] | None = None) -> list[Figure]:
    """The measured figures of ``score`` (a judge's registered name or a measure's)."""
    return [f for f in (evidence() if figures is None else figures) if f.score == score]


def is_grounding(score: str) -> bool:
    """Whether ``score`` is a grounding score: a statement-usefulness or citation measure
    (``sdcg_urge``, ``citation_precision``, also from another judge's labels,
    ``sdcg_urge@link_usefulness.true``, or from gold, ``gold:sdcg_urge``). A nugget measure
    is not one: it is the coverage of the query's nuggets, whatever the answer cites."""
    base = score.removeprefix("gold:").split("@", 1)[0]
    try:
        measure = parse_measure(base)
    except ConfigError:
        return False
    return measure.LEVEL != "nugget"


@dataclass(frozen=True)
class Headline:
    """The score a run leads with and why; ``judge`` is the registered judge name behind
    it (its evidence is looked up by that name) when it is a judge's own score."""

    score: str | None
    chosen_by: str
    judge: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score, "chosen_by": self.chosen_by, "judge": self.judge}


def _strength(name: str, figures: Sequence[Figure]) -> float | None:
    """The highest lower bound above chance among ``name``'s figures, on a correlation's
    scale (a pair agreement ``a`` as ``2a - 1``, Kendall's tau of the pairs: 0.6 agreement
    weighs as a 0.2 correlation); ``None`` without evidence."""
    margins = [
        (f.ci95[0] - f.chance) * (2.0 if f.statistic == "pair agreement" else 1.0)
        for f in figures_for(name, figures)
        if f.tracks and f.ci95
    ]
    return max(margins) if margins else None


def choose_headline(
    judges: Sequence[tuple[str, str]],
    fallback: str | None,
    *,
    named: str | None = None,
    figures: Sequence[Figure] | None = None,
) -> Headline:
    """The score a run leads with: ``named`` (the scenario's) when given; else the session
    score (its id) of the judge among ``judges`` (``(id, registered name)``, in the
    scenario's order) whose evidence is strongest (:func:`_strength`; the first on a tie);
    else ``fallback`` (the run's old choice), said to have no evidence."""
    if named:
        return Headline(named, "scenario")
    found = evidence() if figures is None else figures
    best: tuple[float, str, str] | None = None
    for judge_id, name in judges:
        strength = _strength(name, found)
        if strength is not None and (best is None or strength > best[0]):
            best = (strength, judge_id, name)
    if best is not None:
        return Headline(best[1], "evidence", best[2])
    return Headline(fallback, "no evidence")
