"""How a figure is put into words: one set of rules for the terminal summary, ``report.html``,
``genir-eval meta``'s headline evidence and ``compare``'s pull-request comment.

A figure of agreement (a correlation with the users' satisfaction, an AUC against their
thumbs, a kappa, a pair agreement with people's preferences) is read from its 95% interval
against chance (0 for a correlation or a kappa, 0.5 for an AUC or a pair agreement):

- the interval lies wholly above chance: it **tracks** the users (an AUC, agreement or
  kappa: **better than chance**);
- it reaches chance on both sides: **no detectable relation** (**chance-level**);
- it lies wholly below chance: it **runs against** the users (**worse than chance**);
- fewer than :data:`MIN_N` values: **too few to tell**, and no interval is printed, since a
  bootstrap over a handful of values spans most of the scale and means nothing.

A score on its own (a mean with no people's judgment beside it) is given with its scale and
direction (:func:`score_words`), since ``2.278`` says nothing without them. A base module:
every stage that words a figure imports it from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from genir_eval.figures import counted, number_text

__all__ = [
    "MIN_N",
    "within_minimum",
    "SMALL_MARK",
    "NO_INTERVAL",
    "SEVERITIES",
    "Verdict",
    "Decision",
    "chance_of",
    "statistic_label",
    "too_small",
    "interval_text",
    "relation",
    "figure_words",
    "score_words",
    "next_steps",
    "noise_words",
    "scatter_words",
    "repeats_words",
]

#: Fewer values than this get no interval and no verdict but "too few to tell".
MIN_N = 10
#: What a table cell says beside a figure of fewer than :data:`MIN_N` values.
SMALL_MARK = f"n<{MIN_N}"
#: What stands for the interval of such a figure.
NO_INTERVAL = f"n < {MIN_N}: no interval"

#: A verdict's severity, from best to worst news for the score; ``small``: too few to tell,
#: ``info``: a count or a score on its own, which no rule calls good or bad.
SEVERITIES = ("good", "none", "bad", "small", "info")

# statistic -> (printed name, chance, whether the words are chance's)
_STATISTICS: dict[str, tuple[str, float, bool]] = {
    "pearson": ("Pearson r", 0.0, False),
    "spearman": ("Spearman rho", 0.0, False),
    "kendall": ("Kendall tau", 0.0, False),
    "point_biserial": ("point-biserial r", 0.0, False),
    "r": ("r", 0.0, False),
    "kappa": ("kappa", 0.0, True),
    "auc": ("AUC", 0.5, True),
    "pair agreement": ("pair agreement", 0.5, True),
    "agreement": ("agreement", 0.5, True),
}


@dataclass(frozen=True)
class Verdict:
    """A figure's meaning in a few words and how it reads for the score (:data:`SEVERITIES`)."""

    words: str
    severity: str


@dataclass(frozen=True)
class Decision:
    """One line of a run's verdict: what is judged (``subject``), its verdict, and the
    figure it rests on, as the terminal and the report both print it."""

    subject: str
    verdict: Verdict
    figure: str

    def text(self) -> str:
        return f"{self.subject}: {self.verdict.words}" + (f": {self.figure}" if self.figure else "")


def _key(statistic: str) -> str:
    key = statistic.strip().lower().replace("-", "_")
    return "point_biserial" if key == "point_biserial r" else key


def chance_of(statistic: str) -> float:
    """What ``statistic`` is when the score knows nothing: 0.5 for an AUC or a pair
    agreement, 0 otherwise."""
    return _STATISTICS.get(_key(statistic), ("", 0.0, False))[1]


def statistic_label(statistic: str) -> str:
    """``statistic`` as a reader knows it (``spearman`` -> ``Spearman rho``)."""
    return _STATISTICS.get(_key(statistic), (statistic, 0.0, False))[0]


def too_small(n: Any) -> bool:
    """Whether ``n`` values are too few for an interval (:data:`MIN_N`); an unknown ``n``
    is not taken for a small one."""
    return isinstance(n, int) and not isinstance(n, bool) and n < MIN_N


