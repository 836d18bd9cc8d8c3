"""The headline's report card, and what kind of evidence each of the run's scores rests on.

The card says what the score a run leads with is (its meaning and range, from the
glossary), why it leads (named by the scenario, or chosen by the evidence rule of
:mod:`genir_eval.meta.headline`) and how well it tracked people where that was measured:
each figure of the package's evidence file with its interval, verdict, data set, who judged
and the command that measured it. The terminal summary and ``report.html`` both print it
from :func:`headline_card`, so the two say the same.

A score's kind of evidence is read from its declaration (:func:`score_evidence`): a
measure's ``EVIDENCE`` (``sdcg_urge`` rests on link usefulness, ``citation_precision`` on
citation support, ``nugget_recall`` on the nuggets), a judge kind's ``evidence``. Scores of
one part of an answer (link usefulness, citation support, nugget coverage) answer another
question than whether people like the answer: they get their own tables, one per kind
(:func:`part_scores`), never the quality headline's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from genir_eval.errors import ConfigError
from genir_eval.judges.kinds import judge_kind
from genir_eval.meta.headline import CHOSEN_BY, Figure, figures_for
from genir_eval.metrics.parse import parse_measure
from genir_eval.records import EVIDENCE_KINDS, EvidenceKind
from genir_eval.report.glossary import describe_score
from genir_eval.report.views import esc, headline_score
from genir_eval.rundir.folder import Run

__all__ = [
    "PARTS_TITLE",
    "PARTS_NOTE",
    "HeadlineCard",
    "headline_card",
    "score_evidence",
    "score_kind_words",
    "part_scores",
    "card_lines",
    "card_html",
]

OTHER_JUDGE = "the figures are of another judge of the same name"
PARTS_TITLE = "Scores of one part of an answer"
PARTS_NOTE = (
    "each says one thing an answer does, not whether people like it: an answer that cites "
    "useful links, or copies its passages, may still be the answer people like less"
)
UNDECLARED = "a score whose kind of evidence is not declared"


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

    evidence: EvidenceKind | None = None
    """What the score rests on, as its measure or judge kind declares."""


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
        evidence=score_evidence(run, score),
    )


def _this_judge_first(figures: list[Figure], judged_by: str | None) -> tuple[Figure, ...]:
    """The figures measured with this run's judge first, in the file's order otherwise."""
    if judged_by is None:
        return tuple(figures)
    return tuple(sorted(figures, key=lambda f: not f.judged_by.startswith(judged_by)))


def score_evidence(run: Run, name: str) -> EvidenceKind | None:
    """The kind of evidence the score ``name`` rests on, from its declaration: a measure's
    ``EVIDENCE`` (also from another judge's labels, ``sdcg_urge@link_usefulness.true``, or
    from gold, ``gold:sdcg_urge``), else the ``evidence`` of the kind of the judge whose
    score it is (``satisfaction.urs``, ``spans``, ``judge:item``); ``None`` when nothing
    declares one (a combination of scores, a kind that declares none)."""
    base = name.removeprefix("gold:").removeprefix("labels:").split("@", 1)[0]
    try:
        return EVIDENCE_KINDS[parse_measure(base).EVIDENCE]
    except ConfigError:
        pass
    for j in run.info.get("judges") or []:
        if isinstance(j, Mapping) and str(j.get("id")) == base.split(":", 1)[0]:
            kind = judge_kind(str(j.get("kind") or ""))
            return EVIDENCE_KINDS.get(kind.evidence) if kind is not None else None
    return None


def score_kind_words(evidence: EvidenceKind | None) -> str:
    """What kind of score it is, as the card and the verdict say it: ``a link-usefulness
    score``; for a score that declares none, that it declares none."""
    return f"a {evidence.noun}" if evidence is not None else UNDECLARED


def part_scores(run: Run, names: list[str]) -> dict[str, list[str]]:
    """Of ``names`` (a level's scores), the scores of one part of an answer, by the name of
    their kind of evidence (:attr:`~genir_eval.records.EvidenceKind.part`), in the
    order :data:`~genir_eval.records.EVIDENCE_KINDS` lists the kinds."""
    found: dict[str, list[str]] = {}
    for name in names:
        evidence = score_evidence(run, name)
        if evidence is not None and evidence.part:
            found.setdefault(evidence.name, []).append(name)
    return {kind: found[kind] for kind in EVIDENCE_KINDS if kind in found}


def card_lines(card: HeadlineCard, mark: str = "") -> list[str]:
    """The card as the terminal prints it (the report's card says the same)."""
    what = _what(card)
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
    what = _what(card)
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


def _what(card: HeadlineCard) -> str:
    """The card's words for the headline's kind: its evidence's noun, as declared."""
    return card.evidence.noun if card.evidence is not None else UNDECLARED.removeprefix("a ")
