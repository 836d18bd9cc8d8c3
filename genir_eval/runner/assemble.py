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
- z-score combinations (:func:`genir_eval.metrics.zscore_combine`) pair two scores over all
  sessions (and all turns, when both exist per turn).

The meta-evaluation correlates every score with the users' satisfaction and scores each
judge's labels against the gold ones with :mod:`genir_eval.meta.evaluate`, the code behind
``genir-eval meta``: one implementation, the same figures and names in both commands.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from genir_eval.judges.base import Label
from genir_eval.meta.evaluate import score_labels
from genir_eval.meta.item_eval import evaluate_item, evaluate_rubric
from genir_eval.meta.stats import binary_agreement, correlations
from genir_eval.metrics import (
    CitationMeasure,
    QueryMeasure,
    aggregate,
    cited_statements,
    gold_cited_statements,
    gold_statement_usefulness,
    parse_measure,
    statement_usefulness,
    zscore_combine,
)
from genir_eval.records import Session, Turn
from genir_eval.report.outputs import OUTPUT_VERSION, CitationRow, LinkRow, SessionRow, TurnRow
from genir_eval.runner.scenario import AggregateSpec, MetaSpec, measure_groups

__all__ = [
    "Tables",
    "JudgeInfo",
    "build_tables",
    "meta_evaluation",
    "judges_against_gold",
    "link_judge_ids",
    "link_score_names",
    "feedback_agreement",
]

LINK_KIND = "link_usefulness"
SPANS_KIND = "spans"
ITEM_KIND = "item"
RUBRIC_KIND = "rubric"
CITATION_KIND = "citation_support"
# Items whose numeric value is the judge's own score for the turn (or the session).
_OWN_ITEMS = {"turn", "session", "satisfaction", "spans", "item", "rubric"}
_PASSAGE_ITEMS = ("stmt:",)


@dataclass(frozen=True)
class JudgeInfo:
    """What assembly needs to know of a judge: its output id and its kind."""

    id: str
    kind: str


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


def _citation_scores(
    statements: Sequence[Sequence[Any]], measures: Sequence[Any], names: Sequence[str]
) -> tuple[list[dict[str, float | None]], dict[str, float | None]]:
    per_turn: list[dict[str, float | None]] = [{} for _ in statements]
    per_session: dict[str, float | None] = {}
    for measure, name in zip(measures, names, strict=True):
        for position, turn_statements in enumerate(statements):
            per_turn[position][name] = measure.compute([turn_statements])
        per_session[name] = measure.compute(statements)
    return per_turn, per_session


def link_judge_ids(spec: AggregateSpec, judges: Sequence[JudgeInfo]) -> list[str]:
    """The judges whose link labels feed the link metrics, the first giving the plain names."""
    if spec.link_judges is not None:
        return list(spec.link_judges)
    return [j.id for j in judges if j.kind == LINK_KIND]


def _measure_scores(
    u_per_turn: Sequence[Sequence[float]], measures: Sequence[Any], names: Sequence[str], how: str
) -> tuple[list[dict[str, float | None]], dict[str, float | None]]:
    per_turn: list[dict[str, float | None]] = [{} for _ in u_per_turn]
    per_session: dict[str, float | None] = {}
    for measure, name in zip(measures, names, strict=True):
        if isinstance(measure, QueryMeasure):
            values = [measure.compute(u) for u in u_per_turn]
            per_session[name] = aggregate(values, how)
        else:
            values = [measure.compute([u]) if u else None for u in u_per_turn]
            per_session[name] = measure.compute(u_per_turn)
        for position, value in enumerate(values):
            per_turn[position][name] = value
    return per_turn, per_session


def _gold_at(values: Sequence[Any] | None, position: int) -> Any:
    if values is None or position >= len(values):
        return None
    return values[position]


