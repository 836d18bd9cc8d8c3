"""The report's section on people's preferences: every score's pair agreement (meta.json's
``preferences`` block, :mod:`genir_eval.meta.preferences`), one table per criterion and level,
and which evidence the offline twins read."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

from genir_eval.rundir.folder import Run

__all__ = ["preferences_section", "preference_criteria", "agreement_text"]


def preference_criteria(meta: Mapping[str, Any] | None) -> list[str]:
    """The criteria people's preferences were given on, the overall ones first."""
    table = (meta or {}).get("preferences") or {}
    first = [c for c in ("overall", "quality_overall") if c in table]
    return first + sorted(c for c in table if c not in first)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def agreement_text(entry: Mapping[str, Any], missing: str = "–") -> str:
    """An agreement table row's share of decided pairs as a percent, with its interval when
    it has one (``61.5% [48.1%, 73.4%]``); ``missing`` without one."""
    value = entry.get("agreement")
    if value is None:
        return missing
    interval = entry.get("ci95")
    shown = f"{value:.1%}"
    return f"{shown} [{interval[0]:.1%}, {interval[1]:.1%}]" if interval else shown


def _number(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _level_table(
    table_id: str, block: Mapping[str, Mapping[str, Any]], marked: Callable[[str], str]
) -> str:
    rows = "".join(
        f"<tr><td>{marked(name)}{' (lower is better)' if entry.get('lower_is_better') else ''}"
        f"</td><td class='num'>{_e(_number(entry.get('decided')))}</td>"
        f"<td class='num'>{_e(agreement_text(entry))}</td>"
        f"<td class='num'>{_e(_number(entry.get('score_ties')))}</td>"
        f"<td class='num'>{_e(_number(entry.get('gold_ties')))}</td>"
        f"<td class='num'>{_e(_number(entry.get('kappa')))}</td>"
        f"<td class='num'>{_e(_number(entry.get('missing')))}</td></tr>"
        for name, entry in block.items()
    )
    return (
        f"<div class='scroll'><table id='{_e(table_id)}'><tr><th>score</th>"
        "<th class='num'>decided pairs</th><th class='num'>agreement [95% CI]</th>"
        "<th class='num'>score ties</th><th class='num'>people's ties</th>"
        "<th class='num'>kappa a/tie/b</th><th class='num'>missing</th></tr>"
        f"{rows}</table></div>"
    )


def preferences_section(run: Run, marked: Callable[[str], str]) -> str | None:
    """The section's HTML, or ``None`` when the run was given no preferences; ``marked``
    renders a score's name (escaped, with the baseline mark)."""
    meta = run.meta or {}
    criteria = preference_criteria(meta)
    if not criteria:
        return None
    evidence = run.info.get("offline_evidence") or "lexical"
    parts = [
        "<p class='muted'>People chose the better of two answers (or neither). A score agrees "
        "with a pair when it ranks people's choice higher (lower, for a score where lower is "
        "better); agreement is the share of the pairs people decided that the score also "
        "separates, with a 95% bootstrap interval over queries; the pairs the score ties are "
        "counted apart, and kappa compares the two on a/tie/b over every pair. "
        f"The offline twins read {_e(evidence)} evidence.</p>"
    ]
    for criterion in criteria:
        table = meta["preferences"][criterion]
        parts.append(f"<h3>{_e(criterion)} ({_e(table.get('rows', 0))} pairs)</h3>")
        if table.get("unknown"):
            parts.append(
                f"<p class='muted'>{_e(table['unknown'])} pairs name a session this run does "
                "not have.</p>"
            )
        for level in ("session", "turn"):
            block = table.get(level) or {}
            if block:
                parts.append(f"<h4>{level} scores</h4>")
                parts.append(_level_table(f"preferences-{criterion}-{level}", block, marked))
    return "".join(parts)
