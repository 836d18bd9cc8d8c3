"""From sessions and judges' labels to the run's tables and meta-evaluation (no I/O, no calls).

Scores, by name:

- a link judge's labels feed the link metrics through statement usefulness
  (:func:`genir_eval.metrics.statement_usefulness`): each measure of the scenario, named as
  written there (``sdcg_urge``), for the first link judge; ``sdcg_urge@<judge id>`` for the
  others; ``gold:sdcg_urge`` from the expert link labels when the scenario asks for it.
  Query measures (positional weightings) score each turn, and a session by the scenario's
  query -> session aggregation; session measures score a session, and each turn as a
  one-turn session.
- a satisfaction judge's ``turn`` and ``session`` labels are its turn and session scores
  (named by the judge's id); when it gives no session label, the session score aggregates
  its turn scores the same way. A spans judge's turn score is the share of the response's
  text units it marked useful. Repeats are averaged; a missing label stays missing.
- a citation judge's pair labels (``cite:<statement>:<link>``, support 2/1/0) feed the
  citation measures (:mod:`genir_eval.metrics.citations`): named as written in the scenario
  for the first citation judge, ``<measure>@<judge id>`` for the others, ``gold:<measure>``
  from ``gold.citation_support``; scored per turn and per session (pooled over the session's
  statements). Each pair also becomes a row of the citations table.
- a nugget judge's turn label ``nuggets`` (each nugget's importance and the answer's
  assignment) feeds the nugget measures (:mod:`genir_eval.metrics.nuggets`): named as
  written in the scenario for the first nugget judge, ``<measure>@<judge id>`` for the
  others; scored per turn and per session (the mean of its turns).
- z-score combinations (:func:`genir_eval.metrics.zscore_combine`) pair two scores over all
  sessions (and all turns, when both exist per turn).

The meta-evaluation correlates every score with the users' satisfaction and scores each
judge's labels against the gold ones with :mod:`genir_eval.meta.evaluate`, the code behind
``genir-eval meta``: one implementation, the same figures and names in both commands.
"""

from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from genir_eval.ingest.preferences import Preference, check_named
from genir_eval.judges.base import Label
from genir_eval.judges.kinds import judge_kind, judge_kinds
from genir_eval.meta.preferences import agreement_table, label_scores
from genir_eval.meta.score_columns import ScoreColumns
from genir_eval.metrics import (
    AssignedNugget,
    CitationMeasure,
    NuggetMeasure,
    aggregate,
    cited_statements,
    gold_cited_statements,
    gold_statement_usefulness,
    parse_measure,
    statement_usefulness,
    zscore_combine,
)
from genir_eval.metrics.scores import citation_scores, measure_scores
from genir_eval.records import Session, Turn
from genir_eval.rundir.folder import (
    MAX_LISTED_FAILURES,
    OUTPUT_VERSION,
    CitationRow,
    LinkRow,
    SessionRow,
    TurnRow,
)
from genir_eval.runner.against_gold import (
    JudgeInfo,
    JudgesAgainstGold,
    _any_gold_block,
    feedback_agreement,
    judges_against_gold,
)
from genir_eval.runner.scenario import AggregateSpec, MetaSpec, measure_groups, nugget_measures

__all__ = [
    "Assembly",
    "ScoreColumns",
    "Tables",
    "JudgeInfo",
    "build_tables",
    "meta_evaluation",
    "judges_against_gold",
    "link_judge_ids",
    "link_score_names",
    "feedback_agreement",
]

_PASSAGE_ITEMS = ("stmt:",)


def _own_items() -> frozenset[str]:
    """Items whose numeric value is the judge's own score for the turn (or the session):
    ``turn``, ``session`` and each kind's own (:attr:`JudgeKind.own_items`)."""
    return frozenset({"turn", "session"}).union(*(k.own_items for k in judge_kinds()))


