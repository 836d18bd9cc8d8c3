"""Meta-evaluation of a judge: run it on sessions with gold labels and score it against them.

:func:`evaluate_judge` runs a judge through an engine and :func:`score_labels` compares its
labels with the sessions' gold annotations (URGE: expert link-usefulness labels, the user's
and the annotators' useful-text marks, the user's query and session satisfaction):

- ``link_usefulness``: Spearman and Kendall (bootstrap 95% intervals), Cohen's kappa on the
  binarised scale (2-3 useful vs 0-1) and linearly weighted on 0-3, MAE, pairwise AUC, the
  confusion matrix, ``n`` and ``missing``;
- ``spans``: precision, recall and F1 of the units the judge marks against the user's marks
  and the annotators', micro (pooled units) and macro (mean over turns), and the user's
  marks against the annotators' as the human reference;
- ``satisfaction``: Pearson, Spearman, Kendall with query- and session-level satisfaction,
  overall and per task type, and the same after z-score combining the session scores with
  ``sdcg_urge`` computed from link labels (URGE's combination); a link judge gets the
  ``sdcg_urge`` of its own labels;
- ``citation_support``: the judge's support verdict per (statement, cited link) pair against
  ``gold.citation_support``: accuracy, Cohen's kappa (unweighted and linearly weighted on
  none < partial < full), kappa on "fully supported or not", the confusion matrix, and
  each citation measure from the judge's labels beside the same from the gold ones;
- ``orderings``: RBO and Kendall tau between the judge's and the gold ordering of the
  hardest queries (lowest gold query satisfaction), as Thomas et al. compare rankings.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from genir_eval.judges.base import Judge, Label, judge_sessions, make_judge
from genir_eval.judges.offline.twins import BASELINE_NOTE
from genir_eval.llm.engine import Engine
from genir_eval.llm.offline import OfflineProvider
from genir_eval.meta.item_eval import evaluate_item, evaluate_rubric
from genir_eval.meta.stats import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    correlations,
    kendall_tau,
    mae,
    pairwise_auc,
    precision_recall_f1,
    rbo,
)
from genir_eval.metrics import (
    DEFAULT_CITATION_MEASURES,
    SDCG_URGE,
    cited_statements,
    gold_cited_statements,
    parse_measure,
    statement_usefulness,
    zscore_combine,
)
from genir_eval.records import SUPPORT_LEVELS, SUPPORT_VALUE, Session

__all__ = [
    "META_VERSION",
    "evaluate_judge",
    "score_labels",
    "link_usefulness_scores",
    "spans_scores",
    "satisfaction_scores",
    "ordering_scores",
    "link_label_map",
    "sdcg_from_labels",
    "citation_support_scores",
    "DEFAULT_LINK_BASELINE",
]

META_VERSION = 1
DEFAULT_LINK_BASELINE = "link_usefulness.true"
HARDEST_FRACTION = 0.5


def _by_key(labels: Sequence[Label]) -> dict[tuple[str, int | None, str], Label]:
    return {(lb.key.session_id, lb.key.turn, lb.key.item): lb for lb in labels}


def _gold_position(session: Session, turn_index: int) -> int | None:
    for position, turn in enumerate(session.turns):
        if turn.index == turn_index:
            return position
    return None


def link_label_map(labels: Sequence[Label]) -> dict[tuple[str, int], dict[int, float]]:
    """``{(session_id, turn): {link_id: label}}`` from a link judge's present labels."""
    out: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    for lb in labels:
        if lb.key.item.startswith("link:") and lb.value is not None and lb.key.turn is not None:
            out[(lb.key.session_id, lb.key.turn)][int(lb.key.item[5:])] = float(lb.value)
    return dict(out)


def sdcg_from_labels(sessions: Sequence[Session], labels: Sequence[Label]) -> list[float | None]:
    """URGE's ``sDCG`` of each session from link labels (statement usefulness = the best
    label among a statement's citations)."""
    by_turn = link_label_map(labels)
    measure = SDCG_URGE()
    out: list[float | None] = []
    for session in sessions:
        u = [
            statement_usefulness(turn, by_turn.get((session.session_id, turn.index), {}))
            for turn in session.turns
        ]
        out.append(measure.compute(u))
    return out


def _rounded(value: float | None) -> int | None:
    return None if value is None else int(min(3, max(0, math.floor(value + 0.5))))


