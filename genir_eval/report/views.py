"""What every part of ``report.html`` shares: escaping and number formats, the limits that
keep the page bounded at any run size, and the context a section is rendered from.

A section is a function ``render(ctx: ReportContext) -> str | None`` (``None`` leaves it
out), listed with its id and title in :data:`genir_eval.report.html.SECTIONS`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from genir_eval.errors import ConfigError
from genir_eval.figures import number_text
from genir_eval.judges.kinds import judge_kind
from genir_eval.metrics.parse import parse_measure
from genir_eval.report.scores import (
    SMALL_N,
    ScoreSummary,
    link_judge_ids,
    offline_judges,
    score_summaries,
)
from genir_eval.report.tables import (
    LevelTable,
    LinkFacts,
    LinkKeys,
    read_level,
    read_link_keys,
    read_links,
)
from genir_eval.rundir.folder import Run

__all__ = [
    "first_link_judge",
    "ReportLimits",
    "ReportContext",
    "Section",
    "PARTS",
    "PARTS_WITH_SCORES",
    "esc",
    "fold",
    "fmt",
    "fmt_ci",
    "mean_cell",
    "table",
    "headline_score",
]


@dataclass(frozen=True)
class ReportLimits:
    """Bounds that keep the page readable and its build time flat at any run size.

    ``index_rows`` sessions are listed in the session index (the rest are in
    ``sessions.csv``), ``index_page`` per folded page; the turns of at most
    ``detail_sessions`` sessions are shown (all of them when the run is that small; else
    the worst, the best and those whose judges disagree most).
    """

    index_rows: int = 2_000
    index_page: int = 200
    detail_sessions: int = 60
    n_boot: int = 1000
    seed: int = 0


def headline_score(run: Run) -> str | None:
    """The score the report leads with: ``meta.json``'s headline, else the scenario's,
    else the first session score."""
    if run.meta and run.meta.get("headline"):
        return str(run.meta["headline"])
    scenario = run.info.get("scenario") or {}
    headline = (scenario.get("meta") or {}).get("headline") if isinstance(scenario, dict) else None
    if headline:
        return str(headline)
    names = run.score_names("session")
    return names[0] if names else None


@dataclass
class ReportContext:
    """One run as the report's sections see it; costly parts are computed once, on use."""

    run: Run
    limits: ReportLimits = field(default_factory=ReportLimits)

    @cached_property
    def headline(self) -> str | None:
        return headline_score(self.run)

    @cached_property
    def baselines(self) -> set[str]:
        """Judges answered by offline twins."""
        return set(offline_judges(self.run))

    @cached_property
    def link_judges(self) -> list[str]:
        return link_judge_ids(self.run)

    @cached_property
    def sessions(self) -> LevelTable:
        """The sessions table as columns (read once)."""
        return read_level(self.run, "session")

    @cached_property
    def turns(self) -> LevelTable:
        """The turns table as columns (read once)."""
        return read_level(self.run, "turn")

    def table(self, level: str) -> LevelTable:
        return self.sessions if level == "session" else self.turns

    @cached_property
    def links(self) -> LinkFacts:
        """The links table's counts and label pairs (read once)."""
        judges = self.link_judges[:2]
        return read_links(self.run, (judges[0], judges[1]) if len(judges) == 2 else None)

    @cached_property
    def link_keys(self) -> LinkKeys:
        """Which sessions and turns have cited, labelled links (read once)."""
        return read_link_keys(self.run)

    @cached_property
    def has_gold(self) -> bool:
        return bool(np.isfinite(self.sessions.gold).any() or np.isfinite(self.turns.gold).any())

    def score_names(self, level: str) -> list[str]:
        """The score names at ``level`` in first-seen order, as ``run.score_names``."""
        return self.table(level).names

    @cached_property
    def has_gold_links(self) -> bool:
        return self.links.has_gold

    def summaries(self, level: str) -> list[ScoreSummary]:
        key = f"_summaries_{level}"
        if key not in self.__dict__:
            self.__dict__[key] = score_summaries(
                self.run,
                "session" if level == "session" else "turn",
                n_boot=self.limits.n_boot,
                seed=self.limits.seed,
                table=self.table(level),
                links=self.link_keys,
            )
        return list(self.__dict__[key])

    def is_baseline(self, score: str) -> bool:
        """Whether ``score`` comes from an offline twin's labels (``gold:`` never does)."""
        if score.startswith("gold:"):
            return False
        if score.startswith("z(") and score.endswith(")"):
            return any(self.is_baseline(part) for part in score[2:-1].split("+"))
        if "@" in score:
            return score.rsplit("@", 1)[1] in self.baselines
        if _is_citation_measure(score):
            citers = [
                str(j.get("id"))
                for j in self.run.info.get("judges") or []
                if isinstance(j, Mapping) and judge_kind(str(j.get("kind"))).judges_citations
            ]
            return bool(citers) and citers[0] in self.baselines
        judge = score.split(":", 1)[0]
        if judge in self.baselines:
            return True
        if judge in {str(j.get("id")) for j in self.run.info.get("judges") or []}:
            return False
        first = self.link_judges[0] if self.link_judges else None
        return first in self.baselines if first else False

    def marked(self, score: str) -> str:
        """``score`` escaped, with ``*`` when it comes from an offline twin."""
        mark = "<sup class='twin' title='offline twin: a baseline, not an LLM judgment'>*</sup>"
        # a line may break before "@" and after "." in long names
        # (sdcg_urge@link_usefulness.true)
        name = esc(score).replace("@", "<wbr>@").replace(".", ".<wbr>")
        return name + (mark if self.is_baseline(score) else "")


