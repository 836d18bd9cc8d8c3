"""Scores against people's preferences: pair agreement, its bootstrap interval, kappa.

A preference (:mod:`genir_eval.ingest.preferences`) says which of two answers people prefer,
or neither. A score agrees with it when it ranks the preferred answer higher (lower, for a
score where lower is better, as its measure declares). For one score and one criterion:

* ``pairs``: rows where both answers have the score; ``missing``: rows where one has none;
* ``decided``: pairs people decided (``a`` or ``b``) and the score separates (its two values
  differ); ``agree``: those where the score picks people's winner; ``agreement`` =
  ``agree / decided`` with a 95% percentile bootstrap interval drawn over queries (the
  rows' ``query`` groups, so that pairs on one query move together);
* ties counted apart: ``score_ties`` (people decided, the score gives both answers the same
  value; ``tie_rate`` is their share of people's decided pairs) and ``gold_ties`` (people saw
  no difference);
* ``kappa``: Cohen's kappa between people and the score on the three outcomes a/tie/b over
  every pair (Cohen 1960), where the score's tie is an equal value.

A session score is compared on every row (a row naming a turn is read as a preference between
the sessions; exact for one-turn sessions), a turn score on the rows naming a turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from genir_eval.ingest.preferences import Preference
from genir_eval.meta.stats import cohen_kappa

__all__ = [
    "OUTCOMES",
    "score_outcome",
    "pair_agreement",
    "agreement_table",
    "lower_is_better",
    "label_scores",
]

#: What people, or a score, can say of two answers.
OUTCOMES = ("a", "tie", "b")


def lower_is_better(score: str) -> bool:
    """Whether a lower ``score`` is better, as its measure declares (a ``gold:`` prefix or an
    ``@judge`` suffix allowed); any other score is higher-is-better."""
    from genir_eval.errors import ConfigError
    from genir_eval.metrics import parse_measure

    base = score.removeprefix("gold:").split("@", 1)[0]
    try:
        return not parse_measure(base).HIGHER_IS_BETTER
    except ConfigError:
        return False


def score_outcome(value_a: float, value_b: float, *, lower_better: bool = False) -> str:
    """``"a"``, ``"b"`` or ``"tie"``: which answer the score prefers."""
    if value_a == value_b:
        return "tie"
    better_a = value_a < value_b if lower_better else value_a > value_b
    return "a" if better_a else "b"


def pair_agreement(
    preferences: Sequence[Preference],
    value_a: Sequence[float | None],
    value_b: Sequence[float | None],
    *,
    lower_better: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """How one score meets people's preferences (see the module docstring for each field).

    ``value_a[i]`` and ``value_b[i]`` are the score of row ``i``'s two answers (``None`` or
    NaN when missing). No decided pair gives ``agreement`` ``None``; ``n_boot`` 0 gives no
    interval.
    """
    gold: list[str] = []
    said: list[str] = []
    queries: list[Hashable] = []
    missing = 0
    for row, a, b in zip(preferences, value_a, value_b, strict=True):
        if a is None or b is None or a != a or b != b:
            missing += 1
            continue
        gold.append(row.winner)
        said.append(score_outcome(float(a), float(b), lower_better=lower_better))
        queries.append(row.query)
    people_decided = [g != "tie" for g in gold]
    decided = [d and s != "tie" for d, s in zip(people_decided, said, strict=True)]
    hits = np.array([d and g == s for d, g, s in zip(decided, gold, said, strict=True)], float)
    counted = np.array(decided, float)
    n_decided = int(counted.sum())
    score_ties = sum(1 for d, s in zip(people_decided, said, strict=True) if d and s == "tie")
    out: dict[str, Any] = {
        "pairs": len(gold),
        "missing": missing,
        "decided": n_decided,
        "agree": int(hits.sum()),
        "agreement": float(hits.sum() / n_decided) if n_decided else None,
        "ci95": None,
        "score_ties": score_ties,
        "tie_rate": score_ties / sum(people_decided) if any(people_decided) else None,
        "gold_ties": len(gold) - sum(people_decided),
        "kappa": cohen_kappa(gold, said, labels=OUTCOMES) if gold else None,
        "queries": len(set(queries)),
        "lower_is_better": lower_better,
    }
    if n_decided and n_boot > 0:
        out["ci95"] = _query_bootstrap(hits, counted, queries, n_boot, seed)
    return out


def _query_bootstrap(
    hits: np.ndarray, counted: np.ndarray, queries: Sequence[Hashable], n_boot: int, seed: int
) -> list[float] | None:
    """95% percentile interval of ``sum(hits) / sum(counted)`` over resampled queries."""
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, query in enumerate(queries):
        groups[query].append(i)
    hit_by = np.array([hits[rows].sum() for rows in groups.values()])
    count_by = np.array([counted[rows].sum() for rows in groups.values()])
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(groups), size=(n_boot, len(groups)))
    num = hit_by[draws].sum(axis=1)
    den = count_by[draws].sum(axis=1)
    valid = den > 0
    if not valid.any():
        return None
    ratios = num[valid] / den[valid]
    return [float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))]


def agreement_table(
    preferences: Sequence[Preference],
    session_scores: Mapping[str, Mapping[str, float | None]],
    turn_scores: Mapping[tuple[str, int], Mapping[str, float | None]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Pair agreement of every session and turn score with the preferences naming two
    sessions of one run, per criterion (``"overall"`` for rows without one).

    ``session_scores`` maps a session id to its scores, ``turn_scores`` a (session id, turn
    index) to the turn's. Returns ``{criterion: {"session": {score: ...}, "turn": {...}}}``
    with :func:`pair_agreement`'s fields, plus ``rows`` (and ``unknown``: rows naming a
    session the run does not have, which are counted as missing)."""
    by_criterion: dict[str, list[Preference]] = defaultdict(list)
    for row in preferences:
        if row.in_run:
            by_criterion[row.criterion or "overall"].append(row)
    session_names = sorted({name for scores in session_scores.values() for name in scores})
    turn_names = sorted({name for scores in turn_scores.values() for name in scores})
    out: dict[str, Any] = {}
    for criterion, rows in by_criterion.items():
        unknown = sum(
            1
            for r in rows
            if r.session_a not in session_scores or r.session_b not in session_scores
        )
        table: dict[str, Any] = {"rows": len(rows), "unknown": unknown, "session": {}, "turn": {}}
        for name in session_names:
            a = [session_scores.get(str(r.session_a), {}).get(name) for r in rows]
            b = [session_scores.get(str(r.session_b), {}).get(name) for r in rows]
            table["session"][name] = pair_agreement(
                rows, a, b, lower_better=lower_is_better(name), n_boot=n_boot, seed=seed
            )
        turned = [r for r in rows if r.turn is not None]
        if turned:
            for name in turn_names:
                a = [
                    turn_scores.get((str(r.session_a), int(r.turn or 0)), {}).get(name)
                    for r in turned
                ]
                b = [
                    turn_scores.get((str(r.session_b), int(r.turn or 0)), {}).get(name)
                    for r in turned
                ]
                table["turn"][name] = pair_agreement(
                    turned, a, b, lower_better=lower_is_better(name), n_boot=n_boot, seed=seed
                )
        out[criterion] = table
    return out