def link_usefulness_scores(
    sessions: Sequence[Session], labels: Sequence[Label], *, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any] | None:
    """The judge's link labels against the experts' (``None`` without gold link labels)."""
    by = _by_key(labels)
    pred: list[float | None] = []
    gold: list[int] = []
    reasons: dict[str, int] = defaultdict(int)
    for session in sessions:
        if session.gold is None or session.gold.link_usefulness is None:
            continue
        for position, turn in enumerate(session.turns):
            if position >= len(session.gold.link_usefulness):
                continue
            for link_id, value in sorted(session.gold.link_usefulness[position].items()):
                label = by.get((session.session_id, turn.index, f"link:{link_id}"))
                if label is None or label.value is None:
                    reasons[(label.missing_reason if label else None) or "not judged"] += 1
                    pred.append(None)
                else:
                    pred.append(float(label.value))
                gold.append(int(value))
    if not gold:
        return None
    corr = correlations(pred, gold, n_boot=n_boot, seed=seed)
    ints = [_rounded(p) for p in pred]
    return {
        "spearman": corr["spearman"],
        "kendall": corr["kendall"],
        "pearson": corr["pearson"],
        "ci95": {k: corr["ci95"][k] for k in ("spearman", "kendall", "pearson")},
        "cohen_kappa_binary": cohen_kappa(binarize(ints), binarize(gold), weights=None),
        "cohen_kappa_weighted": cohen_kappa(ints, gold, weights="linear"),
        "mae": mae(pred, gold),
        "pairwise_auc": pairwise_auc(pred, gold),
        "confusion_matrix": {
            "labels": [0, 1, 2, 3],
            "rows": "gold",
            "columns": "judge (rounded)",
            "matrix": confusion_matrix(ints, gold),
        },
        "n": corr["n"],
        "missing": sum(1 for p in pred if p is None),
        "missing_reasons": dict(reasons),
    }


def _prf(pairs: Sequence[tuple[set[str], set[str]]]) -> dict[str, float | int | None]:
    if not pairs:
        return {"precision": None, "recall": None, "f1": None, "n_turns": 0}
    micro_p: set[tuple[int, str]] = set()
    micro_g: set[tuple[int, str]] = set()
    macro = []
    for i, (p, g) in enumerate(pairs):
        micro_p |= {(i, x) for x in p}
        micro_g |= {(i, x) for x in g}
        macro.append(precision_recall_f1(p, g))
    micro = precision_recall_f1(micro_p, micro_g)
    return {
        "precision": micro.precision,
        "recall": micro.recall,
        "f1": micro.f1,
        "macro_precision": sum(m.precision for m in macro) / len(macro),
        "macro_recall": sum(m.recall for m in macro) / len(macro),
        "macro_f1": sum(m.f1 for m in macro) / len(macro),
        "n_turns": len(pairs),
    }


def _marks(value: Sequence[str]) -> set[str]:
    return {m.strip() for m in value if m.strip()}


def spans_scores(sessions: Sequence[Session], labels: Sequence[Label]) -> dict[str, Any] | None:
    """Units the judge marks vs the user's and the annotators' marks (text units match by
    their stripped text); the user vs the annotators is the human reference."""
    by = _by_key(labels)
    vs_user: list[tuple[set[str], set[str]]] = []
    vs_ext: list[tuple[set[str], set[str]]] = []
    human: list[tuple[set[str], set[str]]] = []
    missing = 0
    for session in sessions:
        gold = session.gold
        if gold is None or (gold.useful_spans_user is None and gold.useful_spans_external is None):
            continue
        for position, turn in enumerate(session.turns):
            user = gold.useful_spans_user
            ext = gold.useful_spans_external
            user_marks = _marks(user[position]) if user and position < len(user) else None
            ext_marks = _marks(ext[position]) if ext and position < len(ext) else None
            if user_marks is not None and ext_marks is not None:
                human.append((user_marks, ext_marks))
            label = by.get((session.session_id, turn.index, "spans"))
            if label is None or label.value is None:
                missing += 1
                continue
            picked = {turn.segments[i].text.strip() for i in label.value if i < len(turn.segments)}
            if user_marks is not None:
                vs_user.append((picked, user_marks))
            if ext_marks is not None:
                vs_ext.append((picked, ext_marks))
    if not (vs_user or vs_ext or human):
        return None
    return {
        "vs_user": _prf(vs_user),
        "vs_annotators": _prf(vs_ext),
        "human_reference_user_vs_annotators": _prf(human),
        "missing": missing,
    }


