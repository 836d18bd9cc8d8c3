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
- z-score combinations (:func:`genir_eval.metrics.zscore_combine`) pair two scores over all
  sessions (and all turns, when both exist per turn).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scipy import stats as scipy_stats

from genir_eval.judges.base import Label
from genir_eval.meta.stats import (
    cohen_kappa,
    confusion_matrix,
    correlations,
    mae,
    precision_recall_f1,
)
from genir_eval.metrics import (
    QueryMeasure,
    aggregate,
    gold_statement_usefulness,
    parse_measure,
    statement_usefulness,
    zscore_combine,
)
from genir_eval.records import Session, Turn
from genir_eval.report.outputs import OUTPUT_VERSION, LinkRow, SessionRow, TurnRow
from genir_eval.runner.scenario import AggregateSpec, MetaSpec

__all__ = ["Tables", "JudgeInfo", "build_tables", "meta_evaluation", "link_score_names"]

LINK_KIND = "link_usefulness"
SPANS_KIND = "spans"
LINK_LABELS = (0, 1, 2, 3)
# Items whose numeric value is the judge's own score for the turn (or the session).
_OWN_ITEMS = {"turn", "session", "satisfaction", "spans", "item", "rubric"}


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
    names: dict[str, list[str]] = {}
    for position, judge_id in enumerate(link_judges):
        suffix = "" if position == 0 else f"@{judge_id}"
        names[judge_id] = [f"{m}{suffix}" for m in spec.measures]
    return names


def _link_judges(spec: AggregateSpec, judges: Sequence[JudgeInfo]) -> list[str]:
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
    link_judges = _link_judges(spec, judges)
    score_names = link_score_names(spec, link_judges)
    measures = [parse_measure(text) for text in spec.measures]

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


def _link_meta(tables: Tables, judges: Sequence[JudgeInfo]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for judge in judges:
        if judge.kind != LINK_KIND:
            continue
        pairs = [
            (link.labels.get(judge.id), link.gold)
            for link in tables.links
            if link.labels.get(judge.id) is not None and link.gold is not None
        ]
        if not pairs:
            continue
        pred = [int(round(p)) for p, _ in pairs if p is not None]
        gold = [int(round(g)) for _, g in pairs if g is not None]
        out[judge.id] = {
            "n": len(pairs),
            "accuracy": sum(p == g for p, g in zip(pred, gold, strict=True)) / len(pairs),
            "mae": mae(pred, gold),
            "kappa_quadratic": cohen_kappa(pred, gold, weights="quadratic", labels=LINK_LABELS),
            "labels": list(LINK_LABELS),
            "confusion": confusion_matrix(pred, gold, labels=LINK_LABELS),
        }
    return out


def _spans_meta(
    sessions: Sequence[Session], labels: Mapping[str, Sequence[Label]], judges: Sequence[JudgeInfo]
) -> dict[str, Any]:
    turns = {
        (s.session_id, t.index): (s, position, t)
        for s in sessions
        for position, t in enumerate(s.turns)
    }
    out: dict[str, Any] = {}
    for judge in judges:
        if judge.kind != SPANS_KIND:
            continue
        by_source: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
        for label in labels.get(judge.id, ()):
            if label.key.turn is None or not isinstance(label.value, list):
                continue
            found = turns.get((label.key.session_id, label.key.turn))
            if found is None or found[0].gold is None:
                continue
            session, position, turn = found
            chosen = {
                turn.segments[i].text.strip()
                for i in label.value
                if isinstance(i, int) and 0 <= i < len(turn.segments)
            }
            assert session.gold is not None
            for source, spans in (
                ("user", session.gold.useful_spans_user),
                ("external", session.gold.useful_spans_external),
            ):
                gold_spans = _gold_at(spans, position)
                if gold_spans is None:
                    continue
                prf = precision_recall_f1(chosen, {s.strip() for s in gold_spans})
                by_source[source].append((prf[0], prf[1], prf[2]))
        if by_source:
            out[judge.id] = {
                source: {
                    "n_turns": len(values),
                    "precision": sum(v[0] for v in values) / len(values),
                    "recall": sum(v[1] for v in values) / len(values),
                    "f1": sum(v[2] for v in values) / len(values),
                }
                for source, values in by_source.items()
            }
    return out


def meta_evaluation(
    tables: Tables,
    sessions: Sequence[Session],
    labels: Mapping[str, Sequence[Label]],
    judges: Sequence[JudgeInfo],
    spec: MetaSpec,
    headline: str | None,
) -> dict[str, Any] | None:
    """Scores against the users' satisfaction (query and session level, with bootstrap
    intervals) and link labels against the experts'; ``None`` when there is no gold."""
    if not spec.enabled:
        return None
    has_gold = any(r.gold_satisfaction is not None for r in tables.sessions) or any(
        r.gold_satisfaction is not None for r in tables.turns
    )
    if not has_gold:
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
        with warnings.catch_warnings():
            # A score that is (nearly) constant over the sessions, as with a judge that gives
            # everyone the same label, makes scipy warn; its correlation is reported as is
            # (None when undefined) and the run goes on.
            warnings.filterwarnings("ignore", category=scipy_stats.NearConstantInputWarning)
            warnings.filterwarnings("ignore", category=scipy_stats.ConstantInputWarning)
            result["correlations"][level] = {
                name: correlations(
                    [row.scores.get(name) for row in rows], gold, n_boot=spec.n_boot, seed=spec.seed
                )
                for name in names
            }
    result["links"] = _link_meta(tables, judges)
    result["spans"] = _spans_meta(sessions, labels, judges)
    return result
