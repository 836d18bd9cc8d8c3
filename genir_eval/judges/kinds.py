"""Judge kinds: what each kind of judge knows, declared once, in the kind's own folder.

A judge has a kind (``link_usefulness``, ``satisfaction``, ``spans``, ...). Everything the
stages after the judges need to know of a kind is on one :class:`JudgeKind` object,
registered with :func:`register_kind` by the module that defines the kind
(``judges/links/kind.py``, ``judges/satisfaction/kind.py``, ...):

- how its labels become table columns (:mod:`genir_eval.runner.assemble`): which item
  labels are its own turn or session score (:attr:`JudgeKind.own_items`), how a label that
  is not a number becomes one (:meth:`JudgeKind.turn_value`), whether it labels links
  (``link:<id>`` items) and whether its link labels feed the link measures by default,
  whether it judges citation pairs (``cite:<statement>:<link>``);
- what its comparison with gold is made of (:class:`GoldContext`, :class:`GoldBlock`, the
  named blocks of ``meta.json``'s ``judges[<id>]``) and whether a comparison combines it
  with another judge's link labels; the comparisons themselves read the statistics and the
  measures, so they are the meta-evaluation's (:mod:`genir_eval.meta.gold`, one registered
  under each built-in kind's name);
- how the report and the terminal show it: its own score in the glossary
  (:attr:`JudgeKind.own_score`), its table of figures against gold in the summary and in
  the HTML report (:meth:`JudgeKind.summary_table`, :meth:`JudgeKind.report_table`), its
  lines in ``genir-eval meta`` and the judge-quality lines (:meth:`JudgeKind.meta_lines`,
  :meth:`JudgeKind.quality_lines`), its labels in words (:attr:`JudgeKind.verdict_words`)
  and whether its labels mark the response's units (:attr:`JudgeKind.marks_units`).

The built-in kinds are registered by :mod:`genir_eval.judges` (``BUILTIN_KINDS``, in the
order the summary and the report show them); the kinds' names are spelled once, in
:mod:`genir_eval.kind_names`.

The runner, the meta-evaluation and the report loop over :func:`judge_kinds` or ask
:func:`judge_kind` for a judge's kind; none of them tests a kind's name. A kind overrides
only what it has: the defaults say "no such columns, no comparison, nothing to show", so
an unregistered kind's judge still runs, its numeric labels scored under its id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from genir_eval.figures import number_text

if TYPE_CHECKING:
    from genir_eval.judges.base import Label
    from genir_eval.llm.providers.offline import OfflineHandler
    from genir_eval.records import Session

__all__ = [
    "JudgeKind",
    "GoldContext",
    "GoldBlock",
    "JudgeTable",
    "JudgeCell",
    "Interval",
    "Figure",
    "register_kind",
    "judge_kind",
    "judge_kinds",
    "kind_blocks",
    "interval_text",
    "calibration_line",
]


@dataclass(frozen=True)
class GoldContext:
    """What a comparison with gold is asked for: the source of the link labels a
    satisfaction judge is combined with, bootstrap resamples and seed, the share of hardest
    queries to order, the judge's instructions (for the copying check) and a simulated
    labelled-sample size for PPI, the useful gold label and nDCG's cut-off (see :func:`genir_eval.meta.evaluate.score_labels`)."""

    with_link_labels: bool = False
    link_source: str | None = None
    n_boot: int = 1000
    seed: int = 0
    fraction: float = 0.5
    instructions: tuple[str, ...] = ()
    ppi_labelled: int | None = None
    ppi_splits: int = 200
    #: the gold link label that makes a link useful, and the rank cut-off of nDCG@k
    gold_min: int = 3
    k: int = 5