def _satisfaction_values(
    sessions: Sequence[Session], labels: Sequence[Label], read: Callable[[Label], float | None]
) -> tuple[list[float | None], list[float | None], list[float | None], list[float | None]]:
    """Judge/gold pairs at query level and at session level."""
    by = _by_key(labels)
    q_pred: list[float | None] = []
    q_gold: list[float | None] = []
    s_pred: list[float | None] = []
    s_gold: list[float | None] = []
    for session in sessions:
        gold = session.gold
        label = by.get((session.session_id, None, "session"))
        s_pred.append(read(label) if label is not None and label.value is not None else None)
        s_gold.append(gold.session_satisfaction if gold is not None else None)
        for position, turn in enumerate(session.turns):
            label = by.get((session.session_id, turn.index, "turn"))
            q_pred.append(read(label) if label is not None and label.value is not None else None)
            qs = gold.query_satisfaction if gold is not None else None
            q_gold.append(qs[position] if qs is not None and position < len(qs) else None)
    return q_pred, q_gold, s_pred, s_gold


def _corr(x: Sequence[float | None], y: Sequence[float | None], n_boot: int, seed: int) -> dict:
    out = correlations(x, y, n_boot=n_boot, seed=seed)
    return {k: out[k] for k in ("pearson", "spearman", "kendall", "n", "ci95")}


