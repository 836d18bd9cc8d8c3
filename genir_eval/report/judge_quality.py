"""How far a judge's figures can be trusted: collapse flags, expected labels, calibration, PPI.

One place renders these blocks of a judge's meta-evaluation (written by
:func:`genir_eval.meta.evaluate.score_labels`, the same in ``genir-eval meta`` and in a
run's ``meta.json``): :func:`quality_lines` as plain text for the ``meta`` command and the
run summary, :func:`quality_section` as an HTML fragment for the report (every value is
escaped).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from genir_eval.figures import number_text as _num
from genir_eval.judges.kinds import interval_text as _interval
from genir_eval.judges.kinds import judge_kinds
from genir_eval.meta.decide import noise_words

__all__ = [
    "quality_lines",
    "quality_section",
    "judge_flags",
    "shared_ppi_reason",
    "SECTION_TITLE",
]


def judge_flags(block: Mapping[str, Any]) -> tuple[list[str], str]:
    """The degeneracy flags of a judge's block and the sentence explaining them."""
    degenerate = block.get("degenerate") or {}
    return list(degenerate.get("flags") or []), str(degenerate.get("note") or "")


def shared_ppi_reason(judges: Mapping[str, Any] | None) -> str | None:
    """The reason for no PPI mean that every judge with a PPI block gives, when more than one
    does (the URGE sample: every session carries gold): said once under the judges rather than
    once per judge."""
    reasons = [
        str(block["ppi"].get("reason") or "")
        for block in (judges or {}).values()
        if isinstance(block, Mapping) and isinstance(block.get("ppi"), Mapping)
    ]
    if len(reasons) > 1 and reasons[0] and len(set(reasons)) == 1:
        return reasons[0]
    return None


def _ppi_lines(ppi: Mapping[str, Any], said: str | None = None) -> list[str]:
    metric = ppi.get("metric")
    lines = [
        f"mean {metric}: judge {_num(ppi.get('judge_mean'))} over every judged session"
        + (
            f"; gold {_num(ppi['gold_mean']['estimate'])}{_interval(ppi['gold_mean']['ci'])}"
            f" (n {ppi['gold_mean']['n_labelled']})"
            if ppi.get("gold_mean")
            else ""
        )
    ]
    if ppi.get("judge_scale"):
        lines.append(f"  (judge on the users' scale: {ppi['judge_scale']})")
    for key, name in (("ppi", "PPI"), ("ppi_tuned", "PPI++")):
        est = ppi.get(key)
        if est:
            weight = (
                f", weight {_num(est.get('weight'), 2)}" if est.get("weight") is not None else ""
            )
            lines.append(
                f"  {name} {_num(est['estimate'])}{_interval(est['ci'])} "
                f"({est['n_labelled']} with gold + {est['n_unlabelled']} without{weight})"
            )
    if ppi.get("reason") and ppi["reason"] != said:
        lines.append(f"  PPI: {ppi['reason']}")
    simulated = ppi.get("simulated")
    if simulated:
        cov, width = simulated["coverage"], simulated["mean_width"]
        lines.append(
            f"  as if {simulated['labelled']} sessions had gold ({simulated['splits']} draws): "
            f"coverage of the {simulated['target']} ({_num(simulated['target_mean'])}) "
            f"PPI {_num(cov['ppi'], 2)}, PPI++ {_num(cov['ppi_tuned'], 2)}, gold only "
            f"{_num(cov['gold_mean'], 2)}; mean width {_num(width['ppi'])}, "
            f"{_num(width['ppi_tuned'])}, {_num(width['gold_mean'])}"
        )
    return lines


def quality_lines(block: Mapping[str, Any], *, said: str | None = None) -> list[str]:
    """Plain-text lines for one judge's block: flags, expected labels, calibration, PPI
    (without its reason for no PPI mean when that is ``said`` once for every judge)."""
    lines: list[str] = []
    flags, note = judge_flags(block)
    if flags:
        lines.append(f"COLLAPSED ({', '.join(flags)}): {note}")
    for kind in judge_kinds():
        lines += kind.quality_lines(block)
    ppi = block.get("ppi")
    if ppi:
        lines += _ppi_lines(ppi, said)
    noise = block.get("noise")
    if isinstance(noise, Mapping):
        lines.append(noise_words(noise))
    return lines


#: The report section's title.
SECTION_TITLE = "Judge quality: collapse, expected labels, calibration, prediction-powered means"


def quality_section(judges: Mapping[str, Any] | None) -> str | None:
    """The report section's body for a run's ``meta["judges"]``: each judge's quality lines
    (escaped), a collapsed judge's heading marked ``class="bad"``; ``None`` (the section is
    left out) when no judge has any."""
    items = []
    said = shared_ppi_reason(judges)
    for judge_id, block in (judges or {}).items():
        lines = quality_lines(block, said=said) if isinstance(block, Mapping) else []
        if not lines:
            continue
        flags, _ = judge_flags(block)
        css = " class='bad'" if flags else ""
        body = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        items.append(f"<h3{css}>{html.escape(str(judge_id))}</h3><ul>{body}</ul>")
    if not items:
        return None
    if said:
        items.append(f"<p class='muted' id='ppi-note'>PPI, every judge: {html.escape(said)}</p>")
    return "".join(items)
