"""Query- and session-level measures over statement usefulness, as value objects.

A measure declares what is computed: its name carries its parameters, it prints as
``sDCG-URGE(br=1.35,bq=1.05)`` and :func:`~genir_eval.metrics.parse.parse_measure` gives back an equal object (the
ir_measures convention). ``compute`` takes statement usefulness values (see
:mod:`genir_eval.metrics.usefulness`): one list ``u`` for a query measure, one list per turn
for a session measure.

The ``*-URGE`` measures reproduce the formulas the URGE study published, oddities included
(the per-statement discount ``d_i`` grows with ``i``; the first turn's discount is
``ln(bq)/ln(bq) = 1``; ``sRBP-URGE`` with ``b=0`` only sees each turn's first statement).
``sDCG`` (Järvelin et al., ECIR 2008) and ``sRBP`` (Lipani et al., ICTIR 2019) are the
textbook session measures, kept under their own names so the two are never confused.

Positions ``i`` (statements) and ``k`` (turns) are 1-based. Every session measure is
computed over the turns with a non-empty ``u`` only, renumbered ``k = 1..n'``; a session
with no such turn has no value (``None``, never 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import ClassVar

from genir_eval.errors import ConfigError
from genir_eval.records import LINK_USEFULNESS

__all__ = [
    "Measure",
    "QueryMeasure",
    "SessionMeasure",
    "Decreasing",
    "Increasing",
    "Equal",
    "MiddleHigh",
    "MiddleLow",
    "SDCG_URGE",
    "SRBP_URGE",
    "RSDCG_URGE",
    "RSRBP_URGE",
    "SDCG",
    "SRBP",
    "MEASURES",
    "WEIGHTINGS",
    "positional_weights",
]

# Printed parameter names that are not Python identifiers.
_PRINTED = {"lam": "lambda"}
_FIELD = {v: k for k, v in _PRINTED.items()}


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Measure:
    """Base of all measures: a frozen dataclass whose fields are its parameters.

    ``NAME`` is the printed name, ``SHORT`` the registry key, ``LEVEL`` ``"query"``,
    ``"session"`` or ``"citation"``; ``HIGHER_IS_BETTER`` says which way is an improvement
    (a regression gate reads it); ``EVIDENCE`` names what its values rest on, one of
    :data:`genir_eval.records.EVIDENCE_KINDS` (every page names a score's kind from
    it): each family of measures declares its own, the base none.
    """

    NAME: ClassVar[str]
    EVIDENCE: ClassVar[str]
    SHORT: ClassVar[str]
    LEVEL: ClassVar[str]
    # For readers of a report: the values it takes, and what it averages or sums.
    RANGE: ClassVar[str] = ""
    HIGHER_IS_BETTER: ClassVar[bool] = True
    SUMMARY: ClassVar[str] = ""

    def params(self) -> dict[str, float]:
        """Parameters by printed name, in declaration order."""
        return {_PRINTED.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{self.NAME}: parameter {f.name!r} must be a number")
            object.__setattr__(self, f.name, float(value))
        self._validate()

    def _validate(self) -> None:
        """Raise :class:`ConfigError` when a parameter is outside its domain."""

    def __str__(self) -> str:
        params = self.params()
        if not params:
            return self.NAME
        inner = ",".join(f"{k}={_format_number(v)}" for k, v in params.items())
        return f"{self.NAME}({inner})"

    def __repr__(self) -> str:
        return str(self)


def _require(condition: bool, measure: Measure, message: str) -> None:
    if not condition:
        raise ConfigError(f"{measure.NAME}: {message}")


# --- query level: positional weightings -------------------------------------------------

WEIGHTINGS: tuple[str, ...] = ("decreasing", "increasing", "equal", "middle_high", "middle_low")


def positional_weights(how: str, m: int) -> list[float]:
    """URGE's positional weights ``w_1..w_m`` for a weighting named in :data:`WEIGHTINGS`.

    decreasing ``1/i``; increasing ``i``; equal ``1``; middle_high ``i`` while
    ``i - 1 < m/2``, else ``m + 1 - i``; middle_low ``1/i`` while ``i - 1 < m/2``, else
    ``1/(m + 1 - i)``.
    """
    positions = range(1, m + 1)
    if how == "decreasing":
        return [1.0 / i for i in positions]
    if how == "increasing":
        return [float(i) for i in positions]
    if how == "equal":
        return [1.0] * m
    if how == "middle_high":
        return [float(i) if i - 1 < m / 2 else float(m + 1 - i) for i in positions]
    if how == "middle_low":
        return [1.0 / i if i - 1 < m / 2 else 1.0 / (m + 1 - i) for i in positions]
    raise ConfigError(f"unknown positional weighting {how!r}; expected one of {WEIGHTINGS}")


class QueryMeasure(Measure):
    """A positional weighting of one turn's ``u``: ``sum(w_i u_i) / sum(w_i)``.

    A weighted mean, so it stays on the label scale (0-3); an empty ``u`` gives ``None``.
    """

    LEVEL = "query"
    RANGE = "0-3 (the link label scale)"
    #: Statement usefulness is read from the usefulness of the links a statement cites.
    EVIDENCE = LINK_USEFULNESS

    def compute(self, u: Sequence[float]) -> float | None:
        if not u:
            return None
        w = positional_weights(self.SHORT, len(u))
        return sum(wi * ui for wi, ui in zip(w, u, strict=True)) / sum(w)


@dataclass(frozen=True, repr=False)
class Decreasing(QueryMeasure):
    """Weights ``1/i``: early statements count most (URGE)."""

    NAME = SHORT = "decreasing"
    SUMMARY = "the usefulness of a turn's statements, weighted 1/i by position (early statements count most)"


@dataclass(frozen=True, repr=False)
class Increasing(QueryMeasure):
    """Weights ``i``: late statements count most (URGE)."""

    NAME = SHORT = "increasing"
    SUMMARY = (
        "the usefulness of a turn's statements, weighted i by position (late statements count most)"
    )


@dataclass(frozen=True, repr=False)
class Equal(QueryMeasure):
    """Equal weights: the mean of ``u`` (URGE)."""

    NAME = SHORT = "equal"
    SUMMARY = "the plain mean usefulness of a turn's statements"


@dataclass(frozen=True, repr=False)
class MiddleHigh(QueryMeasure):
    """Weights rising as ``i`` to the middle then falling as ``m + 1 - i`` (URGE)."""

    NAME = SHORT = "middle_high"
    SUMMARY = "the usefulness of a turn's statements, the middle ones weighted most"


@dataclass(frozen=True, repr=False)
class MiddleLow(QueryMeasure):
    """Weights ``1/i`` to the middle then ``1/(m + 1 - i)``: both ends count most (URGE)."""

    NAME = SHORT = "middle_low"
    SUMMARY = "the usefulness of a turn's statements, the first and last ones weighted most"


# --- session level ----------------------------------------------------------------------


class SessionMeasure(Measure):
    """A measure of a whole session from ``u`` per turn.

    Turns with an empty ``u`` are skipped and the others renumbered ``k = 1..n'``; with no
    such turn the result is ``None``. Scores are sums over turns, not means: they grow with
    the number of turns as the published formulas do.
    """

    LEVEL = "session"
    #: Statement usefulness is read from the usefulness of the links a statement cites.
    EVIDENCE = LINK_USEFULNESS

    def compute(self, u_per_turn: Sequence[Sequence[float]]) -> float | None:
        turns = [list(u) for u in u_per_turn if len(u) > 0]
        if not turns:
            return None
        return self._score(turns)

    def _score(self, turns: list[list[float]]) -> float:
        raise NotImplementedError


def _urge_query_gain(u: Sequence[float], br: float) -> float:
    # As published: d_i = log2(i + 1) / log2(br) increases with i (the opposite of a DCG
    # discount), and normalising by sum(d_i) cancels the 1/log2(br) factor.
    d = [math.log2(i + 1) / math.log2(br) for i in range(1, len(u) + 1)]
    return sum((2.0**ui - 1.0) * di for ui, di in zip(u, d, strict=True)) / sum(d)


def _urge_turn_discount(k: int, bq: float) -> float:
    # ln(k + bq - 1) / ln(bq): 1 for the first turn, ~14.7 for the second at bq=1.05.
    return math.log(k + bq - 1.0) / math.log(bq)


def _rbp_query_sum(u: Sequence[float], b: float, p: float) -> float:
    # (b p)^(i-1) with 0^0 = 1, which Python's 0.0 ** 0 already gives.
    return sum(ui * (b * p) ** (i - 1) for i, ui in enumerate(u, start=1))


def _rbp_turn_factor(b: float, p: float) -> float:
    return (p - b * p) / (1.0 - b * p)


@dataclass(frozen=True, repr=False)
class SDCG_URGE(SessionMeasure):  # noqa: N801 (the measure's published name)
    """URGE's session DCG: ``sum_k g_k / (ln(k + bq - 1) / ln(bq))``.

    ``g_k = sum_i (2^u_i - 1) d_i / sum_i d_i`` with ``d_i = log2(i + 1) / log2(br)``,
    reproduced exactly as URGE published it (``d_i`` increasing with ``i``; the first turn
    undiscounted).
    """

    NAME: ClassVar[str] = "sDCG-URGE"
    SHORT: ClassVar[str] = "sdcg_urge"
    RANGE = "0 and up: per turn 0-7 (2^u - 1), discounted by turn and summed, so longer sessions score higher"
    SUMMARY = "the usefulness of each turn's statements (as 2^u - 1), summed over turns with a turn discount (URGE)"
    br: float = 1.35
    bq: float = 1.05

    def _validate(self) -> None:
        _require(self.br > 1.0, self, "br must be > 1")
        _require(self.bq > 1.0, self, "bq must be > 1")

    def _score(self, turns: list[list[float]]) -> float:
        return sum(
            _urge_query_gain(u, self.br) / _urge_turn_discount(k, self.bq)
            for k, u in enumerate(turns, start=1)
        )


@dataclass(frozen=True, repr=False)
class SRBP_URGE(SessionMeasure):  # noqa: N801
    """URGE's session RBP: ``sum_k s_k ((p - b p) / (1 - b p))^(k-1)``.

    ``s_k = sum_i u_i (b p)^(i-1)`` with ``0^0 = 1``, exactly as URGE published it: no
    ``(1 - p)`` normalisation, and with the default ``b = 0`` each turn contributes only its
    first statement's value.
    """

    NAME: ClassVar[str] = "sRBP-URGE"
    SHORT: ClassVar[str] = "srbp_urge"
    RANGE = (
        "0 and up: per turn the first statement's usefulness 0-3 (default b=0), summed over turns"
    )
    SUMMARY = "statement usefulness discounted geometrically by position and turn (rank-biased), summed over turns (URGE)"
    b: float = 0.0
    p: float = 0.05

    def _validate(self) -> None:
        _require(0.0 <= self.b <= 1.0, self, "b must be in [0, 1]")
        _require(0.0 < self.p < 1.0, self, "p must be in (0, 1)")

    def _score(self, turns: list[list[float]]) -> float:
        q = _rbp_turn_factor(self.b, self.p)
        return sum(
            _rbp_query_sum(u, self.b, self.p) * q ** (k - 1) for k, u in enumerate(turns, start=1)
        )


@dataclass(frozen=True, repr=False)
class RSDCG_URGE(SessionMeasure):  # noqa: N801
    """URGE's recency-sensitive sDCG: ``sum_k g_k exp(-lambda (n' - k)) / (ln(k + bq - 1) / ln(bq))``.

    ``g_k`` as in :class:`SDCG_URGE`; the last turn is not damped, earlier ones are damped by
    ``exp(-lambda)`` per turn of distance. Reproduced exactly as URGE published it.
    """

    NAME: ClassVar[str] = "RS-DCG-URGE"
    SHORT: ClassVar[str] = "rsdcg_urge"
    RANGE = "0 and up: like sDCG-URGE, earlier turns damped by exp(-lambda) per turn"
    SUMMARY = "sDCG-URGE with the last turns counting most (recency-sensitive, URGE)"
    br: float = 1.35
    bq: float = 1.05
    lam: float = 3.0

    def _validate(self) -> None:
        _require(self.br > 1.0, self, "br must be > 1")
        _require(self.bq > 1.0, self, "bq must be > 1")
        _require(self.lam >= 0.0, self, "lambda must be >= 0")

    def _score(self, turns: list[list[float]]) -> float:
        n = len(turns)
        return sum(
            _urge_query_gain(u, self.br)
            * math.exp(-self.lam * (n - k))
            / _urge_turn_discount(k, self.bq)
            for k, u in enumerate(turns, start=1)
        )


@dataclass(frozen=True, repr=False)
class RSRBP_URGE(SessionMeasure):  # noqa: N801
    """URGE's recency-sensitive sRBP: ``sum_k s_k ((p - b p) / (1 - b p))^(k-1) exp(-lambda (n' - k))``.

    ``s_k`` as in :class:`SRBP_URGE`. Reproduced exactly as URGE published it.
    """

    NAME: ClassVar[str] = "RS-RBP-URGE"
    SHORT: ClassVar[str] = "rsrbp_urge"
    RANGE = "0 and up: like sRBP-URGE, earlier turns damped by exp(-lambda) per turn"
    SUMMARY = "sRBP-URGE with the last turns counting most (recency-sensitive, URGE)"
    b: float = 0.0
    p: float = 0.05
    lam: float = 0.05

    def _validate(self) -> None:
        _require(0.0 <= self.b <= 1.0, self, "b must be in [0, 1]")
        _require(0.0 < self.p < 1.0, self, "p must be in (0, 1)")
        _require(self.lam >= 0.0, self, "lambda must be >= 0")

    def _score(self, turns: list[list[float]]) -> float:
        n = len(turns)
        q = _rbp_turn_factor(self.b, self.p)
        return sum(
            _rbp_query_sum(u, self.b, self.p) * q ** (k - 1) * math.exp(-self.lam * (n - k))
            for k, u in enumerate(turns, start=1)
        )


@dataclass(frozen=True, repr=False)
class SDCG(SessionMeasure):
    """Session DCG of Järvelin, Price, Delcambre and Nielsen (ECIR 2008).

    ``sum_k DCG_k / (1 + log_bq(k))`` where ``DCG_k = sum_i u_i / max(1, log_b(i))`` is the
    DCG of Järvelin and Kekäläinen (TOIS 2002) that the paper uses: gains are the labels
    themselves and ranks before ``b`` are not discounted. Defaults ``b=2, bq=4`` are the
    paper's. Not normalised.
    """

    NAME: ClassVar[str] = "sDCG"
    SHORT: ClassVar[str] = "sdcg"
    RANGE = "0 and up (not normalised; grows with turns and statements)"
    SUMMARY = "the DCG of each turn's statement usefulness, summed over turns with a turn discount (Jarvelin et al. 2008)"
    b: float = 2.0
    bq: float = 4.0

    def _validate(self) -> None:
        _require(self.b > 1.0, self, "b must be > 1")
        _require(self.bq > 1.0, self, "bq must be > 1")

    def _score(self, turns: list[list[float]]) -> float:
        total = 0.0
        for k, u in enumerate(turns, start=1):
            dcg = sum(ui / max(1.0, math.log(i, self.b)) for i, ui in enumerate(u, start=1))
            total += dcg / (1.0 + math.log(k, self.bq))
        return total


@dataclass(frozen=True, repr=False)
class SRBP(SessionMeasure):
    """Session RBP of Lipani, Carterette and Yilmaz (ICTIR 2019).

    ``(1 - p) sum_k ((p - b p) / (1 - b p))^(k-1) sum_i (b p)^(i-1) u_i``: at each step the
    user stops with probability ``1 - p``, reads on with ``b p`` and reformulates with
    ``(1 - b) p``. Gains are the labels themselves (not rescaled to [0, 1]). Defaults
    ``p=0.8, b=0.5`` are a common RBP persistence and an even balance; the paper sweeps both.
    """

    NAME: ClassVar[str] = "sRBP"
    SHORT: ClassVar[str] = "srbp"
    RANGE = "0 and up (not normalised)"
    SUMMARY = (
        "statement usefulness under a user who stops, reads on or reformulates (Lipani et al. 2019)"
    )
    p: float = 0.8
    b: float = 0.5

    def _validate(self) -> None:
        _require(0.0 < self.p < 1.0, self, "p must be in (0, 1)")
        _require(0.0 <= self.b <= 1.0, self, "b must be in [0, 1]")

    def _score(self, turns: list[list[float]]) -> float:
        q = _rbp_turn_factor(self.b, self.p)
        return (1.0 - self.p) * sum(
            _rbp_query_sum(u, self.b, self.p) * q ** (k - 1) for k, u in enumerate(turns, start=1)
        )


MEASURES: dict[str, type[Measure]] = {
    cls.SHORT: cls
    for cls in (
        Decreasing,
        Increasing,
        Equal,
        MiddleHigh,
        MiddleLow,
        SDCG_URGE,
        SRBP_URGE,
        RSDCG_URGE,
        RSRBP_URGE,
        SDCG,
        SRBP,
    )
}
"""Measure classes by short name; ``MEASURES["sdcg_urge"]()`` has the published defaults."""
