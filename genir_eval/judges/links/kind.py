"""The link usefulness kind: each cited link graded 0-3 (``link:<id>`` labels).

Its labels feed the link measures (``sdcg_urge`` and the scenario's others, through
statement usefulness) and, from them, the satisfaction-style comparisons with gold; they
meet the experts' link labels (``gold.link_usefulness``) in the ``link_usefulness`` block.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from genir_eval.figures import number_text
from genir_eval.judges.kinds import (
    Interval,
    JudgeCell,
    JudgeKind,
    JudgeTable,
    calibration_line,
    interval_text,
)
from genir_eval.judges.offline.reasons import LINK_WORDS
from genir_eval.kind_names import LINK_USEFULNESS
from genir_eval.records import LINK_USEFULNESS as EVIDENCE

__all__ = ["LinkUsefulness", "KIND"]


class LinkUsefulness(JudgeKind):
    name = LINK_USEFULNESS
    evidence = EVIDENCE
    labels_links = True
    feeds_link_measures = True
    verdict_words = LINK_WORDS
    verdict_out_of = 3
    own_score = ("0-3", "the judge's link labels, averaged")

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = [
            [
                JudgeCell(judge),
                m.get("n"),
                m.get("missing"),
                Interval.of(m, "spearman"),
                m.get("cohen_kappa_binary"),
                m.get("cohen_kappa_weighted"),
                m.get("mae"),
                m.get("pairwise_auc"),
            ]
            for judge, m in blocks.items()
        ]
        return JudgeTable(
            "Link judges vs expert labels (0-3; kappa binary on 2-3, weighted linear)",
            ("", "n", "missing", "spearman", "kappa bin", "kappa w", "mae", "auc"),
            rows,
        )

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        if not blocks:
            return None
        rows = [
            [
                JudgeCell(judge),
                m.get("n"),
                m.get("missing"),
                Interval.of(m, "spearman"),
                Interval.of(m, "kendall"),
                m.get("cohen_kappa_binary"),
                m.get("cohen_kappa_weighted"),
                m.get("mae"),
                m.get("pairwise_auc"),
            ]
            for judge, m in blocks.items()
        ]
        head: tuple[str, ...] = (
            "link judge",
            "n",
            "missing",
            "spearman [95% CI]",
            "kendall [95% CI]",
        )
        head += ("kappa (binary)", "kappa (weighted)", "MAE", "AUC")
        return JudgeTable(
            "",
            head,
            rows,
            key="link-agreement",
            note="Link labels (0-3) against the experts': kappa binary on useful (2-3) vs "
            "not, weighted linearly on 0-3; AUC over pairs of links with different gold "
            "labels.",
        )

    def meta_lines(self, result: Mapping[str, Any]) -> list[str]:
        n = partial(number_text, missing="n/a")
        link = result.get(self.name)
        if not link:
            return []
        ci = link["ci95"]["spearman"] or (None, None)
        return [
            f"link usefulness: spearman {n(link['spearman'])} [{n(ci[0])}, {n(ci[1])}]"
            f"  kendall {n(link['kendall'])}  kappa(bin) {n(link['cohen_kappa_binary'])}"
            f"  kappa(w) {n(link['cohen_kappa_weighted'])}  mae {n(link['mae'])}"
            f"  auc {n(link['pairwise_auc'])}  n {link['n']}  missing {link['missing']}"
        ]

    def quality_lines(self, block: Mapping[str, Any]) -> list[str]:
        link = block.get(self.name) or {}
        lines = calibration_line("link labels", link.get("calibration"))
        expected = link.get("expected")
        if expected:
            n = number_text
            lines.append(
                f"link usefulness, expected label: spearman {n(expected.get('spearman'))}"
                f"{interval_text((expected.get('ci95') or {}).get('spearman'))}"
                f"  kendall {n(expected.get('kendall'))}  auc {n(expected.get('pairwise_auc'))}"
                f"  mae {n(expected.get('mae'))}  kappa(w) "
                f"{n(expected.get('cohen_kappa_weighted'))}  mean entropy "
                f"{n(expected.get('mean_entropy_bits'), 2)} bits  n {expected.get('n')}"
            )
            lines += calibration_line("expected labels", expected.get("calibration"))
        return lines


KIND = LinkUsefulness()