def build_tables(
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
    spec: AggregateSpec,
) -> Tables:
    """The links, turns and sessions tables of a run; ``labels`` maps judge id to labels."""
    tables = Tables()
    link_judges = link_judge_ids(spec, judges)
    score_names = link_score_names(spec, link_judges)
    citation_judges = [j.id for j in judges if j.kind == CITATION_KIND]
    usefulness_names, citation_names = measure_groups(
        spec.measures, citation_judge=bool(citation_judges)
    )
    measures = [parse_measure(text) for text in usefulness_names]
    citation_measures = [parse_measure(text) for text in citation_names]
    assert all(isinstance(m, CitationMeasure) for m in citation_measures)
    # (session, turn) -> judge -> (statement, link) -> support; the labels themselves
    support: dict[tuple[str, int], dict[str, dict[tuple[int, int], int | None]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    pair_labels: dict[tuple[str, int, int, int], dict[str, Label]] = defaultdict(dict)

    # (session, turn, link) -> judge -> values; (session, turn) / session -> name -> values
    link_values: dict[tuple[str, int, int], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    link_missing: dict[tuple[str, int, int], dict[str, str]] = defaultdict(dict)
    turn_values: dict[tuple[str, int], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    session_values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    turn_judged: dict[str, set[tuple[str, int]]] = defaultdict(set)
    segments_of = {(s.session_id, t.index): len(t.segments) for s in sessions for t in s.turns}
    for judge in judges:
        counts = {"labels": 0, "missing": 0}
        for label in labels.get(judge.id, ()):
            key = label.key
            counts["labels"] += 1
            if judge.kind == CITATION_KIND and key.item.startswith("cite:") and key.turn:
                _, s_pos, l_id = key.item.split(":")
                pair = (int(s_pos), int(l_id))
                value = _number(label.value)
                support[(key.session_id, key.turn)][judge.id][pair] = (
                    None if value is None else int(value)
                )
                pair_labels[(key.session_id, key.turn, pair[0], pair[1])][judge.id] = label
            if label.value is None:
                counts["missing"] += 1
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
                    link_missing[(key.session_id, key.turn, link_id)][judge.id] = (
                        label.missing_reason or "missing"
                    )
                continue
            if key.item.startswith(_PASSAGE_ITEMS):
                # a RUBRIC judge's grade of one response statement: evidence, not a score
                continue
            if judge.kind == CITATION_KIND and key.item.startswith("cite:"):
                continue  # scored through the citation measures below
            if key.item.startswith("link:") and key.turn is not None:
                value = _number(label.value)
                if value is not None:
                    link_id = int(key.item.split(":", 1)[1])
                    link_values[(key.session_id, key.turn, link_id)][judge.id].append(value)
                continue
            name = judge.id if key.item in _OWN_ITEMS else f"{judge.id}:{key.item}"
            value = _number(label.value)
            if value is None and judge.kind == SPANS_KIND and isinstance(label.value, list):
                n_segments = segments_of.get((key.session_id, key.turn or 0), 0)
                value = len(set(label.value)) / n_segments if n_segments else None
            if value is None:
                continue
            if key.turn is None:
                session_values[key.session_id][name].append(value)
            else:
                turn_values[(key.session_id, key.turn)][name].append(value)
                turn_judged[name].add((key.session_id, key.turn))
        tables.label_counts[judge.id] = counts

    turn_score_names = list(turn_judged)  # in the scenario's judge order
    labelled_links = [j.id for j in judges if j.kind == LINK_KIND or j.id in link_judges]
    for session in sessions:
        gold = session.gold
        turn_scores: list[dict[str, float | None]] = []
        for position, turn in enumerate(session.turns):
            scores: dict[str, float | None] = {}
            for name in turn_score_names:
                scores[name] = _mean(
                    turn_values.get((session.session_id, turn.index), {}).get(name, [])
                )
            turn_scores.append(scores)
            gold_links = _gold_at(gold.link_usefulness if gold else None, position) or {}
            for link in turn.links:
                key3 = (session.session_id, turn.index, link.id)
                judged = link_values.get(key3, {})
                tables.links.append(
                    LinkRow(
                        session_id=session.session_id,
                        turn=turn.index,
                        link_id=link.id,
                        url=link.url,
                        title=link.title,
                        cited=link.id in turn.cited_link_ids,
                        labels={j: _mean(judged.get(j, [])) for j in labelled_links},
                        missing=dict(link_missing.get(key3, {})),
                        gold=_number(gold_links.get(link.id)),
                    )
                )
        session_scores: dict[str, float | None] = {}
        # the judges' own session scores, else their aggregated turn scores
        own = session_values.get(session.session_id, {})
        for name in turn_score_names:
            if name in own:
                continue
            session_scores[name] = aggregate([s.get(name) for s in turn_scores], spec.session)
        for name, values in own.items():
            session_scores[name] = _mean(values)
        # citation measures from each citation judge's support labels, and from gold
        for position_j, judge_id in enumerate(citation_judges):
            suffix = "" if position_j == 0 else f"@{judge_id}"
            statements = [
                cited_statements(
                    turn, support.get((session.session_id, turn.index), {}).get(judge_id, {})
                )
                for turn in session.turns
            ]
            per_turn, per_session = _citation_scores(
                statements, citation_measures, [f"{m}{suffix}" for m in citation_names]
            )
            for scores, extra in zip(turn_scores, per_turn, strict=True):
                scores.update(extra)
            session_scores.update(per_session)
        gold_statements = gold_cited_statements(session) if spec.gold else None
        if gold_statements is not None and citation_measures:
            per_turn, per_session = _citation_scores(
                gold_statements, citation_measures, [f"gold:{m}" for m in citation_names]
            )
            for scores, extra in zip(turn_scores, per_turn, strict=True):
                scores.update(extra)
            session_scores.update(per_session)
        if citation_judges:
            tables.citations.extend(_citation_rows(session, citation_judges, pair_labels))
        # link metrics from each link judge's labels, and from the gold labels
        for judge_id in link_judges:
            u_per_turn = [
                statement_usefulness(turn, _turn_link_labels(link_values, session, turn, judge_id))
                for turn in session.turns
            ]
            per_turn, per_session = _measure_scores(
                u_per_turn, measures, score_names[judge_id], spec.session
            )
            for scores, extra in zip(turn_scores, per_turn, strict=True):
                scores.update(extra)
            session_scores.update(per_session)
        if spec.gold and gold is not None and (gold.link_usefulness or gold.citation_usefulness):
            u_gold = gold_statement_usefulness(session)
            names = [f"gold:{m}" for m in spec.measures]
            per_turn, per_session = _measure_scores(u_gold, measures, names, spec.session)
            for scores, extra in zip(turn_scores, per_turn, strict=True):
                scores.update(extra)
            session_scores.update(per_session)
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
    _combine(tables, spec)
    return tables


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
    from dataclasses import replace

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
    ``judges`` (see :func:`judges_against_gold`); ``None`` when there is no gold."""
    if not spec.enabled:
        return None
    has_gold = any(r.gold_satisfaction is not None for r in tables.sessions) or any(
        r.gold_satisfaction is not None for r in tables.turns
    )
    has_thumbs = any(r.thumbs is not None for r in tables.turns)
    if not has_gold and not has_thumbs:
        return None
    result: dict[str, Any] = {
        "version": OUTPUT_VERSION,
        "headline": headline,
        "n_boot": spec.n_boot,
        "seed": spec.seed,
        "correlations": {},
    }
    levels: list[tuple[str, Sequence[TurnRow | SessionRow]]] = [
        ("turn", tables.turns),
        ("session", tables.sessions),
    ]
    for level, rows in levels:
        names: dict[str, None] = {}
        for row in rows:
            for name in row.scores:
                names.setdefault(name, None)
        gold = [row.gold_satisfaction for row in rows]
        if all(g is None for g in gold):
            continue
        result["correlations"][level] = {
            name: correlations(
                [row.scores.get(name) for row in rows], gold, n_boot=spec.n_boot, seed=spec.seed
            )
            for name in names
        }
    if has_thumbs:
        result["feedback"] = feedback_agreement(tables.turns, spec)
    result["judges"] = judges_against_gold(sessions, labels, judges, link_judges, spec)
    return result


def feedback_agreement(turns: Sequence[TurnRow], spec: MetaSpec) -> dict[str, Any]:
    """Every turn score against the users' thumbs (up = 1, down = 0): AUC and point-biserial
    r with bootstrap intervals (:func:`genir_eval.meta.stats.binary_agreement`), since
    Pearson's r on a binary target assumes what AUC does not."""
    names: dict[str, None] = {}
    for row in turns:
        for name in row.scores:
            names.setdefault(name, None)
    thumbs = [row.thumbs for row in turns]
    return {
        "target": "thumbs (1 = up, 0 = down), per turn",
        "turn": {
            name: binary_agreement(
                [row.scores.get(name) for row in turns], thumbs, n_boot=spec.n_boot, seed=spec.seed
            )
            for name in names
        },
    }


def judges_against_gold(
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
    link_judges: Sequence[str],
    spec: MetaSpec,
) -> dict[str, dict[str, Any]]:
    """Each judge's labels against the gold ones, by judge id, exactly as ``genir-eval meta``
    scores them (:func:`genir_eval.meta.evaluate.score_labels`, plus
    :func:`~genir_eval.meta.item_eval.evaluate_item` / ``evaluate_rubric`` for ITEM and
    RUBRIC judges), so both commands give the same figures under the same names.

    A satisfaction judge is combined with ``sdcg_urge`` from the labels of the scenario's
    first link judge (``link_labels`` in its blocks names it), where ``genir-eval meta``
    uses an offline twin.
    """
    source = link_judges[0] if link_judges else None
    link_labels = labels.get(source) if source is not None else None
    out: dict[str, dict[str, Any]] = {}
    for judge in judges:
        own = labels.get(judge.id, ())
        block: dict[str, Any] = {"kind": judge.kind}
        block.update(
            score_labels(
                sessions,
                own,
                kind=judge.kind,
                link_labels=link_labels,
                link_source=source,
                n_boot=spec.n_boot,
                seed=spec.seed,
            )
        )
        if judge.kind == ITEM_KIND:
            block["item"] = evaluate_item(sessions, own)
        elif judge.kind == RUBRIC_KIND:
            block["rubric"] = evaluate_rubric(sessions, own)
        if len(block) > 1:
            out[judge.id] = block
    return out
