"""The citation support kind: a support verdict (2 full, 1 partial, 0 none) per statement
and cited link (``cite:<statement>:<link>`` labels), feeding the citation measures and
compared with ``gold.citation_support``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from genir_eval.figures import number_text
from genir_eval.judges.kinds import (
    JudgeCell,
    JudgeKind,
    JudgeTable,
)
from genir_eval.kind_names import CITATION_SUPPORT
from genir_eval.records import CITATION_SUPPORT as EVIDENCE
from genir_eval.records import SUPPORT_VALUE

__all__ = ["CitationSupport", "KIND"]


class CitationSupport(JudgeKind):
    name = CITATION_SUPPORT
    evidence = EVIDENCE
    judges_citations = True
    verdict_words = {value: level for level, value in SUPPORT_VALUE.items()}

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = [
            [
                JudgeCell(judge),
                m.get("n"),
                m.get("missing"),
                m.get("accuracy"),
                m.get("cohen_kappa"),
                m.get("cohen_kappa_weighted"),
                m.get("cohen_kappa_binary"),
            ]
            for judge, m in blocks.items()
        ]
        return JudgeTable(
            "Citation support judges vs gold labels (full / partial / none)",
            ("", "pairs", "missing", "accuracy", "kappa", "kappa w", "kappa full"),
            rows,
        )

    def meta_lines(self, result: Mapping[str, Any]) -> list[str]:
        n = partial(number_text, missing="n/a")
        support = result.get(self.name)
        if not support:
            return []
        lines = [
            f"citation support: accuracy {n(support['accuracy'])} kappa "
            f"{n(support['cohen_kappa'])} kappa(full) "
            f"{n(support['cohen_kappa_binary'])} n {support['n']} missing {support['missing']}"
        ]
        for name, block in (support.get("measures") or {}).items():
            lines.append(
                f"  {name}: judge {n(block['judge'])} gold {n(block['gold'])} "
                f"(pooled over the pairs; per-turn MAE {n(block['mae_per_turn'])} over "
                f"{block['n_turns']} turns)"
            )
        return lines


KIND = CitationSupport()