def within_minimum(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` (a figure with its ``n`` and ``ci95`` intervals, as ``meta.json`` stores
    it) with every interval left out (``None``) when ``n`` is :func:`too_small`: the one
    rule for every reader, so the Python API (``run.meta``) holds no interval the terminal
    and the report would refuse to print."""
    if too_small(entry.get("n")) and isinstance(entry.get("ci95"), Mapping):
        return {**entry, "ci95": {name: None for name in entry["ci95"]}}
    return entry


def _interval(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, Sequence) and not isinstance(ci, str) and len(ci) == 2:
        lo, hi = ci
        if isinstance(lo, int | float) and isinstance(hi, int | float):
            return float(lo), float(hi)
    return None


def interval_text(
    value: Any,
    ci: Any,
    n: Any,
    *,
    digits: int = 3,
    ci_digits: int = 2,
    missing: str = "-",
) -> str:
    """``0.094 [-0.27, 0.46]``: the figure with its 95% interval; ``0.231 (n<10)`` with
    fewer than :data:`MIN_N` values (no interval); the figure alone without an interval."""
    if value is None:
        return missing
    text = number_text(value, digits, missing=missing)
    if too_small(n):
        return f"{text} ({SMALL_MARK})"
    bounds = _interval(ci)
    if bounds is None:
        return text
    return f"{text} [{number_text(bounds[0], ci_digits)}, {number_text(bounds[1], ci_digits)}]"


def relation(statistic: str, value: Any, ci: Any, n: Any, *, against: str = "users") -> Verdict:
    """What a figure of agreement says (the module docstring's rules): ``against`` names
    who the score is compared with (``users``, ``the users' thumbs``, ``the experts``)."""
    if value is None:
        return Verdict("no value", "info")
    if too_small(n):
        return Verdict("too few to tell", "small")
    bounds = _interval(ci)
    if bounds is None:
        return Verdict("no interval", "info")
    _, chance, of_chance = _STATISTICS.get(_key(statistic), ("", 0.0, False))
    lo, hi = bounds
    if lo > chance:
        return Verdict("better than chance" if of_chance else f"tracks {against}", "good")
    if hi < chance:
        return Verdict("worse than chance" if of_chance else f"runs against {against}", "bad")
    return Verdict(
        "chance-level" if of_chance else f"no detectable relation with {against}", "none"
    )


def figure_words(statistic: str, value: Any, ci: Any, n: Any) -> str:
    """``Spearman rho 0.094 [-0.27, 0.46] (n = 30)``; with too few values, ``Spearman rho
    0.281 (n = 7 < 10: no interval)``."""
    label = statistic_label(statistic)
    if too_small(n):
        return f"{label} {number_text(value)} (n = {n} < {MIN_N}: no interval)"
    size = f" (n = {n})" if n is not None else ""
    return f"{label} {interval_text(value, ci, n)}{size}"


def score_words(
    value: Any, ci: Any, n: Any, *, scale: str, higher_is_better: bool | None, unit: str
) -> str:
    """A score on its own: ``mean 2.278 [1.85, 2.71] over 10 sessions; scale 0 and up,
    higher is better``. Without people's judgment beside it no rule says whether it is
    good: the words say so."""
    direction = {True: "higher is better", False: "lower is better"}.get(
        higher_is_better,  # type: ignore[arg-type]
        "direction unknown",
    )
    over = f" over {n} {unit}" if n is not None else ""
    figure = interval_text(value, ci, n)
    if too_small(n):
        figure = f"{number_text(value)} ({NO_INTERVAL})"
    return f"mean {figure}{over}; scale {scale or 'not declared'}, {direction}"


def next_steps(
    decisions: Sequence[Decision],
    *,
    headline: str | None,
    headline_tracks: bool,
    headline_part: str | None,
    missing: int,
    smallest_n: int | None,
    limit: int = 5,
) -> list[str]:
    """What to look at next, most pressing first, at most ``limit``: what runs against
    people, samples too small to read, a score that tracks people better than the
    headline, a headline with no evidence, a headline that scores one part of an answer
    (``headline_part``: what kind of score it is and what it says, as its measure or judge
    kind declares it), missing judgments."""
    steps = []
    for d in decisions:
        if d.verdict.severity == "bad":
            steps.append(
                f"{d.subject} {d.verdict.words}: read its lowest-scored turns and the judge's "
                "reasons in report.html before trusting it"
            )
    if smallest_n is not None and too_small(smallest_n):
        steps.append(
            f"only {smallest_n} values with people's judgment: fewer than {MIN_N}, no "
            "interval can be read; add sessions that carry the users' ratings"
        )
    good = [d for d in decisions if d.verdict.severity == "good"]
    if good and not headline_tracks:
        steps.append(
            f"{good[0].subject} {good[0].verdict.words}: consider it as the headline "
            "([meta] headline in the scenario)"
        )
    if headline is not None and not headline_tracks:
        steps.append(
            f"nothing shows that {headline} tracks people: label a sample "
            "(genir-eval label) to measure it"
        )
    if headline is not None and headline_part:
        steps.append(f"{headline} is {headline_part}, not whether people like the answers")
    if missing:
        steps.append(f"{counted(missing, 'judgment')} missing: see report.html's failures")
    return steps[:limit]


def noise_words(block: Mapping[str, Any]) -> str:
    """A judge's noise (``run --repeats``) in words, the same in the terminal and the
    report: ``judge noise: ICC 0.62 [0.41, 0.80] over 40 items judged 3 times; within-item
    sd 0.410; 15% of 12 sessions would flip``; an offline twin's note as it is."""
    if block.get("deterministic") or "items" not in block:
        return f"judge noise: {block.get('note', 'not measured')}"
    icc = block.get("icc")
    ci = _interval(block.get("icc_ci95"))
    shown = "undefined" if icc is None else number_text(icc)
    if icc is not None and ci is not None:
        shown += f" [{number_text(ci[0], 2)}, {number_text(ci[1], 2)}]"
    flips = block.get("verdict_flip_share")
    flip_text = (
        ""
        if flips is None
        else f"; {flips:.0%} of {counted(block.get('sessions'), 'session')} would flip"
    )
    return (
        f"judge noise: ICC {shown} over {counted(block['items'], 'item')} judged "
        f"{block['repeats']} times; within-item sd {number_text(block.get('within_item_sd'))}"
        f"{flip_text}"
    )


def scatter_words(subject: str, change: float, sd: float, repeats: float) -> str | None:
    """What a change of a score judged several times in both runs (``run --repeats``) says
    against the judge's own scatter, or ``None`` when it is larger than that scatter.

    The scatter is ``sd / sqrt(repeats)``: ``sd`` the within-session standard deviation of
    the repeated scores, pooled over both runs, and ``repeats`` how many times a session was
    judged; it is the standard error of a session's score averaged over its repeats, the
    finest change one session's repeated judgments can resolve. A change of the mean
    (``|change|``) below it is one the judge's asking again could make on its own: ``X
    (session level): the change +0.0100 is smaller than the judge's own scatter (0.2887:
    within-session sd 0.5000 of its repeated scores, both runs pooled, over the square root
    of 3 repeats): the judge cannot tell this change from noise``."""
    scatter = sd / repeats**0.5
    if abs(change) >= scatter:
        return None
    return (
        f"{subject}: the change {change:+.4f} is smaller than the judge's own scatter "
        f"({scatter:.4f}: within-session sd {sd:.4f} of its repeated scores, both runs pooled, "
        f"over the square root of {repeats:.3g} repeats): the judge cannot tell "
        "this change from noise"
    )


def repeats_words(subject: str, carried_by: str, sessions: int, compared: int) -> str:
    """How the interval of a change treats the judge's noise: ``carried_by`` ``"both"`` (a
    nested resample of the sessions' repeats) or ``"A"``/``"B"`` (only that run repeated
    its judgments: the plain paired interval)."""
    if carried_by == "both":
        return (
            f"{subject}: the 95% interval accounts for the judge's noise: each resampled "
            f"session's repeated judgments resampled again, A's and B's apart ({sessions} of "
            f"{compared} compared sessions judged repeatedly in both runs)"
        )
    return (
        f"{subject}: only run {carried_by} carries repeated judgments of this score "
        "(run --repeats): the plain paired interval, which leaves the judge's noise out"
    )