@dataclass
class Tables:
    links: list[LinkRow] = field(default_factory=list)
    turns: list[TurnRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    label_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    citations: list[CitationRow] = field(default_factory=list)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def link_score_names(spec: AggregateSpec, link_judges: Sequence[str]) -> dict[str, list[str]]:
    """The score names each link judge's metrics get (see the module docstring)."""
    usefulness, _ = measure_groups(spec.measures)
    names: dict[str, list[str]] = {}
    for position, judge_id in enumerate(link_judges):
        suffix = "" if position == 0 else f"@{judge_id}"
        names[judge_id] = [f"{m}{suffix}" for m in usefulness]
    return names


def link_judge_ids(spec: AggregateSpec, judges: Sequence[JudgeInfo]) -> list[str]:
    """The judges whose link labels feed the link metrics, the first giving the plain names."""
    if spec.link_judges is not None:
        return list(spec.link_judges)
    return [j.id for j in judges if judge_kind(j.kind).feeds_link_measures]


def _gold_at(values: Sequence[Any] | None, position: int) -> Any:
    if values is None or position >= len(values):
        return None
    return values[position]


@dataclass
class _Gathered:
    """A window's labels sorted by what they score (see :func:`_gather`)."""

    # (session, turn) -> judge -> (statement, link) -> support; the pair labels themselves
    support: dict[tuple[str, int], dict[str, dict[tuple[int, int], int | None]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(dict))
    )
    pair_labels: dict[tuple[str, int, int, int], dict[str, Label]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    # (session, turn, link) -> judge -> values; (session, turn) / session -> name -> values
    link_values: dict[tuple[str, int, int], dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    link_missing: dict[tuple[str, int, int], dict[str, str]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    turn_values: dict[tuple[str, int], dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    session_values: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    turn_judged: dict[str, set[tuple[str, int]]] = field(default_factory=lambda: defaultdict(set))
    # (session, turn) -> judge -> the turn's nuggets as assigned (None: the label is missing)
    nuggets: dict[tuple[str, int], dict[str, list[AssignedNugget] | None]] = field(
        default_factory=lambda: defaultdict(dict)
    )


def _gather(
    tables: Tables,
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
) -> _Gathered:
    """Each label to what it scores: a citation pair's support, a link's label, a turn's or
    a session's own score; a missing one to the failures (and the link's missing reasons).
    Counts each judge's labels in ``tables.label_counts``."""
    g = _Gathered()
    own_items = _own_items()
    segments_of = {(s.session_id, t.index): len(t.segments) for s in sessions for t in s.turns}
    for judge in judges:
        counts = {"labels": 0, "missing": 0}
        for label in labels.get(judge.id, ()):
            counts["labels"] += 1
            if label.value is None:
                counts["missing"] += 1
            _gather_one(tables, g, judge, label, segments_of, own_items)
        tables.label_counts[judge.id] = counts
    return g


def _gather_one(
    tables: Tables,
    g: _Gathered,
    judge: JudgeInfo,
    label: Label,
    segments_of: Mapping[tuple[str, int], int],
    own_items: frozenset[str],
) -> None:
    key = label.key
    kind = judge_kind(judge.kind)
    if kind.judges_citations and key.item.startswith("cite:") and key.turn:
        _, s_pos, l_id = key.item.split(":")
        pair = (int(s_pos), int(l_id))
        value = _number(label.value)
        g.support[(key.session_id, key.turn)][judge.id][pair] = (
            None if value is None else int(value)
        )
        g.pair_labels[(key.session_id, key.turn, pair[0], pair[1])][judge.id] = label
    if kind.judges_nuggets and key.item == "nuggets" and key.turn:
        g.nuggets[(key.session_id, key.turn)][judge.id] = _assigned(label.value)
    if label.value is None:
        tables.failures.append(
            {
                "judge": judge.id,
                "session_id": key.session_id,
                "turn": key.turn,
                "item": key.item,
                "repeat": key.repeat,
                "reason": label.missing_reason or "missing",
            }
        )
        if key.item.startswith("link:") and key.turn is not None:
            link_id = int(key.item.split(":", 1)[1])
            g.link_missing[(key.session_id, key.turn, link_id)][judge.id] = (
                label.missing_reason or "missing"
            )
        return
    if key.item.startswith(_PASSAGE_ITEMS):
        return  # a RUBRIC judge's grade of one response statement: evidence, not a score
    if kind.judges_citations and key.item.startswith("cite:"):
        return  # scored through the citation measures
    if key.item.startswith("link:") and key.turn is not None:
        value = _number(label.value)
        if value is not None:
            link_id = int(key.item.split(":", 1)[1])
            g.link_values[(key.session_id, key.turn, link_id)][judge.id].append(value)
        return
    name = judge.id if key.item in own_items else f"{judge.id}:{key.item}"
    value = _number(label.value)
    if value is None:
        n_segments = segments_of.get((key.session_id, key.turn or 0), 0)
        value = kind.turn_value(label.value, n_segments)
    if value is None:
        return
    if key.turn is None:
        g.session_values[key.session_id][name].append(value)
    else:
        g.turn_values[(key.session_id, key.turn)][name].append(value)
        g.turn_judged[name].add((key.session_id, key.turn))


def _assigned(value: Any) -> list[AssignedNugget] | None:
    """A nugget judge's turn label as the nugget measures read it."""
    if not isinstance(value, Mapping) or not isinstance(value.get("nuggets"), list):
        return None
    return [
        AssignedNugget(str(n.get("importance")), n.get("assignment"), _grade(n.get("grade")))
        for n in value["nuggets"]
        if isinstance(n, Mapping)
    ]


def _grade(value: Any) -> float | None:
    """A nugget's importance grade as its label carries it (``None``: not graded)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


@dataclass(frozen=True)
class _Plan:
    """What a run scores, from its judges and measures: the same for every session."""

    link_judges: list[str]
    score_names: dict[str, list[str]]
    citation_judges: list[str]
    usefulness_names: list[str]
    citation_names: list[str]
    measures: list[Any]
    citation_measures: list[Any]
    nugget_judges: list[str]
    nugget_names: list[str]
    nugget_measures: list[Any]
    labelled_links: list[str]
    spec: AggregateSpec


def _plan(judges: Sequence[JudgeInfo], spec: AggregateSpec) -> _Plan:
    link_judges = link_judge_ids(spec, judges)
    citation_judges = [j.id for j in judges if judge_kind(j.kind).judges_citations]
    usefulness_names, citation_names = measure_groups(
        spec.measures, citation_judge=bool(citation_judges)
    )
    citation_measures = [parse_measure(text) for text in citation_names]
    assert all(isinstance(m, CitationMeasure) for m in citation_measures)
    nugget_judges = [j.id for j in judges if judge_kind(j.kind).judges_nuggets]
    nugget_names = nugget_measures(spec.measures, nugget_judge=bool(nugget_judges))
    return _Plan(
        link_judges=link_judges,
        score_names=link_score_names(spec, link_judges),
        citation_judges=citation_judges,
        usefulness_names=list(usefulness_names),
        citation_names=list(citation_names),
        measures=[parse_measure(text) for text in usefulness_names],
        citation_measures=citation_measures,
        nugget_judges=nugget_judges,
        nugget_names=list(nugget_names),
        nugget_measures=[parse_measure(text) for text in nugget_names],
        labelled_links=[
            j.id for j in judges if judge_kind(j.kind).feeds_link_measures or j.id in link_judges
        ],
        spec=spec,
    )


def build_tables(
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
    spec: AggregateSpec,
    *,
    combine: bool = True,
) -> Tables:
    """The links, turns and sessions tables of a run; ``labels`` maps judge id to labels.

    ``combine=False`` leaves out the z-score combinations, which need every session of the
    run (:class:`Assembly` adds them once all windows are in)."""
    tables = Tables()
    plan = _plan(judges, spec)
    g = _gather(tables, sessions, labels, judges)
    turn_score_names = list(g.turn_judged)  # in the scenario's judge order
    for session in sessions:
        _session_tables(tables, session, g, plan, turn_score_names)
    if combine:
        _combine(tables, spec)
    return tables


def _merge(
    turn_scores: list[dict[str, float | None]],
    session_scores: dict[str, float | None],
    scored: tuple[list[dict[str, float | None]], dict[str, float | None]],
) -> None:
    per_turn, per_session = scored
    for scores, extra in zip(turn_scores, per_turn, strict=True):
        scores.update(extra)
    session_scores.update(per_session)


def _session_tables(
    tables: Tables,
    session: Session,
    g: _Gathered,
    plan: _Plan,
    turn_score_names: Sequence[str],
) -> None:
    """One session's link, turn and session rows (and citation rows) into ``tables``."""
    spec = plan.spec
    gold = session.gold
    turn_scores: list[dict[str, float | None]] = []
    for position, turn in enumerate(session.turns):
        values = g.turn_values.get((session.session_id, turn.index), {})
        turn_scores.append({name: _mean(values.get(name, [])) for name in turn_score_names})
        gold_links = _gold_at(gold.link_usefulness if gold else None, position) or {}
        for link in turn.links:
            key3 = (session.session_id, turn.index, link.id)
            judged = g.link_values.get(key3, {})
            tables.links.append(
                LinkRow(
                    session_id=session.session_id,
                    turn=turn.index,
                    link_id=link.id,
                    url=link.url,
                    title=link.title,
                    cited=link.id in turn.cited_link_ids,
                    labels={j: _mean(judged.get(j, [])) for j in plan.labelled_links},
                    missing=dict(g.link_missing.get(key3, {})),
                    gold=_number(gold_links.get(link.id)),
                )
            )
    session_scores: dict[str, float | None] = {}
    # the judges' own session scores, else their aggregated turn scores
    own = g.session_values.get(session.session_id, {})
    for name in turn_score_names:
        if name not in own:
            session_scores[name] = aggregate([s.get(name) for s in turn_scores], spec.session)
    for name, own_values in own.items():
        session_scores[name] = _mean(own_values)
    _citation_session_scores(tables, session, g, plan, turn_scores, session_scores)
    _nugget_session_scores(session, g, plan, turn_scores, session_scores)
    _link_session_scores(session, g, plan, turn_scores, session_scores)
    for position, turn in enumerate(session.turns):
        tables.turns.append(
            TurnRow(
                session_id=session.session_id,
                turn=turn.index,
                query=turn.query,
                response_text=turn.response_text,
                task_type=session.task_type,
                scores=turn_scores[position],
                gold_satisfaction=_number(
                    _gold_at(gold.query_satisfaction if gold else None, position)
                ),
                thumbs=_gold_at(gold.thumbs if gold else None, position),
                feedback=_gold_at(gold.feedback_text if gold else None, position),
            )
        )
    tables.sessions.append(
        SessionRow(
            session_id=session.session_id,
            task_type=session.task_type,
            n_turns=len(session.turns),
            scores=session_scores,
            gold_satisfaction=_number(gold.session_satisfaction) if gold else None,
        )
    )


def _citation_session_scores(
    tables: Tables,
    session: Session,
    g: _Gathered,
    plan: _Plan,
    turn_scores: list[dict[str, float | None]],
    session_scores: dict[str, float | None],
) -> None:
    """The citation measures from each citation judge's support labels, and from gold."""
    for position_j, judge_id in enumerate(plan.citation_judges):
        suffix = "" if position_j == 0 else f"@{judge_id}"
        statements = [
            cited_statements(
                turn, g.support.get((session.session_id, turn.index), {}).get(judge_id, {})
            )
            for turn in session.turns
        ]
        names = [f"{m}{suffix}" for m in plan.citation_names]
        _merge(
            turn_scores,
            session_scores,
            citation_scores(statements, plan.citation_measures, names),
        )
    gold_statements = gold_cited_statements(session) if plan.spec.gold else None
    if gold_statements is not None and plan.citation_measures:
        names = [f"gold:{m}" for m in plan.citation_names]
        _merge(
            turn_scores,
            session_scores,
            citation_scores(gold_statements, plan.citation_measures, names),
        )
    if plan.citation_judges:
        tables.citations.extend(_citation_rows(session, plan.citation_judges, g.pair_labels))


def _nugget_session_scores(
    session: Session,
    g: _Gathered,
    plan: _Plan,
    turn_scores: list[dict[str, float | None]],
    session_scores: dict[str, float | None],
) -> None:
    """The nugget measures from each nugget judge's turn labels: a turn whose label is
    missing has no value, and a session's is the mean of its turns' values."""
    for position_j, judge_id in enumerate(plan.nugget_judges):
        suffix = "" if position_j == 0 else f"@{judge_id}"
        per_turn = [
            g.nuggets.get((session.session_id, turn.index), {}).get(judge_id)
            for turn in session.turns
        ]
        for measure, text in zip(plan.nugget_measures, plan.nugget_names, strict=True):
            assert isinstance(measure, NuggetMeasure)
            name = f"{text}{suffix}"
            values = [None if t is None else measure.turn(t) for t in per_turn]
            for position, value in enumerate(values):
                turn_scores[position][name] = value
            present = [v for v in values if v is not None]
            session_scores[name] = sum(present) / len(present) if present else None


def _link_session_scores(
    session: Session,
    g: _Gathered,
    plan: _Plan,
    turn_scores: list[dict[str, float | None]],
    session_scores: dict[str, float | None],
) -> None:
    """The link metrics from each link judge's labels, and from the gold labels."""
    spec = plan.spec
    for judge_id in plan.link_judges:
        u_per_turn = [
            statement_usefulness(turn, _turn_link_labels(g.link_values, session, turn, judge_id))
            for turn in session.turns
        ]
        _merge(
            turn_scores,
            session_scores,
            measure_scores(u_per_turn, plan.measures, plan.score_names[judge_id], spec.session),
        )
    gold = session.gold
    if spec.gold and gold is not None and (gold.link_usefulness or gold.citation_usefulness):
        u_gold = gold_statement_usefulness(session)
        # the usefulness measures only: the citation measures' gold comes from support labels
        names = [f"gold:{m}" for m in plan.usefulness_names]
        _merge(
            turn_scores,
            session_scores,
            measure_scores(u_gold, plan.measures, names, spec.session),
        )


def _citation_rows(
    session: Session,
    judge_ids: Sequence[str],
    pair_labels: Mapping[tuple[str, int, int, int], Mapping[str, Label]],
) -> list[CitationRow]:
    """One row per (statement, cited link) pair and citation judge, in reading order."""
    rows = []
    for turn in session.turns:
        for position, statement in enumerate(turn.statements, start=1):
            for link_id in dict.fromkeys(statement.citations):
                link = turn.link(link_id)
                judged = pair_labels.get((session.session_id, turn.index, position, link_id), {})
                for judge_id in judge_ids:
                    label = judged.get(judge_id)
                    extra = label.extra if label is not None else {}
                    present = label is not None and label.value is not None
                    missing = None
                    if label is None:
                        missing = "not judged"
                    elif label.value is None:
                        missing = label.missing_reason or "missing"
                    rows.append(
                        CitationRow(
                            session_id=session.session_id,
                            turn=turn.index,
                            statement=position,
                            statement_text=statement.text,
                            link_id=link_id,
                            judge=judge_id,
                            url=link.url if link else "",
                            title=link.title if link else "",
                            support=extra.get("support") if present else None,
                            value=_number(label.value) if label is not None else None,
                            evidence=str(extra.get("evidence") or ""),
                            basis=extra.get("basis"),
                            missing_reason=missing,
                        )
                    )
    return rows


def _turn_link_labels(
    link_values: Mapping[tuple[str, int, int], Mapping[str, list[float]]],
    session: Session,
    turn: Turn,
    judge_id: str,
) -> dict[int, float]:
    out: dict[int, float] = {}
    for link_id in turn.cited_link_ids:
        values = link_values.get((session.session_id, turn.index, link_id), {}).get(judge_id, [])
        if values:
            out[link_id] = sum(values) / len(values)
    return out


def _combine(tables: Tables, spec: AggregateSpec) -> None:
    for combo in spec.combine:
        a, b = combo.scores
        for level in ("session", "turn"):
            rows: list[Any] = tables.sessions if level == "session" else tables.turns
            if not rows or not all(a in r.scores and b in r.scores for r in rows):
                continue
            combined = zscore_combine([r.scores[a] for r in rows], [r.scores[b] for r in rows])
            updated = [
                replace(r, scores={**r.scores, combo.name: v})
                for r, v in zip(rows, combined, strict=True)
            ]
            if level == "session":
                tables.sessions = updated
            else:
                tables.turns = updated


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _optional(column: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else v for v in column.tolist()]


def combine_columns(turns: ScoreColumns, sessions: ScoreColumns, spec: AggregateSpec) -> None:
    """The scenario's z-score combinations over every session (and turn, when both scores
    exist for every turn), added to the columns with :meth:`ScoreColumns.put`."""
    for combo in spec.combine:
        a, b = combo.scores
        for columns in (sessions, turns):
            if not (columns.in_every_row(a) and columns.in_every_row(b)):
                continue
            combined = zscore_combine(_optional(columns.column(a)), _optional(columns.column(b)))
            columns.put(combo.name, np.asarray([_nan(v) for v in combined], dtype=float))


class Assembly:
    """A run's tables and meta-evaluation, built window by window of sessions.

    :meth:`add` turns one window's sessions and labels into its table rows (returned, for
    the caller to write out and forget) and keeps what the end of the run needs: the score
    columns of turns and sessions, the judges-against-gold accumulators, label counts and
    failures (counted, the first few kept). :meth:`finish` adds the z-score combinations and :meth:`meta` gives the
    meta-evaluation, the same document :func:`meta_evaluation` gives for all at once.
    """

    def __init__(
        self,
        judges: Sequence[JudgeInfo],
        aggregate_spec: AggregateSpec,
        meta_spec: MetaSpec,
        link_judges: Sequence[str],
        preferences: Sequence[Preference] = (),
        preferences_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.judges = list(judges)
        self.preferences_path = preferences_path
        # people's preferences, and the scores of the sessions they name (only those are kept)
        self.preferences = [p for p in preferences if p.in_run]
        self._named = {s for p in self.preferences for s in (p.session_a, p.session_b)}
        #: the named sessions met, with their number of turns (the rows naming others are
        #: refused at the end: :meth:`check_preferences`)
        self._named_turns: dict[str, int] = {}
        self.preference_sessions: dict[str, dict[str, float | None]] = {}
        self.preference_turns: dict[tuple[str, int], dict[str, float | None]] = {}
        self.aggregate_spec = aggregate_spec
        self.meta_spec = meta_spec
        self.turns, self.sessions = ScoreColumns(), ScoreColumns()
        self.gold = JudgesAgainstGold(judges, link_judges, meta_spec) if meta_spec.enabled else None
        # the missing judgments: the first MAX_LISTED_FAILURES (the caller writes them all
        # out as they come, from each window's tables), their total, and counts by judge
        # and reason (as many as there are distinct reasons, not failures)
        self.failures: list[dict[str, Any]] = []
        self.failures_total = 0
        self.failure_reasons: Counter[tuple[str, str]] = Counter()
        self.label_counts: dict[str, dict[str, int]] = {}
        self.prompt_versions: dict[str, set[str]] = defaultdict(set)
        self.links = 0

    def add(self, sessions: Sequence[Session], labels: Mapping[str, Sequence[Label]]) -> Tables:
        tables = build_tables(sessions, labels, self.judges, self.aggregate_spec, combine=False)
        self.turns.add(tables.turns)
        self.sessions.add(tables.sessions)
        if self._named:
            self._keep_preference_scores(tables, labels)
        self.links += len(tables.links)
        self.failures.extend(tables.failures[: MAX_LISTED_FAILURES - len(self.failures)])
        self.failures_total += len(tables.failures)
        self.failure_reasons.update((str(f["judge"]), str(f["reason"])) for f in tables.failures)
        for judge_id, counts in tables.label_counts.items():
            total = self.label_counts.setdefault(judge_id, {"labels": 0, "missing": 0})
            for key, value in counts.items():
                total[key] = total.get(key, 0) + value
        for judge_id, judged in labels.items():
            self.prompt_versions[judge_id].update(lb.key.prompt_version for lb in judged)
        if self.gold is not None:
            self.gold.add(sessions, labels)
        return tables

    def _keep_preference_scores(
        self, tables: Tables, labels: Mapping[str, Sequence[Label]]
    ) -> None:
        """The scores, and each judge's labels as scores, of the sessions people compared."""
        for session in tables.sessions:
            if session.session_id in self._named:
                self._named_turns.setdefault(session.session_id, 0)
        for turn in tables.turns:
            if turn.session_id in self._named:
                known = self._named_turns.get(turn.session_id, 0)
                self._named_turns[turn.session_id] = max(known, turn.turn)
        for session_row in tables.sessions:
            if session_row.session_id in self._named:
                kept = self.preference_sessions.setdefault(session_row.session_id, {})
                kept.update(session_row.scores)
        for turn_row in tables.turns:
            if turn_row.session_id in self._named:
                kept = self.preference_turns.setdefault((turn_row.session_id, turn_row.turn), {})
                kept.update(turn_row.scores)
        for judge_id, judged in labels.items():
            named = [lb for lb in judged if lb.key.session_id in self._named]
            by_session, by_turn = label_scores(named, judge_id)
            for session_id, values in by_session.items():
                self.preference_sessions.setdefault(session_id, {}).update(values)
            for turn_key, values in by_turn.items():
                self.preference_turns.setdefault(turn_key, {}).update(values)

    def check_preferences(self) -> None:
        """Refuse (at its line of the preferences file) a preference naming a session the
        run did not read, or a turn past that session's last: once every session went by."""
        if self.preferences:
            check_named(self.preferences, str(self.preferences_path), self._named_turns.get)

    def failure_counts(self) -> list[dict[str, Any]]:
        """The missing judgments by judge and reason, for :func:`run_status`."""
        return [
            {"judge": judge, "reason": reason, "count": count}
            for (judge, reason), count in self.failure_reasons.items()
        ]

    def finish(self) -> dict[str, dict[str, np.ndarray]]:
        """Add the z-score combinations; returns them per table (``turns``, ``sessions``)."""
        combine_columns(self.turns, self.sessions, self.aggregate_spec)
        return {"turns": self.turns.extra, "sessions": self.sessions.extra}

    def preference_agreement(self) -> dict[str, Any] | None:
        """Every session and turn score against people's preferences
        (:func:`genir_eval.meta.preferences.agreement_table`); ``None`` without any."""
        if not self.preferences:
            return None
        spec = self.meta_spec
        return agreement_table(
            self.preferences,
            self.preference_sessions,
            self.preference_turns,
            n_boot=spec.n_boot,
            seed=spec.seed,
        )

    def meta(self, headline: str | None) -> dict[str, Any] | None:
        """Scores against the users' satisfaction and thumbs, against people's preferences,
        and judges against gold labels (``None`` when the meta-evaluation is off or no row
        has gold or thumbs, and no preferences were given)."""
        spec = self.meta_spec
        preferences = self.preference_agreement()
        if not spec.enabled or self.gold is None:
            if preferences is None:
                return None
            return {
                "version": OUTPUT_VERSION,
                "headline": headline,
                "n_boot": spec.n_boot,
                "seed": spec.seed,
                "correlations": {},
                "preferences": preferences,
            }
        by_level = {
            "turn": self.turns.correlations(spec.n_boot, spec.seed),
            "session": self.sessions.correlations(spec.n_boot, spec.seed),
        }
        has_thumbs = self.turns.has_thumbs()
        # judges against gold labels count on their own: people's link or citation labels
        # (genir-eval label) come without the users' satisfaction
        judges = self.gold.result()
        if all(block is None for block in by_level.values()) and not has_thumbs:
            if preferences is None and not _any_gold_block(judges):
                return None
        result: dict[str, Any] = {
            "version": OUTPUT_VERSION,
            "headline": headline,
            "n_boot": spec.n_boot,
            "seed": spec.seed,
            "correlations": {level: b for level, b in by_level.items() if b is not None},
        }
        if has_thumbs:
            result["feedback"] = self.turns.feedback(spec.n_boot, spec.seed)
        if preferences is not None:
            result["preferences"] = preferences
        result["judges"] = judges
        return result


def meta_evaluation(
    tables: Tables,
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
    spec: MetaSpec,
    headline: str | None,
    link_judges: Sequence[str] = (),
) -> dict[str, Any] | None:
    """Scores against the users' satisfaction (query and session level, with bootstrap
    intervals) under ``correlations``, and each judge's labels against the gold ones under
    ``judges`` (see :func:`judges_against_gold`); ``None`` when there is no gold.
    ``tables`` are the run's complete tables (z-score combinations included)."""
    assembly = Assembly(judges, AggregateSpec(), spec, link_judges)
    assembly.turns.add(tables.turns)
    assembly.sessions.add(tables.sessions)
    if assembly.gold is not None:
        assembly.gold.add(sessions, labels)
    return assembly.meta(headline)
