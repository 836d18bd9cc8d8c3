"""The satisfaction kind: a 1-10 rating of each turn (item ``turn``) and of the session
(item ``session``), compared with the users' query and session satisfaction."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from genir_eval.figures import number_text
from genir_eval.judges.kinds import JudgeKind, calibration_line
from genir_eval.kind_names import SATISFACTION
from genir_eval.records import SATISFACTION as EVIDENCE

__all__ = ["Satisfaction", "KIND"]


class Satisfaction(JudgeKind):
    name = SATISFACTION
    evidence = EVIDENCE
    own_items = frozenset({SATISFACTION})
    combines_with_link_labels = True
    own_score = (
        "1-10",
        "the judge's satisfaction rating of a turn; a session's value is the judge's rating "
        "of the whole session, else its turn ratings aggregated",
    )

    def meta_lines(self, result: Mapping[str, Any]) -> list[str]:
        n = partial(number_text, missing="n/a")
        lines = []
        for name, block in (result.get(self.name) or {}).items():
            for level in ("query_level", "session_level"):
                if level in block:
                    b = block[level]
                    lines.append(
                        f"satisfaction {name} {level}: pearson {n(b['pearson'])} "
                        f"spearman {n(b['spearman'])} kendall {n(b['kendall'])} n {b['n']}"
                    )
            combined = block.get("combined_with_sdcg_urge")
            if combined:
                b = combined["session_level"]
                lines.append(
                    f"satisfaction {name} + sdcg_urge (z-score): pearson {n(b['pearson'])} "
                    f"spearman {n(b['spearman'])} n {b['n']}"
                )
        return lines

    def quality_lines(self, block: Mapping[str, Any]) -> list[str]:
        lines: list[str] = []
        for name, sat in (block.get(self.name) or {}).items():
            if name not in {"overall", "expected"}:
                continue
            calibration = sat.get("calibration") if isinstance(sat, Mapping) else None
            if isinstance(calibration, Mapping):
                for level in ("query_level", "session_level"):
                    lines += calibration_line(
                        f"satisfaction {name} {level}", calibration.get(level)
                    )
        return lines


KIND = Satisfaction()