@dataclass(frozen=True)
class GoldBlock:
    """One named block of a judge's comparison with gold, gathered window by window:
    ``add(sessions, labels, link_labels)`` keeps what it needs, ``result()`` gives the block
    (``None`` or empty when there is nothing to compare, and it is left out)."""

    name: str
    add: Callable[[Sequence[Session], Sequence[Label], Sequence[Label] | None], None]
    result: Callable[[], Mapping[str, Any] | None]


@dataclass(frozen=True)
class JudgeCell:
    """A table's first cell: the judge's id (the report marks a baseline's), then ``after``;
    ``instead`` replaces both (a row that is no judge's, such as a human reference)."""

    judge: str
    after: str = ""
    instead: str | None = None


@dataclass(frozen=True)
class Interval:
    """A coefficient with its 95% interval (``block[key]`` and ``block["ci95"][key]``)."""

    value: Any
    ci: Any

    @classmethod
    def of(cls, block: Mapping[str, Any], key: str) -> Interval:
        return cls(block.get(key), (block.get("ci95") or {}).get(key))


@dataclass(frozen=True)
class Figure:
    """A number shown with ``digits`` decimals (3 unless said)."""

    value: Any
    digits: int = 3


@dataclass(frozen=True)
class JudgeTable:
    """A kind's figures against gold as a table: its title, column heads and rows, each a
    :class:`JudgeCell` then numbers, :class:`Interval` or :class:`Figure` cells; ``key``
    names the HTML table, ``note`` is the paragraph the report puts before it."""

    title: str
    head: tuple[str, ...]
    rows: list[list[Any]]
    key: str = ""
    note: str = ""


class JudgeKind:
    """The protocol every judge kind follows, with the defaults of a kind that has nothing
    of its own (see the module docstring). A kind subclasses it and overrides what it has."""

    name: str = ""
    #: What its own scores rest on: one of :data:`genir_eval.records.EVIDENCE_KINDS`
    #: (the pages name the kind of a judge's score from it); ``""``: not declared, and the
    #: pages say so rather than guess.
    evidence: str = ""
    #: Label items whose value is the judge's own score of the turn or the session.
    own_items: frozenset[str] = frozenset()
    #: Its labels include one per link (``link:<id>``): it may be a scenario's link judge.
    labels_links: bool = False
    #: Its link labels feed the link measures when the scenario names no link judges.
    feeds_link_measures: bool = False
    #: Its labels are citation pairs (``cite:<statement>:<link>``) for the citation measures.
    judges_citations: bool = False
    #: Its turn label ``nuggets`` lists the query's nuggets with the answer's assignment
    #: of each, for the nugget measures (:mod:`genir_eval.metrics.nuggets`).
    judges_nuggets: bool = False
    #: Its comparison with gold combines its scores with ``sdcg_urge`` from another judge's
    #: link labels (``genir-eval meta`` gives it an offline link judge's).
    combines_with_link_labels: bool = False
    #: Its turn label lists the response's useful units (``Turn.segments`` indices), shown
    #: highlighted beside the gold marks in the report.
    marks_units: bool = False
    #: Its labels in words, shown with the number each stands for (``useful (2/3)``), and
    #: the top of the scale shown after the number (``None``: the word alone).
    verdict_words: Mapping[int, str] = {}
    verdict_out_of: int | None = None
    #: Its own score in the glossary: (range, what the value is); ``None``: "its own label".
    own_score: tuple[str, str] | None = None
    #: Its judges' factories (a class whose ``name`` is its registry name), registered
    #: with the kind by :func:`register_kind`.
    judges: tuple[Any, ...] = ()
    #: Its offline twins: task (or task prefix) -> handler of the engine's offline provider
    #: (:func:`genir_eval.llm.providers.offline.register_offline`), registered with the kind.
    twins: Mapping[str, OfflineHandler] = {}

    def turn_value(self, value: Any, n_segments: int) -> float | None:
        """A label value that is not a number as the judge's turn score (``None``: none)."""
        return None

    def gold_blocks(self, context: GoldContext) -> list[GoldBlock]:
        """Its labels against gold, one named block each, in the order ``meta.json`` lists
        them, for a kind defined outside the package that registers no comparison of its own
        in :mod:`genir_eval.meta.gold` (the built-in kinds' are registered there)."""
        return []

    def summary_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        """The terminal summary's table of its judges' figures (``blocks``: judge id ->
        its ``meta.json`` block named after the kind)."""
        return None

    def report_table(self, blocks: Mapping[str, Mapping[str, Any]]) -> JudgeTable | None:
        """The HTML report's table of its judges' figures against gold."""
        return None

    def meta_lines(self, result: Mapping[str, Any]) -> list[str]:
        """Its lines in ``genir-eval meta``'s text output, from the command's result."""
        return []

    def quality_lines(self, block: Mapping[str, Any]) -> list[str]:
        """Its lines about how far a judge's figures can be trusted (calibration, expected
        labels), from the judge's ``meta.json`` block (:mod:`genir_eval.report.judge_quality`)."""
        return []


