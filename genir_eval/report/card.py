"""The headline's report card, and the run's grounding scores apart from it.

The card says what the score a run leads with is (its meaning and range, from the
glossary), why it leads (named by the scenario, or chosen by the evidence rule of
:mod:`genir_eval.meta.headline`) and how well it tracked people where that was measured:
each figure of the package's evidence file with its interval, verdict, data set, who judged
and the command that measured it. The terminal summary and ``report.html`` both print it
from :func:`headline_card`, so the two say the same.

Grounding scores (statement-usefulness and citation measures, link and citation judges' own
labels) answer another question, "does each citation support its statement": they get
their own section (:func:`grounding_scores`), never the quality headline's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from genir_eval.judges.kinds import judge_kind
from genir_eval.meta.headline import CHOSEN_BY, Figure, figures_for, is_grounding
from genir_eval.report.glossary import describe_score
from genir_eval.report.views import esc, headline_score
from genir_eval.rundir.folder import Run

__all__ = [
    "GROUNDING_TITLE",
    "GROUNDING_NOTE",
    "HeadlineCard",
    "headline_card",
    "grounding_scores",
    "card_lines",
    "card_html",
]

OTHER_JUDGE = "the figures are of another judge of the same name"
GROUNDING_TITLE = "Grounding: does each citation support its statement"
GROUNDING_NOTE = (
    "grounding scores, not a quality score: an answer that copies its passages grounds well "
    "and may still be the answer people like less"
)


@dataclass(frozen=True)
class HeadlineCard:
    """What the headline is, why it leads, and the figures measured on it."""

    score: str
    meaning: str
    chosen_by: str
    judge: str | None
    figures: tuple[Figure, ...]
    judged_by: str | None = None
    """Who judged in this run (``offline twin`` or ``provider/model``), when a judge's score."""

    @property
    def other_judge(self) -> bool:
        """Whether every figure was measured with another judge than this run's (the
        offline twin's figures say little about a model, and the other way round)."""
        return (
            self.judged_by is not None
            and bool(self.figures)
            and not any(
                f.judged_by == self.judged_by or f.judged_by.startswith(f"{self.judged_by} ")
                for f in self.figures
            )
        )

    @property
    def tracks(self) -> bool:
        return any(f.tracks for f in self.figures)

    @property
    def grounding(self) -> bool:
        return is_grounding(self.score)


def _judge_names(run: Run) -> dict[str, str]:
    return {
        str(j.get("id")): str(j.get("name") or j.get("id"))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping)
    }


def _judged_by(run: Run, judge_id: str) -> str | None:
    for j in run.info.get("judges") or []:
        if isinstance(j, Mapping) and str(j.get("id")) == judge_id:
            provider = str(j.get("provider") or "")
            return "offline twin" if provider == "offline" else f"{provider}/{j.get('model')}"
    return None


def _chosen_by(run: Run) -> str:
    recorded = run.info.get("headline")
    if isinstance(recorded, Mapping) and recorded.get("chosen_by") in CHOSEN_BY:
        return str(recorded["chosen_by"])
    document = (run.info.get("scenario") or {}).get("document") or {}
    named = (document.get("meta") or {}).get("headline") if isinstance(document, Mapping) else None
    # a run written before the rule recorded its choice: the scenario's or the old default
    return "scenario" if named else "no evidence"


def headline_card(run: Run) -> HeadlineCard | None:
    """The card of the run's headline (``None`` when the run leads with no score)."""
    score = headline_score(run)
    if score is None:
        return None
    judge = _judge_names(run).get(score)
    by = _judged_by(run, score) if judge else None
    described = describe_score(score, run)
    # the glossary's first clause and the range: the glossary has the rest
    meaning = ", ".join(p for p in (described.averages.split("; ")[0], described.range) if p)
    if described.source:
        meaning = f"{meaning}, from {described.source}" if meaning else described.source
    return HeadlineCard(
        score=score,
        meaning=meaning,
        chosen_by=_chosen_by(run),
        judge=judge,
        figures=_this_judge_first(figures_for(judge or score), by),
        judged_by=by,
    )


