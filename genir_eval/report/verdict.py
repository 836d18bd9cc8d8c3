"""A run's verdict: the few lines a reader decides on, and what to look at next.

Read from the run folder alone and worded by :mod:`genir_eval.decide`'s rules: the headline
against the users' satisfaction (session level first, Spearman), or on its own with its scale
when the input has no ratings; the evidence measured elsewhere that it tracks people; every
quality session score against the users' satisfaction; the headline and every quality turn
score against the users' thumbs; each citation judge's support counts. Grounding scores
other than the headline are left to their tables. The terminal summary prints
:func:`verdict_lines`, ``report.html`` :func:`verdict_html`: the same words from the same
:class:`RunVerdict`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from genir_eval.decide import (
    MIN_N,
    Decision,
    Verdict,
    figure_words,
    next_steps,
    relation,
    score_words,
)
from genir_eval.report.card import grounding_scores, headline_card
from genir_eval.report.glossary import describe_score
from genir_eval.report.scores import score_summaries
from genir_eval.report.views import esc, headline_score
from genir_eval.rundir.folder import Run

__all__ = ["RunVerdict", "run_verdict", "verdict_lines", "verdict_html", "VERDICT_TITLE"]

VERDICT_TITLE = f"Verdict (95% intervals; fewer than {MIN_N} values: no interval)"
NEXT_TITLE = "What to look at next"
#: The quality scores each list names beside the headline, at most (their tables follow).
MAX_SCORES = 3
_LEVELS = (("session", "session satisfaction"), ("turn", "query satisfaction"))
_SUPPORT = ("full", "partial", "none")
_SUPPORT_WORDS = {"full": "fully supported", "partial": "partly supported", "none": "not supported"}


@dataclass(frozen=True)
class RunVerdict:
    decisions: tuple[Decision, ...]
    next: tuple[str, ...]


def _correlation(name: str, entry: Mapping[str, object], what: str, subject: str) -> Decision:
    n = entry.get("n")
    value = entry.get("spearman")
    ci = (entry.get("ci95") or {}).get("spearman")  # type: ignore[attr-defined]
    return Decision(
        subject,
        relation("spearman", value, ci, n),
        figure_words("spearman", value, ci, n),
    )


def _thumbs(name: str, entry: Mapping[str, object], subject: str) -> Decision:
    """A turn score against the thumbs: the AUC's verdict, or the point-biserial r's when
    only that one is decided (an interval clear of chance)."""
    n = entry.get("n")
    intervals = entry.get("ci95") or {}
    against = "users"
    verdicts = {
        key: relation(key, entry.get(key), intervals.get(key), n, against=against)  # type: ignore[attr-defined]
        for key in ("auc", "point_biserial")
    }
    decided = [k for k, v in verdicts.items() if v.severity in ("good", "bad")]
    key = decided[0] if decided else "auc"
    figures = "; ".join(
        figure_words(k, entry.get(k), intervals.get(k), None)  # type: ignore[attr-defined]
        for k in ("auc", "point_biserial")
        if entry.get(k) is not None
    )
    return Decision(subject, verdicts[key], f"{figures} (n = {n})")


def _quality(run: Run, names: list[str], headline: str | None) -> list[str]:
    grounding = set(grounding_scores(run, names))
    return [n for n in names if n not in grounding and n != headline][:MAX_SCORES]


def _headline_alone(run: Run, headline: str) -> Decision | None:
    summary = next((s for s in score_summaries(run, "session") if s.name == headline), None)
    if summary is None or summary.mean is None:
        return None
    described = describe_score(headline, run)
    return Decision(
        f"headline {headline}",
        Verdict("no users' ratings in the input, a score on its own", "info"),
        score_words(
            summary.mean,
            summary.ci,
            summary.n,
            scale=described.range.split(":")[0],
            higher_is_better=described.higher_is_better,
            unit="sessions",
        ),
    )


def _citations(run: Run) -> list[Decision]:
    counts: dict[str, Counter[str]] = {}
    for row in run.iter_rows("citations"):
        counts.setdefault(str(row.get("judge")), Counter())[str(row.get("support"))] += 1
    out = []
    for judge, by in counts.items():
        total = sum(by.values())
        parts = ", ".join(f"{by[s]} {_SUPPORT_WORDS[s]}" for s in _SUPPORT)
        missing = total - sum(by[s] for s in _SUPPORT)
        parts += f", {missing} missing" if missing else ""
        out.append(
            Decision(
                f"{judge}'s citations",
                Verdict(f"{by['full']} of {total} fully supported", "info"),
                parts,
            )
        )
    return out


def run_verdict(run: Run) -> RunVerdict:
    """The run's decisions and next steps (empty for a run without a score)."""
    status = run.info.get("status")
    if isinstance(status, Mapping) and status.get("ok", True) is False:
        return RunVerdict((), ())  # a failed run's scores are not a result
    meta = run.meta or {}
    headline = headline_score(run)
    correlations = meta.get("correlations") or {}
    decisions: list[Decision] = []
    sizes: list[int] = []
    for level, what in _LEVELS:
        entry = (correlations.get(level) or {}).get(headline)
        if isinstance(entry, Mapping):
            subject = f"headline {headline} vs the users' {what}"
            decisions.append(_correlation(str(headline), entry, what, subject))
            if isinstance(entry.get("n"), int):
                sizes.append(int(entry["n"]))
    alone = _headline_alone(run, headline) if headline is not None and not decisions else None
    card = headline_card(run)
    evidence: list[Decision] = []
    # the evidence measured elsewhere when this run has no figure of its own (the card,
    # printed under the verdict, lists it all)
    if card is not None and not decisions:
        best = max(card.figures, key=lambda f: (f.tracks, f.value - f.chance), default=None)
        evidence.append(
            Decision(
                f"headline {card.score}, measured before on other data",
                relation(best.statistic, best.value, best.ci95, best.n, against="people")
                if best is not None
                else Verdict("never measured against people", "info"),
                f"{figure_words(best.statistic, best.value, best.ci95, best.n)}; {best.data}"
                if best is not None
                else "",
            )
        )
    if alone is not None:
        decisions.append(alone)
    session = correlations.get("session") or {}
    for name in _quality(run, list(session), headline):
        what = "session satisfaction"
        decisions.append(_correlation(name, session[name], what, f"{name} vs the users' {what}"))
        if isinstance(session[name].get("n"), int):
            sizes.append(int(session[name]["n"]))
    thumbs = (meta.get("feedback") or {}).get("turn") or {}
    names = [headline] if headline in thumbs else []
    names += _quality(run, list(thumbs), headline)
    for name in names:
        decisions.append(_thumbs(str(name), thumbs[str(name)], f"{name} vs the users' thumbs"))
        if isinstance(thumbs[str(name)].get("n"), int):
            sizes.append(int(thumbs[str(name)]["n"]))
    decisions += _citations(run)
    tracks_here = any(
        d.verdict.severity == "good"
        and d.subject.startswith((f"headline {headline} vs", f"{headline} vs"))
        for d in decisions
    )
    steps = next_steps(
        decisions,
        headline=headline,
        headline_tracks=tracks_here or (card is not None and card.tracks),
        headline_grounding=card is not None and card.grounding,
        missing=run.failures_total,
        smallest_n=min(sizes) if sizes else None,
    )
    # the evidence measured elsewhere follows the headline's own figures
    at = sum(1 for d in decisions if d.subject.startswith(f"headline {headline}"))
    return RunVerdict(tuple(decisions[:at] + evidence + decisions[at:]), tuple(steps))


