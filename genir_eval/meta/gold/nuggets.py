"""The nugget kind's own block of ``meta.json``: each system's mean nugget scores over its
answers, with 95% intervals from a bootstrap over queries (a system is the answers'
``meta.system``, as CrowdRAG's carry it, else the run), and, where the input carries
people's nugget labels (``gold.nugget_assignments``: per turn, each nugget id with
``support``, ``partial_support`` or ``not_support``), the judge's assignments against them
(``people``): Cohen's kappa on "the answer gives the nugget" (support or partial support)
and on the three levels, precision, recall and F1 of the judge's "gives it" against
people's, all with 95% intervals from a bootstrap over queries (never over answers or
nuggets: a query's nuggets and answers are not independent), the same per importance grade,
and prediction-powered means of nugget recall (:mod:`genir_eval.meta.ppi`): people's labels
on the turns they labelled, the judge's on every turn."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.kinds import GoldBlock, GoldContext
from genir_eval.judges.nuggets.kind import turn_scores
from genir_eval.meta.ppi import ppi_block
from genir_eval.meta.resample import session_bootstrap
from genir_eval.meta.stats import cohen_kappa
from genir_eval.records import NUGGET_ASSIGNMENTS

__all__ = ["system_scores_block", "gives", "f1_gives", "agreement_figures"]


def gives(assignment: str) -> int:
    """1 when the assignment says the answer gives the nugget (support or partial)."""
    return int(assignment in ("support", "partial_support"))


def f1_gives(pred: Sequence[str], gold: Sequence[str]) -> dict[str, float | None]:
    """Precision, recall and F1 of the judge's "gives it" against people's."""
    tp = sum(1 for p, g in zip(pred, gold, strict=True) if gives(p) and gives(g))
    said, real = sum(gives(p) for p in pred), sum(gives(g) for g in gold)
    precision = tp / said if said else None
    recall = tp / real if real else None
    f1 = 2 * tp / (said + real) if said + real else None
    return {"precision": precision, "recall": recall, "f1": f1}


def _kappa2(pred: Sequence[str], gold: Sequence[str]) -> float | None:
    return cohen_kappa([gives(p) for p in pred], [gives(g) for g in gold], labels=[0, 1])


def _kappa3(pred: Sequence[str], gold: Sequence[str]) -> float | None:
    return cohen_kappa(list(pred), list(gold), labels=list(NUGGET_ASSIGNMENTS))


def _f1(pred: list[str], gold: list[str]) -> float | None:
    return f1_gives(pred, gold)["f1"]


def agreement_figures(
    pred: Sequence[str], gold: Sequence[str], queries: Sequence[str], *, n_boot: int, seed: int
) -> dict[str, Any]:
    """The judge's assignments ``pred`` against people's ``gold`` (one pair a nugget and
    answer, ``queries`` the query of each): kappas, precision/recall/F1 of "gives it",
    exact agreement, each with its 95% interval over queries."""
    out: dict[str, Any] = {
        "n": len(pred),
        "queries": len(set(queries)),
        "kappa": _kappa2(pred, gold),
        "kappa_3": _kappa3(pred, gold),
        **f1_gives(pred, gold),
        "agreement": sum(p == g for p, g in zip(pred, gold, strict=True)) / len(pred)
        if pred
        else None,
        "people_give": sum(gives(g) for g in gold) / len(gold) if gold else None,
        "judge_gives": sum(gives(p) for p in pred) / len(pred) if pred else None,
        "ci95": {},
    }
    for name, statistic in (("kappa", _kappa2), ("kappa_3", _kappa3), ("f1", _f1)):
        out["ci95"][name] = session_bootstrap(
            statistic, list(pred), list(gold), list(queries), n_boot=n_boot, seed=seed
        )
    return out


class _SystemScores:
    """Each system's turn scores, by query, and the (nugget, answer) pairs people labelled,
    gathered window by window."""

    def __init__(self, n_boot: int, seed: int) -> None:
        self.n_boot, self.seed = n_boot, seed
        self.values: dict[str, dict[str, list[tuple[str, float]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        # (query, grade, the judge's assignment, people's)
        self.pairs: list[tuple[str, str, str, str]] = []
        # per judged turn: the judge's nugget recall and people's (None: not labelled)
        self.recall: list[tuple[float, float | None]] = []

    def add(self, sessions: Sequence[Any], labels: Sequence[Any], _links: Any) -> None:
        by_id = {s.session_id: s for s in sessions}
        for label in labels:
            session = by_id.get(label.key.session_id)
            if label.key.item != "nuggets" or session is None:
                continue
            system = str(session.meta.get("system") or "run")
            query = f"{label.key.session_id}#{label.key.turn}"
            if isinstance(label.value, Mapping):
                query = str(label.value.get("qid") or query)
            scores = turn_scores(label.value)
            for name, value in scores.items():
                if value is not None:
                    self.values[system][name].append((query, value))
            self._people(session, label, query, scores["nugget_recall"])

    def _people(self, session: Any, label: Any, query: str, judged: float | None) -> None:
        """The turn's nuggets people labelled, paired with the judge's assignments."""
        if judged is None or not isinstance(label.value, Mapping):
            return
        gold = getattr(session.gold, "nugget_assignments", None) if session.gold else None
        given = gold[label.key.turn - 1] if gold and label.key.turn else None
        nuggets = [n for n in label.value.get("nuggets") or [] if isinstance(n, Mapping)]
        if not given:
            self.recall.append((judged, None))
            return
        people = []
        for nugget in nuggets:
            said = given.get(str(nugget.get("id")))
            if said is None:
                continue
            grade = nugget.get("grade")
            key = f"{grade:g}" if isinstance(grade, (int, float)) else str(nugget["importance"])
            self.pairs.append((query, key, str(nugget["assignment"]), said))
            people.append({"importance": nugget["importance"], "assignment": said})
        # people's recall for the turn only when they labelled every one of its nuggets
        whole = len(people) == len(nuggets)
        self.recall.append(
            (judged, turn_scores({"nuggets": people})["nugget_recall"] if whole else None)
        )

    def people(self) -> dict[str, Any] | None:
        if not self.pairs:
            return None
        queries = [q for q, _, _, _ in self.pairs]
        pred = [p for _, _, p, _ in self.pairs]
        gold = [g for _, _, _, g in self.pairs]
        block = agreement_figures(pred, gold, queries, n_boot=self.n_boot, seed=self.seed)
        grades: dict[str, Any] = {}
        for grade in sorted({k for _, k, _, _ in self.pairs}):
            chosen = [row for row in self.pairs if row[1] == grade]
            grades[grade] = agreement_figures(
                [p for _, _, p, _ in chosen],
                [g for _, _, _, g in chosen],
                [q for q, _, _, _ in chosen],
                n_boot=self.n_boot,
                seed=self.seed,
            )
        block["by_importance"] = grades
        block["ppi"] = ppi_block(
            [j for j, _ in self.recall],
            [g for _, g in self.recall],
            metric="nugget_recall",
            bounds=(0.0, 1.0),
        )
        return block

    def result(self) -> dict[str, Any] | None:
        def mean(values: list[Any], _gold: list[Any]) -> float | None:
            return sum(values) / len(values) if values else None

        systems: dict[str, Any] = {}
        for system, by_name in sorted(self.values.items()):
            block: dict[str, Any] = {"ci95": {}}
            for name, pairs in by_name.items():
                values = [v for _, v in pairs]
                block[name] = mean(values, [])
                block["ci95"][name] = session_bootstrap(
                    mean, values, values, [q for q, _ in pairs], n_boot=self.n_boot, seed=self.seed
                )
                block.setdefault("answers", len(values))
            systems[system] = block
        people = self.people()
        if not systems and people is None:
            return None
        if people is None:
            return {"systems": systems}
        # n: the pairs compared with people, as every block that met gold counts them
        return {"systems": systems, "people": people, "n": people["n"]}


def system_scores_block(name: str, context: GoldContext) -> GoldBlock:
    """Each system's mean nugget scores with their intervals, and the judge against people's
    nugget labels where the input has them, gathered window by window."""
    gathered = _SystemScores(context.n_boot, context.seed)
    return GoldBlock(name, gathered.add, gathered.result)