# Text helpers for the kinds' lines (``genir-eval meta``, the summary's quality lines).


def interval_text(ci: Any) -> str:
    """`` [lo, hi]`` (3 decimals) of a 95% interval; empty without one."""
    if not ci or any(v is None for v in ci):
        return ""
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]"


def _agreement_pair(calibration: Mapping[str, Any]) -> str:
    raw, cal = calibration.get("raw") or {}, calibration.get("calibrated") or {}
    parts = []
    for key, name in (
        ("mae", "mae"),
        ("cohen_kappa_weighted", "kappa(w)"),
        ("cohen_kappa_binary", "kappa(bin)"),
    ):
        if key in raw or key in cal:
            parts.append(f"{name} {number_text(raw.get(key))} -> {number_text(cal.get(key))}")
    return ", ".join(parts)


def calibration_line(label: str, calibration: Mapping[str, Any] | None) -> list[str]:
    """The line of a calibration block (raw -> calibrated agreement), none without one."""
    if not calibration:
        return []
    folds = calibration.get("folds")
    how = "leave-one-session-out" if calibration.get("leave_one_session_out") else f"{folds} folds"
    n = (calibration.get("raw") or {}).get("n")
    return [f"{label} calibrated (isotonic, {how}, n {n}): {_agreement_pair(calibration)}"]


_KINDS: dict[str, JudgeKind] = {}


def register_kind(kind: JudgeKind) -> JudgeKind:
    """Make ``kind`` known under ``kind.name``, with its judges (:attr:`JudgeKind.judges`,
    each under its ``name``) and its offline twins (:attr:`JudgeKind.twins`): a new kind's
    folder is registered by this one call."""
    from genir_eval.judges.base import register_judge
    from genir_eval.llm.providers.offline import register_offline

    if not kind.name:
        raise ValueError("a judge kind needs a name")
    if kind.name in _KINDS and type(_KINDS[kind.name]) is not type(kind):
        raise ValueError(f"judge kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    for factory in kind.judges:
        register_judge(factory.name)(factory)
    for task, handler in kind.twins.items():
        register_offline(task, handler)
    return kind


def judge_kind(name: str | None) -> JudgeKind:
    """The registered kind called ``name``; a kind with nothing of its own otherwise."""
    found = _KINDS.get(name or "")
    if found is not None:
        return found
    plain = JudgeKind()
    plain.name = name or ""
    return plain


def judge_kinds() -> list[JudgeKind]:
    """Every registered kind, in registration order (the order tables are shown in)."""
    return list(_KINDS.values())


def kind_blocks(judges: Mapping[str, Any], kind: JudgeKind) -> dict[str, Mapping[str, Any]]:
    """``meta.json``'s ``judges[<id>][<kind name>]`` blocks by judge id."""
    return {
        judge: entry[kind.name]
        for judge, entry in judges.items()
        if isinstance(entry, Mapping) and isinstance(entry.get(kind.name), Mapping)
    }