def satisfaction_scores(
    sessions: Sequence[Session],
    labels: Sequence[Label],
    *,
    link_labels: Sequence[Label] | None = None,
    link_source: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Correlations of the judge's satisfaction scores with the users' (``None`` when the
    judge gives no satisfaction scores and there are no link labels)."""
    has_scores = any(lb.key.item in {"turn", "session"} for lb in labels)
    out: dict[str, Any] = {}
    sdcg = sdcg_from_labels(sessions, link_labels) if link_labels is not None else None
    s_gold = [s.gold.session_satisfaction if s.gold else None for s in sessions]
    if sdcg is not None:
        out["sdcg_urge"] = {
            "link_labels": link_source,
            "session_level": _corr(sdcg, s_gold, n_boot, seed),
        }
    if not has_scores:
        return out or None
    readers: dict[str, Callable[[Label], float | None]] = {
        "overall": lambda lb: float(lb.value) if lb.value is not None else None,
        "dimension_mean": lambda lb: lb.extra.get("dimension_mean"),
        "weighted": lambda lb: lb.extra.get("weighted"),
    }
    for name, read in readers.items():
        q_pred, q_gold, s_pred, _ = _satisfaction_values(sessions, labels, read)
        if all(v is None for v in s_pred) and all(v is None for v in q_pred):
            continue
        block: dict[str, Any] = {
            "query_level": _corr(q_pred, q_gold, n_boot, seed),
            "session_level": _corr(s_pred, s_gold, n_boot, seed),
        }
        if sdcg is not None:
            combined = zscore_combine(s_pred, sdcg)
            block["combined_with_sdcg_urge"] = {
                "link_labels": link_source,
                "session_level": _corr(combined, s_gold, n_boot, seed),
            }
        per_type: dict[str, Any] = {}
        for task_type in sorted({s.task_type or "unknown" for s in sessions}):
            subset = [s for s in sessions if (s.task_type or "unknown") == task_type]
            tq, tg, ts, _ = _satisfaction_values(subset, labels, read)
            sg = [s.gold.session_satisfaction if s.gold else None for s in subset]
            per_type[task_type] = {
                "query_level": _corr(tq, tg, n_boot, seed),
                "session_level": _corr(ts, sg, n_boot, seed),
            }
        block["per_task_type"] = per_type
        out[name] = block
    return out


def _turn_scores(sessions: Sequence[Session], labels: Sequence[Label]) -> dict[str, float]:
    """One score per query: the satisfaction label, else the mean of its link labels."""
    by = _by_key(labels)
    links = link_label_map(labels)
    out: dict[str, float] = {}
    for session in sessions:
        for turn in session.turns:
            ident = f"{session.session_id}#{turn.index}"
            label = by.get((session.session_id, turn.index, "turn"))
            if label is not None and label.value is not None:
                out[ident] = float(label.value)
            elif (session.session_id, turn.index) in links:
                values = links[(session.session_id, turn.index)].values()
                out[ident] = sum(values) / len(values)
    return out


def ordering_scores(
    sessions: Sequence[Session], labels: Sequence[Label], *, fraction: float = HARDEST_FRACTION
) -> dict[str, Any] | None:
    """How well the judge finds the hardest queries: the gold ordering is the queries by
    ascending query satisfaction (ties by position), the judge's by its ascending per-query
    score; RBO (p = 0.9, extrapolated, in [0, 1]) compares the hardest ``fraction`` of both
    and Kendall tau the judge's and the gold ordering of those gold-hardest queries."""
    scores = _turn_scores(sessions, labels)
    gold: dict[str, float] = {}
    order_key: dict[str, tuple[int, int]] = {}
    for si, session in enumerate(sessions):
        qs = session.gold.query_satisfaction if session.gold else None
        for position, turn in enumerate(session.turns):
            ident = f"{session.session_id}#{turn.index}"
            order_key[ident] = (si, position)
            if qs is not None and position < len(qs) and qs[position] is not None:
                gold[ident] = float(qs[position])  # type: ignore[arg-type]
    common = [i for i in gold if i in scores]
    if len(common) < 2:
        return None
    depth = max(2, int(math.ceil(fraction * len(common))))
    gold_order = sorted(common, key=lambda i: (gold[i], order_key[i]))
    judge_order = sorted(common, key=lambda i: (scores[i], order_key[i]))
    hardest = gold_order[:depth]
    judged_hardest = sorted(hardest, key=lambda i: (scores[i], order_key[i]))
    return {
        "n_queries": len(common),
        "depth": depth,
        "rbo": rbo(judge_order[:depth], gold_order[:depth], p=0.9),
        "kendall_tau": kendall_tau(judged_hardest, hardest),
        "hardest_gold": hardest,
        "hardest_judge": judge_order[:depth],
    }


def citation_support_scores(
    sessions: Sequence[Session], labels: Sequence[Label]
) -> dict[str, Any] | None:
    """The judge's support verdicts against the gold ones (``None`` without gold support
    labels). Pairs the gold leaves out are not scored; a pair the judge left missing counts
    under ``missing`` with its reason."""
    by = _by_key(labels)
    pred: list[int | None] = []
    gold: list[int] = []
    reasons: dict[str, int] = defaultdict(int)
    judge_turns: list[list[Any]] = []
    gold_turns: list[list[Any]] = []
    for session in sessions:
        gold_statements = gold_cited_statements(session)
        if gold_statements is None or session.gold is None or not session.gold.citation_support:
            continue
        gold_statements_by_turn = iter(gold_statements)
        for position, turn in enumerate(session.turns):
            verdicts = session.gold.citation_support[position]
            judged: dict[tuple[int, int], int | None] = {}
            for s_position, per_link in enumerate(verdicts, start=1):
                for link_id, level in sorted(per_link.items()):
                    label = by.get((session.session_id, turn.index, f"cite:{s_position}:{link_id}"))
                    if label is None or label.value is None:
                        reasons[(label.missing_reason if label else None) or "not judged"] += 1
                        pred.append(None)
                    else:
                        pred.append(int(label.value))
                        judged[(s_position, link_id)] = int(label.value)
                    gold.append(SUPPORT_VALUE[level])
            judge_turns.append(cited_statements(turn, judged))
            gold_turns.append(next(gold_statements_by_turn))
    if not gold:
        return None
    scale = [SUPPORT_VALUE[level] for level in reversed(SUPPORT_LEVELS)]  # 0 none .. 2 full
    paired = [(p, g) for p, g in zip(pred, gold, strict=True) if p is not None]
    measures: dict[str, Any] = {}
    for text in DEFAULT_CITATION_MEASURES:
        measure: Any = parse_measure(text)
        judge_values = [measure.compute([t]) for t in judge_turns]
        gold_values = [measure.compute([t]) for t in gold_turns]
        both = [
            (j, g)
            for j, g in zip(judge_values, gold_values, strict=True)
            if j is not None and g is not None
        ]
        measures[str(measure)] = {
            "judge": measure.compute(judge_turns),
            "gold": measure.compute(gold_turns),
            "n_turns": len(both),
            "mae_per_turn": mae([j for j, _ in both], [g for _, g in both]),
        }
    return {
        "accuracy": sum(p == g for p, g in paired) / len(paired) if paired else None,
        "cohen_kappa": cohen_kappa(pred, gold, labels=scale),
        "cohen_kappa_weighted": cohen_kappa(pred, gold, weights="linear", labels=scale),
        "cohen_kappa_binary": cohen_kappa(
            binarize(pred, threshold=2), binarize(gold, threshold=2), labels=[0, 1]
        ),
        "confusion_matrix": {
            "labels": [level for level in reversed(SUPPORT_LEVELS)],
            "rows": "gold",
            "columns": "judge",
            "matrix": confusion_matrix(pred, gold, labels=scale),
        },
        "measures": measures,
        "n": len(paired),
        "missing": sum(1 for p in pred if p is None),
        "missing_reasons": dict(reasons),
    }


def score_labels(
    sessions: Sequence[Session],
    labels: Sequence[Label],
    *,
    kind: str,
    link_labels: Sequence[Label] | None = None,
    link_source: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Every applicable block of the meta-evaluation for labels of a judge of ``kind``."""
    out: dict[str, Any] = {}
    if kind == "link_usefulness":
        block = link_usefulness_scores(sessions, labels, n_boot=n_boot, seed=seed)
        if block is not None:
            out["link_usefulness"] = block
        link_labels, link_source = labels, "judge"
    if kind == "spans":
        block = spans_scores(sessions, labels)
        if block is not None:
            out["spans"] = block
    if kind in {"satisfaction", "link_usefulness"}:
        block = satisfaction_scores(
            sessions,
            labels,
            link_labels=link_labels,
            link_source=link_source,
            n_boot=n_boot,
            seed=seed,
        )
        if block:
            out["satisfaction"] = block
    if kind == "citation_support":
        block = citation_support_scores(sessions, labels)
        if block is not None:
            out["citation_support"] = block
    if kind in {"satisfaction", "link_usefulness"}:
        ordering = ordering_scores(sessions, labels)
        if ordering is not None:
            out["orderings"] = ordering
    return out


def _is_offline(engine: Any) -> bool:
    return getattr(getattr(engine, "provider", None), "name", "") == "offline"


async def offline_link_labels(
    sessions: Sequence[Session], name: str = DEFAULT_LINK_BASELINE
) -> list[Label]:
    """Link labels from an offline twin, for combining with a satisfaction judge."""
    engine = Engine(OfflineProvider(), quiet=True, progress=False)
    try:
        return await judge_sessions(make_judge(name), sessions, engine)
    finally:
        await engine.aclose()


async def evaluate_judge(
    judge: Judge | str,
    sessions: Sequence[Session],
    engine: Engine,
    *,
    options: Mapping[str, Any] | None = None,
    link_judge: str = DEFAULT_LINK_BASELINE,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Run ``judge`` (a judge or a registry name built with ``options``) on ``sessions``
    through ``engine`` and score it against their gold labels. A satisfaction judge is
    combined with ``sdcg_urge`` from the offline twin of ``link_judge``."""
    if isinstance(judge, str):
        judge = make_judge(judge, **dict(options or {}))
    labels = await judge_sessions(judge, sessions, engine)
    link_labels: list[Label] | None = None
    link_source: str | None = None
    if judge.kind == "satisfaction":
        link_labels = await offline_link_labels(sessions, link_judge)
        link_source = f"offline twin of {link_judge} (baseline)"
    result: dict[str, Any] = {
        "version": META_VERSION,
        "judge": {
            "name": judge.name,
            "kind": judge.kind,
            "options": dict(judge.options),
            "provider": getattr(engine.provider, "name", None),
            "model": engine.model,
            "baseline": _is_offline(engine),
        },
        "n_sessions": len(sessions),
    }
    if _is_offline(engine):
        result["baseline_note"] = BASELINE_NOTE
    result.update(
        score_labels(
            sessions,
            labels,
            kind=judge.kind,
            link_labels=link_labels,
            link_source=link_source,
            n_boot=n_boot,
            seed=seed,
        )
    )
    if judge.kind == "item":
        result["item"] = evaluate_item(sessions, labels)
    elif judge.kind == "rubric":
        result["rubric"] = evaluate_rubric(sessions, labels)
    stats = getattr(judge, "stats", None)
    if stats is not None:
        result["replies"] = stats.rates()
    result["engine"] = engine.stats()
    return result