def verdict_lines(verdict: RunVerdict) -> list[str]:
    """The verdict as the terminal prints it."""
    if not verdict.decisions:
        return []
    lines = [VERDICT_TITLE, *(f"  {d.text()}" for d in verdict.decisions)]
    if verdict.next:
        lines += [NEXT_TITLE, *(f"  {i}. {step}" for i, step in enumerate(verdict.next, 1))]
    return lines


def verdict_html(verdict: RunVerdict) -> str:
    """The verdict as ``report.html`` shows it: the same words, each line marked with its
    severity."""
    if not verdict.decisions:
        return ""
    items = "".join(
        f"<li class='verdict-line {d.verdict.severity}' data-severity='{d.verdict.severity}'>"
        f"{esc(d.subject)}: <b>{esc(d.verdict.words)}</b>"
        + (f": {esc(d.figure)}" if d.figure else "")
        + "</li>"
        for d in verdict.decisions
    )
    steps = "".join(f"<li>{esc(step)}</li>" for step in verdict.next)
    return (
        f"<div id='run-verdict'><h3>{esc(VERDICT_TITLE)}</h3><ul>{items}</ul>"
        + (f"<h3>{NEXT_TITLE}</h3><ol id='next-steps'>{steps}</ol>" if steps else "")
        + "</div>"
    )
