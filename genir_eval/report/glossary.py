"""What each score of a run means, read from its name: range, direction, what it averages,
and whose labels it comes from (``@<judge>`` and ``gold:`` prefixes, ``z(...)``
combinations, judges' own scores, as each judge kind describes its own:
:attr:`~genir_eval.judges.kinds.JudgeKind.own_score`). The report's glossary is built from
here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from genir_eval.errors import ConfigError
from genir_eval.judges.kinds import judge_kind
from genir_eval.metrics.measures import Measure, QueryMeasure
from genir_eval.metrics.parse import parse_measure
from genir_eval.records import CITATION_SUPPORT, NUGGETS
from genir_eval.report.scores import link_judge_ids, scenario_measures
from genir_eval.rundir.folder import Run

__all__ = ["ScoreDescription", "describe_score"]


@dataclass(frozen=True)
class ScoreDescription:
    name: str
    source: str
    range: str
    higher_is_better: bool | None
    averages: str
    judges: tuple[str, ...] = ()
    """The judges whose labels the score comes from (none for gold): a reason quoted beside
    the score is one of theirs, never another judge's."""


def _judges(run: Run) -> dict[str, str]:
    return {
        str(j.get("id") or j.get("name")): str(j.get("kind") or "")
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping)
    }


def _session_how(run: Run) -> str:
    document = (run.info.get("scenario") or {}).get("document") or {}
    aggregate = document.get("aggregate") or {} if isinstance(document, Mapping) else {}
    how = aggregate.get("session") if isinstance(aggregate, Mapping) else None
    return str(how or "decreasing")


def _measure(text: str) -> Measure | None:
    try:
        return parse_measure(text)
    except ConfigError:
        return None


def describe_score(name: str, run: Run) -> ScoreDescription:
    """What ``name`` means in ``run`` (see the module docstring)."""
    measures = scenario_measures(run)
    link_judges = link_judge_ids(run)
    judges = _judges(run)
    if name.startswith("z(") and name.endswith(")"):
        parts = name[2:-1].split("+")
        return ScoreDescription(
            name,
            f"combination of {' and '.join(parts)}",
            "about -3 to 3 (0 = the run's average)",
            True,
            "the mean of the parts' z-scores, each standardised over this run's sessions "
            "(or turns): comparable within a run, not across runs",
            tuple(dict.fromkeys(j for p in parts for j in describe_score(p, run).judges)),
        )
    gold = name.startswith("gold:")
    base = name[5:] if gold else name
    base, _, at_judge = base.partition("@")
    measure = _measure(base)
    if measure is not None and measure.EVIDENCE in (CITATION_SUPPORT, NUGGETS):
        # from the labels of the judges of the kind the measure declares it rests on
        citations = measure.EVIDENCE == CITATION_SUPPORT
        makers = [
            j
            for j, kind in judges.items()
            if (judge_kind(kind).judges_citations if citations else judge_kind(kind).judges_nuggets)
        ]
        judge = at_judge or (makers[0] if makers else "")
        what = "support verdicts" if citations else "nugget assignments"
        source = (
            f"the expert (gold) {what}"
            if gold
            else f"{judge or 'the ' + measure.EVIDENCE + ' judge'}'s {what}"
        )
        return ScoreDescription(
            name,
            source,
            measure.RANGE,
            measure.HIGHER_IS_BETTER,
            f"{str(measure)}: {measure.SUMMARY}",
            () if gold or not judge else (judge,),
        )
    if measure is not None and base in measures:
        judge = ""
        if gold:
            source = "the expert (gold) link labels"
        else:
            judge = at_judge or (link_judges[0] if link_judges else "")
            source = f"{judge or '?'}'s link labels"
        averages = measure.SUMMARY or (type(measure).__doc__ or "").strip().split("\n")[0]
        if isinstance(measure, QueryMeasure):
            averages += (
                f"; a session's value aggregates its turns' values ({_session_how(run)} "
                "weighting over turns)"
            )
        else:
            averages += "; a turn's value is the turn scored as a one-turn session"
        return ScoreDescription(
            name,
            source,
            measure.RANGE,
            measure.HIGHER_IS_BETTER,
            f"{str(measure)}: {averages}",
            (judge,) if judge else (),
        )
    judge, _, item = name.partition(":")
    kind = judges.get(judge)
    if kind is not None:
        rng, what = judge_kind(kind).own_score or ("", "the judge's own label")
        if item:
            what = f"the judge's '{item}' label"
            rng = ""
        return ScoreDescription(name, f"{judge} ({kind} judge)", rng, True, what, (judge,))
    return ScoreDescription(name, "", "", None, "")