def _this_judge_first(figures: list[Figure], judged_by: str | None) -> tuple[Figure, ...]:
    """The figures measured with this run's judge first, in the file's order otherwise."""
    if judged_by is None:
        return tuple(figures)
    return tuple(sorted(figures, key=lambda f: not f.judged_by.startswith(judged_by)))


def grounding_scores(run: Run, names: list[str]) -> list[str]:
    """Of ``names`` (a level's scores), the grounding ones: measures, and the own scores of
    judges that label links or citations."""
    kinds = {
        str(j.get("id")): judge_kind(str(j.get("kind") or ""))
        for j in run.info.get("judges") or []
        if isinstance(j, Mapping)
    }
    out = []
    for name in names:
        kind = kinds.get(name.split(":", 1)[0])
        if is_grounding(name) or (
            kind is not None and (kind.labels_links or kind.judges_citations)
        ):
            out.append(name)
    return out


def card_lines(card: HeadlineCard, mark: str = "") -> list[str]:
    """The card as the terminal prints it (the report's card says the same)."""
    what = "grounding score" if card.grounding else "quality score"
    lines = [
        f"Headline score {card.score}{mark} ({what}): {card.meaning}",
        f"  leads because: {CHOSEN_BY[card.chosen_by]}",
    ]
    if card.figures:
        lines.append("  how well it tracked people where measured:")
        lines += [f"    {f.text()}" for f in card.figures]
        lines.append(f"    (measured by: {', '.join(sorted({f.command for f in card.figures}))})")
    else:
        lines.append("  how well it tracked people: never measured")
    if card.other_judge:
        lines.append(f"  this run's judge ({card.judged_by}) was not measured so: {OTHER_JUDGE}")
    if not card.tracks:
        lines.append("  no figure shows that this score tracks people")
    return lines


def card_html(card: HeadlineCard, marked: str) -> str:
    """The card as ``report.html`` shows it (``marked``: the score's name, escaped and
    marked as the report marks offline twins' scores): the figures folded under the best
    of them."""
    what = "grounding score" if card.grounding else "quality score"
    items = "".join(
        f"<li class='evidence' data-tracks='{str(f.tracks).lower()}'>{esc(f.text())}"
        f" <span class='muted'>({esc(f.command)}, {esc(f.measured)})</span></li>"
        for f in card.figures
    )
    if items:
        best = max(card.figures, key=lambda f: (f.tracks, f.value - f.chance))
        figures = (
            "<details class='headline-evidence'><summary>How well it tracked people where "
            f"measured: {esc(best.text())}"
            + (f" (and {len(card.figures) - 1} more)" if len(card.figures) > 1 else "")
            + f"</summary><ul>{items}</ul></details>"
        )
    else:
        figures = "<p>How well it tracked people: never measured.</p>"
    if card.other_judge:
        figures += (
            f"<p class='flag' id='headline-other-judge'>This run's judge ({esc(card.judged_by)}) "
            f"was not measured so: {esc(OTHER_JUDGE)}.</p>"
        )
    warning = (
        ""
        if card.tracks
        else " <span class='flag' id='headline-no-evidence'>No figure shows that this score "
        "tracks people.</span>"
    )
    return (
        f"<div class='headline-card' id='headline-card' data-score='{esc(card.score)}' "
        f"data-chosen-by='{esc(card.chosen_by)}'>"
        f"<p>Headline score <b>{marked}</b> ({what}): {esc(card.meaning)}; it leads because: "
        f"{esc(CHOSEN_BY[card.chosen_by])}.{warning} See the <a href='#glossary'>glossary</a> "
        f"for what each score means.</p>{figures}</div>"
    )
