"""A run's verdict: the few lines a reader decides on, and what to look at next.

Read from the run folder alone and worded by :mod:`genir_eval.meta.decide`'s rules: the headline
against the users' satisfaction (session level first, Spearman), or on its own with its scale
when the input has no ratings; the evidence measured elsewhere that it tracks people; every
quality session score against the users' satisfaction; the headline and every quality turn
score against the users' thumbs; each citation judge's support counts; each judge against
the annotators' labels where the input has them (graded labels by Spearman; marked spans by
F1, beside how close the users' own come). Scores of one part of an answer (link
usefulness, citation support, nuggets) other than the headline are left to their tables. The terminal summary prints
:func:`verdict_lines`, ``report.html`` :func:`verdict_html`: the same words from the same
:class:`RunVerdict`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from genir_eval.figures import number_text
from genir_eval.meta.decide import (
    MIN_N,
    Decision,
    Verdict,
    figure_words,
    interval_text,
    next_steps,
    relation,
    score_words,
    statistic_label,
)
from genir_eval.report.card import HeadlineCard, headline_card, part_scores, score_kind_words
from genir_eval.report.glossary import describe_score
from genir_eval.report.scores import score_summaries
from genir_eval.report.views import esc, headline_score
from genir_eval.report.worst import worst_sessions
from genir_eval.rundir.folder import Run

__all__ = [
    "RunVerdict",
    "run_verdict",
    "verdict_lines",
    "verdict_html",
    "verdict_lede",
    "severity_class",
    "VERDICT_TITLE",
]

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


def _correlation(entry: Mapping[str, Any], subject: str) -> Decision:
    n = entry.get("n")
    value = entry.get("spearman")
    ci = (entry.get("ci95") or {}).get("spearman")
    return Decision(
        subject,
        relation("spearman", value, ci, n),
        figure_words("spearman", value, ci, n),
    )


def _thumbs(entry: Mapping[str, Any], subject: str) -> Decision:
    """A turn score against the thumbs: the AUC's verdict, or the point-biserial r's when
    only that one is decided (an interval clear of chance)."""
    n = entry.get("n")
    intervals = entry.get("ci95") or {}
    against = "users"
    verdicts = {
        key: relation(key, entry.get(key), intervals.get(key), n, against=against)
        for key in ("auc", "point_biserial")
    }
    decided = [k for k, v in verdicts.items() if v.severity in ("good", "bad")]
    key = decided[0] if decided else "auc"
    figures = "; ".join(
        f"{statistic_label(k)} {interval_text(entry.get(k), intervals.get(k), n)}"
        for k in ("auc", "point_biserial")
        if entry.get(k) is not None
    )
    return Decision(subject, verdicts[key], f"{figures} (n = {n})")


def _quality(run: Run, names: list[str], headline: str | None) -> list[str]:
    apart = {n for group in part_scores(run, names).values() for n in group}
    return [n for n in names if n not in apart and n != headline][:MAX_SCORES]


def _headline_alone(run: Run, headline: str, thumbs: bool) -> Decision | None:
    """The headline's mean with its scale: what the input's lack of ratings leaves to say
    (``thumbs``: the users' thumbs were set against it, so the input is not without users)."""
    summary = next((s for s in score_summaries(run, "session") if s.name == headline), None)
    if summary is None or summary.mean is None:
        return None
    described = describe_score(headline, run)
    words = (
        "no satisfaction ratings in the input (its relation with the users' thumbs is above), "
        "its mean"
        if thumbs
        else "no users' ratings in the input, a score on its own"
    )
    return Decision(
        f"headline {headline}",
        Verdict(words, "info"),
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


def _against_annotators(run: Run) -> list[Decision]:
    """Each judge against the annotators' own labels, where the input has them, read from the
    shape of its kind's blocks in ``meta.json``: a block with a Spearman correlation and its
    interval (link grades against the experts', with the binary kappa beside it), a block
    with an F1 against the annotators (useful spans, beside how close the users' own come)."""
    out = []
    for judge, blocks in ((run.meta or {}).get("judges") or {}).items():
        if not isinstance(blocks, Mapping):
            continue
        for key, block in blocks.items():
            if not isinstance(block, Mapping):
                continue
            what = key.replace("_", " ")
            if block.get("spearman") is not None and isinstance(block.get("ci95"), Mapping):
                out.append(_graded(f"{judge} vs the annotators' {what} labels", block))
            mine = block.get("vs_annotators")
            if isinstance(mine, Mapping) and mine.get("f1") is not None:
                people = block.get("human_reference_user_vs_annotators") or {}
                out.append(_overlap(f"{judge} vs the annotators' {what}", mine, people))
    return out


def _graded(subject: str, block: Mapping[str, Any]) -> Decision:
    n, value = block.get("n"), block.get("spearman")
    ci = block["ci95"].get("spearman")
    figure = figure_words("spearman", value, ci, n)
    kappa = block.get("cohen_kappa_binary")
    if kappa is not None:
        figure += f"; kappa {number_text(kappa)} (two classes)"
    return Decision(subject, relation("spearman", value, ci, n, against="the annotators"), figure)


def _overlap(subject: str, mine: Mapping[str, Any], people: Mapping[str, Any]) -> Decision:
    words, figure = "no human reference", f"F1 {number_text(mine['f1'])}"
    if people.get("f1") is not None:
        closer = mine["f1"] >= people["f1"]
        words = f"{'as close as' if closer else 'less close than'} the users' own"
        figure += f" (the users' own: {number_text(people['f1'])})"
    return Decision(subject, Verdict(words, "info"), f"{figure}; {mine.get('n_turns')} turns")


def _n(entry: Mapping[str, Any]) -> int | None:
    n = entry.get("n")
    return n if isinstance(n, int) else None


def _evidence(card: HeadlineCard) -> Decision:
    """The headline's best figure measured elsewhere (the card lists them all)."""
    best = max(card.figures, key=lambda f: (f.tracks, f.value - f.chance), default=None)
    subject = f"headline {card.score}, measured before on other data"
    if best is None:
        return Decision(subject, Verdict("never measured against people", "info"), "")
    return Decision(
        subject,
        relation(best.statistic, best.value, best.ci95, best.n, against="people"),
        f"{figure_words(best.statistic, best.value, best.ci95, best.n)}; {best.data}",
    )


def _headline(
    run: Run, headline: str, card: HeadlineCard | None
) -> list[tuple[Decision, int | None]]:
    """The headline against the users' satisfaction at each level; without ratings, against
    the users' thumbs when the input has them (first: the line "In short" says), then the
    evidence measured elsewhere and its mean with its scale."""
    correlations = (run.meta or {}).get("correlations") or {}
    out = []
    for level, what in _LEVELS:
        entry = (correlations.get(level) or {}).get(headline)
        if isinstance(entry, Mapping):
            subject = f"headline {headline} vs the users' {what}"
            out.append((_correlation(entry, subject), _n(entry)))
    if out:
        return out
    thumbs = _thumbs_of(run).get(headline)
    if isinstance(thumbs, Mapping):
        out.append((_thumbs(thumbs, f"headline {headline} vs the users' thumbs"), _n(thumbs)))
    if card is not None:
        out.append((_evidence(card), None))
    alone = _headline_alone(run, headline, thumbs=isinstance(thumbs, Mapping))
    return out + ([(alone, None)] if alone is not None else [])


def _thumbs_of(run: Run) -> Mapping[str, Any]:
    """The turn scores against the users' thumbs (``meta.json``'s ``feedback.turn``)."""
    return ((run.meta or {}).get("feedback") or {}).get("turn") or {}


def _others(run: Run, headline: str | None) -> list[tuple[Decision, int | None]]:
    """The quality session scores against the users' satisfaction, then the headline and
    the quality turn scores against their thumbs."""
    meta = run.meta or {}
    session = (meta.get("correlations") or {}).get("session") or {}
    out = []
    for name in _quality(run, list(session), headline):
        subject = f"{name} vs the users' session satisfaction"
        out.append((_correlation(session[name], subject), _n(session[name])))
    thumbs = _thumbs_of(run)
    # the headline against the thumbs: with the headline's lines when the input has no
    # ratings (it is the headline's relation with users), here otherwise
    correlations = meta.get("correlations") or {}
    rated = any(headline in (correlations.get(level) or {}) for level, _ in _LEVELS)
    first = [headline] if headline is not None and headline in thumbs and rated else []
    for name in [*first, *_quality(run, list(thumbs), headline)]:
        entry = thumbs[name]
        out.append((_thumbs(entry, f"{name} vs the users' thumbs"), _n(entry)))
    return out


def run_verdict(run: Run) -> RunVerdict:
    """The run's decisions and next steps (empty for a failed run or one without a score)."""
    status = run.info.get("status")
    if isinstance(status, Mapping) and status.get("ok", True) is False:
        return RunVerdict((), ())  # a failed run's scores are not a result
    headline = headline_score(run)
    card = headline_card(run)
    found = (_headline(run, headline, card) if headline is not None else []) + _others(
        run, headline
    )
    decisions = [d for d, _ in found] + _citations(run)
    sizes = [n for _, n in found if n is not None]
    tracks_here = any(
        d.verdict.severity == "good"
        and d.subject.startswith((f"headline {headline} vs", f"{headline} vs"))
        for d in decisions
    )
    steps = next_steps(
        [d for d in decisions if "measured before" not in d.subject],
        headline=headline,
        headline_tracks=tracks_here or (card is not None and card.tracks),
        headline_part=_part_words(card),
        missing=run.failures_total,
        smallest_n=min(sizes) if sizes else None,
    )
    worst = _worst_step(run)
    decisions += _against_annotators(run)  # judge quality, not the run's: no step of its own
    return RunVerdict(tuple(decisions), tuple(([worst] if worst else []) + steps))


def _part_words(card: HeadlineCard | None) -> str | None:
    """What the headline says when it scores one part of an answer (``a link-usefulness
    score: it says how useful ...``), from its declared evidence; ``None`` otherwise."""
    if card is None or card.evidence is None or not card.evidence.part:
        return None
    return f"{score_kind_words(card.evidence)}: it says {card.evidence.says}"


def _worst_step(run: Run) -> str | None:
    """The session to read first: the headline's worst, with its value and, when the judge
    gave one, the reason (the same session the worst-first list opens with)."""
    score, worst, _ = worst_sessions(run, 1)
    if score is None or not worst:
        return None
    first = worst[0]
    step = f"read the worst session first: {first.session_id} ({score} {number_text(first.value)}"
    if first.gold is not None:
        step += f", users {number_text(first.gold, 1)}"
    return step + ")"


def severity_class(severity: str) -> str:
    """The CSS class of a verdict line of ``severity``: prefixed, so that a severity never
    takes a rule of the page meant for something else (``small``, too few to tell, once
    took the page's ``.small`` rule and printed the line at 80%)."""
    return f"verdict-{severity}"


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
        f"<li class='verdict-line {severity_class(d.verdict.severity)}' "
        f"data-severity='{d.verdict.severity}'>"
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


def verdict_lede(verdict: RunVerdict) -> str:
    """One line at the top of ``report.html``, above the headline cards: the verdict's main
    decision (this run's, before evidence measured elsewhere) and the first thing to look at,
    in the words of the verdict below it; empty without a verdict."""
    if not verdict.decisions:
        return ""
    here = [d for d in verdict.decisions if "measured before" not in d.subject]
    main = (here or list(verdict.decisions))[0]
    text = f"{esc(main.subject)}: <b>{esc(main.verdict.words)}</b>"
    if verdict.next:
        text += f"; {esc(verdict.next[0])}"
    return (
        f"<p id='verdict-lede' class='verdict-line {severity_class(main.verdict.severity)}' "
        f"data-severity='{main.verdict.severity}'>"
        f"<b>In short</b>: {text}</p>"
    )