@dataclass(frozen=True)
class Section:
    """A part of the page: its anchor id, heading, renderer, and the part of the page it
    belongs to (:data:`PARTS`, in the order a reader decides on them)."""

    id: str
    title: str
    render: Callable[[ReportContext], str | None]
    part: str = "evidence"


PARTS: dict[str, str] = {
    "headline": "Verdict",
    "distributions": "Scores",
    "judges": "Judge quality",
    "evidence": "Evidence",
    "reference": "Reference",
}
"""The page's parts in order, with the title the contents line gives each: what a reader
decides on first (the verdict and headline), then the scores' distributions, how far the
judges can be trusted, and the evidence behind single judgments."""

PARTS_WITH_SCORES = frozenset({"headline", "distributions", "judges"})
"""Parts that present scores: folded away, marked as no result, when the run failed."""


def fold(summary: str, body: str, *, element_id: str | None = None, opened: bool = False) -> str:
    """``body`` folded under ``summary`` (both HTML built and escaped by the caller)."""
    attributes = (f" id='{esc(element_id)}'" if element_id else "") + (" open" if opened else "")
    return f"<details class='fold'{attributes}><summary>{summary}</summary>{body}</details>"


def _is_citation_measure(text: str) -> bool:
    try:
        return parse_measure(text).LEVEL == "citation"
    except ConfigError:
        return False


def esc(value: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def fmt(value: Any, digits: int = 3) -> str:
    """A number as the report prints it: fixed decimals, never ``-0.000``; ``–`` if none."""
    if value is None or isinstance(value, int | float):
        return number_text(value, digits, missing="–")
    return esc(value)


def fmt_ci(interval: Any, digits: int = 2) -> str:
    """``[lo, hi]`` at 2 decimals, as the terminal prints an interval
    (:func:`genir_eval.meta.decide.interval_text`); ``""`` for no interval."""
    if isinstance(interval, (list, tuple)) and len(interval) == 2:
        lo, hi = interval
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            return f"[{fmt(float(lo), digits)}, {fmt(float(hi), digits)}]"
    return ""


def mean_cell(summary: ScoreSummary, digits: int = 3) -> str:
    """``mean [lo, hi]``, or the mean flagged when there are too few values for an
    interval (n < 10) or nothing varies."""
    if summary.mean is None:
        return "<span class='muted'>no value</span>"
    mean = fmt(summary.mean, digits)
    if summary.small:
        return (
            f"{mean} <span class='flag' title='fewer than {SMALL_N} values: no interval'>"
            f"n&lt;{SMALL_N}</span>"
        )
    if summary.ci is None:
        return f"{mean} <span class='muted'>(all equal)</span>"
    return f"{mean} <span class='muted'>{fmt_ci(summary.ci)}</span>"


def table(
    table_id: str,
    head: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    text_columns: int = 1,
    raw_columns: Iterable[int] = (),
) -> str:
    """A table whose first ``text_columns`` columns are text and the others numbers;
    cells in ``raw_columns`` are HTML already built (and escaped) by the caller."""
    raw = set(raw_columns)
    num = " class='num'"
    th = "".join(f"<th{'' if i < text_columns else num}>{esc(h)}</th>" for i, h in enumerate(head))
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            content = str(cell) if i in raw else (esc(cell) if i < text_columns else fmt(cell))
            cells.append(f"<td>{content}</td>" if i < text_columns else f"<td{num}>{content}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"<div class='scroll'><table id='{esc(table_id)}'><tr>{th}</tr>{''.join(body)}"
        "</table></div>"
    )


def mapping_or_empty(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def first_link_judge(run: Run) -> str | None:
    """The judge whose link labels a run's link measures score (``sdcg_urge``): the
    scenario's first ``aggregate.link_judges``, else its first judge that labels links."""
    scenario = run.info.get("scenario") or {}
    document = scenario.get("document") if isinstance(scenario, Mapping) else None
    aggregate = (document or {}).get("aggregate") or {}
    chosen = aggregate.get("link_judges") if isinstance(aggregate, Mapping) else None
    if chosen:
        return str(chosen[0])
    for judge in run.info.get("judges") or []:
        if isinstance(judge, Mapping) and judge_kind(str(judge.get("kind"))).feeds_link_measures:
            return str(judge.get("id"))
    return None
