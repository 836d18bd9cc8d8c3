"""The agreement figures as text lines (``genir-eval label agreement``, ``meta --labels``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genir_eval.figures import number_text

__all__ = ["agreement_lines"]


def _n(value: Any) -> str:
    return "-" if value is None else number_text(value)


def _interval(block: Mapping[str, Any] | None) -> str:
    if not block:
        return "-"
    lo, hi = block["ci"]
    return f"{_n(block['estimate'])} [{_n(lo)}, {_n(hi)}]"


def agreement_lines(figures: Mapping[str, Any]) -> list[str]:
    lines = []
    for q in figures["queues"]:
        alpha = q["between_people"]
        lines.append(
            f"{q['queue']}: {q['labelled']} of {q['items']} items labelled by people "
            f"({q['labels']} labels); between people: Krippendorff's alpha {_n(alpha['alpha'])} "
            f"on {alpha['items']} items" + (f" ({alpha['reason']})" if alpha.get("reason") else "")
        )
        for j in q["judges"]:
            ppi = j["ppi"]
            lines.append(
                f"  {j['judge']}: n {j['n']}, kappa(linear) {_n(j['kappa_linear'])}, "
                f"mae {_n(j['mae'])}; people's mean of the labelled "
                f"{_interval(j['people_mean'])}, PPI mean of all items "
                f"{_interval(ppi if ppi.get('ci') else None)} from the random sample "
                f"(n {ppi['n_sample']})" + (f" ({ppi['reason']})" if ppi.get("reason") else "")
            )
    return lines