def label_scores(
    labels: Iterable[Any], judge: str, *, value: Callable[[Any], float | None] | None = None
) -> tuple[dict[str, dict[str, float]], dict[tuple[str, int], dict[str, float]]]:
    """A judge's numeric labels as scores people's preferences can meet: per session (labels
    given to the whole session) and per turn, the mean value of each kind of item (the part
    of the item's name before ``:``, so all ``link:<id>`` labels of a turn make one mean),
    named ``labels:<judge>`` (``labels:<judge>:<item kind>`` when the judge gives several
    kinds). Missing and non-numeric labels are left out, unless ``value`` reads a number from
    a label's value that is not one (a judge kind's turn score: a nugget judge's share of
    the nuggets supported)."""
    sums: dict[tuple[str, int | None, str], list[float]] = defaultdict(list)
    for label in labels:
        number = label.value
        if value is not None and number is not None and not isinstance(number, (int, float)):
            number = value(number)
        if number is None or isinstance(number, bool) or not isinstance(number, (int, float)):
            continue
        kind = str(label.key.item).split(":", 1)[0]
        sums[label.key.session_id, label.key.turn, kind].append(float(number))
    kinds = {kind for _, _, kind in sums}
    sessions: dict[str, dict[str, float]] = defaultdict(dict)
    turns: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for (session_id, turn, kind), values in sums.items():
        name = f"labels:{judge}" if len(kinds) == 1 else f"labels:{judge}:{kind}"
        mean = sum(values) / len(values)
        if turn is None:
            sessions[session_id][name] = mean
        else:
            turns[session_id, turn][name] = mean
    return dict(sessions), dict(turns)
