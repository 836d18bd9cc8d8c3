"""The nugget kind's own block of ``meta.json``: each system's mean TREC 2024 RAG nugget
scores over its answers, with 95% intervals from a bootstrap over queries (a system is the
answers' ``meta.system``, as CrowdRAG's carry it, else the run)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from genir_eval.judges.kinds import GoldBlock, GoldContext
from genir_eval.judges.nuggets.kind import turn_scores
from genir_eval.meta.resample import session_bootstrap

__all__ = ["system_scores_block"]


class _SystemScores:
    """Each system's turn scores, by query, gathered window by window."""

    def __init__(self, n_boot: int, seed: int) -> None:
        self.n_boot, self.seed = n_boot, seed
        self.values: dict[str, dict[str, list[tuple[str, float]]]] = defaultdict(
            lambda: defaultdict(list)
        )

    def add(self, sessions: Sequence[Any], labels: Sequence[Any], _links: Any) -> None:
        system = {s.session_id: str(s.meta.get("system") or "run") for s in sessions}
        for label in labels:
            if label.key.item != "nuggets" or label.key.session_id not in system:
                continue
            query = f"{label.key.session_id}#{label.key.turn}"
            if isinstance(label.value, Mapping):
                query = str(label.value.get("qid") or query)
            for name, value in turn_scores(label.value).items():
                if value is not None:
                    self.values[system[label.key.session_id]][name].append((query, value))

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
        return {"systems": systems} if systems else None


def system_scores_block(name: str, context: GoldContext) -> GoldBlock:
    """Each system's mean nugget scores with their intervals, gathered window by window."""
    gathered = _SystemScores(context.n_boot, context.seed)
    return GoldBlock(name, gathered.add, gathered.result)
