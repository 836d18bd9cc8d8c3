"""Comparing two runs over the same sessions: a regression gate.

For each chosen score, the paired deltas ``b - a`` per session (or per turn), their mean with
a paired-bootstrap 95% interval, a paired randomisation (sign-flip) test of "no difference"
(exact when there are few pairs, otherwise Monte Carlo; both seeded), the effect size
Cohen's d_z (mean delta over the deltas' standard deviation; Cohen 1988, Lakens 2013), and
the sessions that got worse. Higher scores are better, except for a measure that declares
otherwise (``unsupported_claims``: a rise is the regression; :func:`higher_is_better`).

:func:`gate` turns a comparison into one of three verdicts by one rule
(:data:`VERDICT_RULE`): a regression when the mean drops (for a lower-is-better measure,
rises) by more than ``max_drop``, drops with a randomisation p below ``alpha``, or the new
mean falls below ``fail_below``; otherwise too few to decide when fewer than
``min_pairs`` pairs were compared; otherwise a pass. The bootstrap interval shows the size
of the change and does not decide; when it lies wholly on the worse side while the test
does not call the drop significant, the verdict says so beside it.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genir_eval import figures as display
from genir_eval.errors import InputError
from genir_eval.meta.decide import NO_INTERVAL, too_small
from genir_eval.meta.mcnemar import mcnemar
from genir_eval.meta.multiplicity import CORRECTION_WORDS, adjust
from genir_eval.meta.paired import cluster_bootstrap, cluster_randomization_test, nested_bootstrap
from genir_eval.rundir.folder import SESSIONS_FILE, TURNS_FILE, Level, Run, load_run
from genir_eval.runner.compare_noise import JudgeRepeats, judge_repeats, judgments, noise_notes
from genir_eval.runner.run_threshold import GateThreshold, gate_threshold, refuse_failed
from genir_eval.settings import COMPARE_VERDICT_RULE as VERDICT_RULE
from genir_eval.settings import DEFAULT_MIN_SESSIONS as DEFAULT_MIN_PAIRS

__all__ = [
    "COMPARE_VERSION",
    "Delta",
    "Comparison",
    "GateResult",
    "VERDICT_RULE",
    "DEFAULT_MIN_PAIRS",
    "verdict_of",
    "GateThreshold",
    "gate_threshold",
    "refuse_failed",
    "compare_runs",
    "compare_scores",
    "gate",
    "gate_all",
    "across_words",
    "describe",
    "markdown_summary",
    "randomization_test",
    "paired_bootstrap",
    "cohen_dz",
    "higher_is_better",
    "shown",
]

COMPARE_VERSION = 1
EXACT_MAX_PAIRS = 14  # 2**14 sign patterns: enumerate instead of sampling


@dataclass(frozen=True)
class Delta:
    """One session's (or turn's, ``"<session>#<turn>"``) score in both runs."""

    key: str
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on one score at one level."""

    metric: str
    level: Level
    deltas: tuple[Delta, ...]
    mean_a: float | None
    mean_b: float | None
    mean_delta: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    p_exact: bool
    cohen_dz: float | None
    missing: tuple[str, ...] = ()
    higher_is_better: bool = True
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    #: the test behind ``p_value``: :data:`RANDOMISATION`, or :data:`MCNEMAR` when every
    #: score of both runs is 0 or 1 (a thumbs-up, a rubric's pass or fail)
    test: str = "randomisation"
    #: the sessions the pairs come from (the unit resampled; at turn level, fewer than n)
    units: int | None = None
    #: the runs' repeated judgments of the score (``run --repeats``), when either has some
    #: (:class:`JudgeRepeats`)
    repeats: JudgeRepeats | None = None

    @property
    def n(self) -> int:
        return len(self.deltas)

    @property
    def sessions(self) -> int:
        return self.n if self.units is None else self.units

    def worse(self) -> list[Delta]:
        """The pairs whose score got worse (went down; up for a lower-is-better measure),
        the largest change first."""
        sign = 1.0 if self.higher_is_better else -1.0
        return sorted(
            (d for d in self.deltas if sign * d.delta < 0), key=lambda d: (sign * d.delta, d.key)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": COMPARE_VERSION,
            "metric": self.metric,
            "level": self.level,
            "n": self.n,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "mean_delta": self.mean_delta,
            "ci95": list(self.ci95) if self.ci95 else None,
            "p_value": self.p_value,
            "p_exact": self.p_exact,
            "cohen_dz": self.cohen_dz,
            "higher_is_better": self.higher_is_better,
            "test": self.test,
            "sessions": self.sessions,
            "missing": list(self.missing),
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "worse": [{"key": d.key, "a": d.a, "b": d.b, "delta": d.delta} for d in self.worse()],
            "repeats": self.repeats.to_dict() if self.repeats is not None else None,
        }


@dataclass(frozen=True)
class GateResult:
    """One comparison's verdict: ``reasons`` a regression's, ``undecided`` why the sample is
    too small to pass, ``notes`` what a reader must see beside a pass (the interval lying on
    the worse side while the test does not call the drop significant)."""

    passed: bool
    reasons: tuple[str, ...] = field(default_factory=tuple)
    undecided: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: the p-value adjusted across the compared scores (``--correction``), when it decided
    p_adjusted: float | None = None

    @property
    def verdict(self) -> str:
        """``"regression"``, ``"too few to decide"`` or ``"pass"``."""
        if not self.passed:
            return "regression"
        return "too few to decide" if self.undecided else "pass"


def verdict_of(results: Sequence[GateResult]) -> str:
    """The verdict of several comparisons: any regression, else any too few to decide, else
    pass."""
    verdicts = {r.verdict for r in results}
    for verdict in ("regression", "too few to decide"):
        if verdict in verdicts:
            return verdict
    return "pass"


def paired_bootstrap(
    deltas: Sequence[float], *, n_resamples: int = 10_000, seed: int = 0
) -> tuple[float, float] | None:
    """95% percentile interval of the mean of ``deltas`` over resampled pairs (Efron &
    Tibshirani 1993); ``None`` with fewer than two pairs."""
    if len(deltas) < 2 or n_resamples < 1:
        return None
    values = np.asarray(deltas, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // len(values))
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        idx = rng.integers(0, len(values), size=(stop - start, len(values)))
        means[start:stop] = values[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def randomization_test(
    deltas: Sequence[float], *, n_resamples: int = 10_000, seed: int = 0
) -> tuple[float | None, bool]:
    """Two-sided paired randomisation test of a zero mean delta by flipping signs (Fisher's
    permutation test for paired data). Returns ``(p, exact)``: all ``2**n`` sign patterns
    when ``n <= 14``, else ``n_resamples`` seeded draws with the ``(k + 1) / (R + 1)``
    estimate (Phipson & Smyth 2010). ``None`` without pairs."""
    if not deltas:
        return None, True
    values = np.asarray(deltas, dtype=float)
    observed = abs(values.mean())
    tolerance = 1e-12 * max(1.0, observed)
    n = len(values)
    if n <= EXACT_MAX_PAIRS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        means = np.abs(signs @ values / n)
        return float(np.mean(means >= observed - tolerance)), True
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        signs = rng.choice((1.0, -1.0), size=(size, n))
        hits += int(np.sum(np.abs(signs @ values / n) >= observed - tolerance))
    return (hits + 1) / (n_resamples + 1), False


def cohen_dz(deltas: Sequence[float]) -> float | None:
    """Cohen's d_z: mean delta / sample standard deviation of the deltas. ``None`` when it
    is undefined: fewer than two pairs, or every delta equal and non-zero (no spread to
    divide by). Equal deltas computed in floating point (``0.3 - 0.1`` and ``0.5 - 0.3``)
    differ in their last bits, so a spread within rounding of the mean counts as none:
    dividing by it gave d_z = -6.7e15 for ten equal drops."""
    if len(deltas) < 2:
        return None
    values = np.asarray(deltas, dtype=float)
    sd = float(values.std(ddof=1))
    mean = float(values.mean())
    scale = float(np.max(np.abs(values)))
    if sd <= _EQUAL_SPREAD * scale:
        return 0.0 if mean == 0.0 else None
    return mean / sd


#: A standard deviation at most this fraction of the largest |delta| is rounding error, not
#: spread: scores are read back rounded to float64, whose relative precision is ~2.2e-16, and
#: a mean of n such values carries up to ~n of those units (1e-9 leaves room for 10^6 pairs).
_EQUAL_SPREAD = 1e-9


# a key (a session id or "<session>#<turn>" from a run folder) as printed: every control and
# bidirectional control character written as its escape (genir_eval.figures)
shown = display.shown


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def higher_is_better(metric: str) -> bool:
    """Whether a higher ``metric`` is an improvement: what its measure declares (a score
    name may carry a ``gold:`` prefix or an ``@judge`` suffix), ``True`` for any other score."""
    from genir_eval.errors import ConfigError
    from genir_eval.metrics import parse_measure

    base = metric.removeprefix("gold:").split("@", 1)[0]
    try:
        return parse_measure(base).HIGHER_IS_BETTER
    except ConfigError:
        return True


def compare_scores(
    a: Mapping[str, float | None],
    b: Mapping[str, float | None],
    *,
    metric: str,
    level: Level = "session",
    n_resamples: int = 10_000,
    seed: int = 0,
    common: bool = False,
    sources: tuple[str, str] = ("run A", "run B"),
    repeats: tuple[Mapping[str, Sequence[float | None]], Mapping[str, Sequence[float | None]]]
    | None = None,
) -> Comparison:
    """Compare two ``{key: score}`` maps over the same keys (see :func:`compare_runs`);
    with ``common``, over the keys both share (the others are listed, not compared).
    ``sources`` names where each map was read, for the refusal of a score that is not a
    finite number. ``repeats``: each run's ``{key: [value of each repeat]}``
    (:meth:`Run.repeat_scores`); when both have some, the interval is the nested
    resample's (:func:`~genir_eval.meta.paired.nested_bootstrap`: a key without repeats
    in a run is its one score there)."""
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    if (only_a or only_b) and not common:
        unit = "sessions" if level == "session" else "turns"
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} only in run A (e.g. {', '.join(map(shown, only_a[:3]))})")
        if only_b:
            parts.append(f"{len(only_b)} only in run B (e.g. {', '.join(map(shown, only_b[:3]))})")
        raise InputError(
            f"the runs cover different {unit}: {'; '.join(parts)}. Compare runs over the same "
            "input, or pass --common to compare the ones both runs share"
        )
    pairs, missing = [], []
    for key in sorted(set(a) & set(b)):
        va, vb = a[key], b[key]
        if va is None or vb is None:
            missing.append(key)
        else:
            pairs.append(Delta(key, float(va), float(vb)))
    _refuse_non_finite(pairs, metric, level, sources)
    deltas = [d.delta for d in pairs]
    sessions = [d.key.rsplit("#", 1)[0] for d in pairs] if level == "turn" else None
    p_value: float | None
    one_per_session = sessions is None or len(set(sessions)) == len(sessions)
    if _binary(pairs) and one_per_session:
        test = mcnemar(sum(d.a > d.b for d in pairs), sum(d.b > d.a for d in pairs))
        p_value, exact, test_name = test.p_mid, True, MCNEMAR
    elif sessions is not None:
        # McNemar's test takes its pairs for independent; turns of one session are not, so
        # a pass/fail score over several turns a session is sign-flipped by session instead
        p_value, exact = cluster_randomization_test(
            deltas, sessions, n_resamples=n_resamples, seed=seed
        )
        test_name = RANDOMISATION
    else:
        p_value, exact = randomization_test(deltas, n_resamples=n_resamples, seed=seed)
        test_name = RANDOMISATION
    keys = [d.key for d in pairs]
    repeated = judge_repeats(keys, sessions if sessions is not None else keys, repeats)
    if repeated is not None and repeated.carried_by == "both":
        assert repeats is not None
        ci95 = nested_bootstrap(
            [judgments(d.key, d.a, repeats[0]) for d in pairs],
            [judgments(d.key, d.b, repeats[1]) for d in pairs],
            sessions if sessions is not None else keys,
            n_resamples=n_resamples,
            seed=seed,
        )
    elif sessions is not None:
        ci95 = cluster_bootstrap(deltas, sessions, n_resamples=n_resamples, seed=seed)
    else:
        ci95 = paired_bootstrap(deltas, n_resamples=n_resamples, seed=seed)
    return Comparison(
        metric=metric,
        level=level,
        deltas=tuple(pairs),
        mean_a=_mean([d.a for d in pairs]),
        mean_b=_mean([d.b for d in pairs]),
        mean_delta=_mean(deltas),
        ci95=ci95,
        p_value=p_value,
        p_exact=exact,
        cohen_dz=cohen_dz(deltas),
        missing=tuple(missing),
        higher_is_better=higher_is_better(metric),
        only_a=tuple(only_a),
        only_b=tuple(only_b),
        test=test_name,
        units=len(set(sessions)) if sessions is not None else None,
        repeats=repeated,
    )


#: The tests behind a comparison's p-value, as the verdict names them.
RANDOMISATION = "randomisation"
MCNEMAR = "McNemar mid-p"


def _binary(pairs: Sequence[Delta]) -> bool:
    """Whether every score of both runs is 0 or 1: a pass/fail score, compared by
    McNemar's test on the pairs where the runs disagree."""
    return bool(pairs) and all(d.a in (0.0, 1.0) and d.b in (0.0, 1.0) for d in pairs)


def _refuse_non_finite(
    pairs: Sequence[Delta], metric: str, level: Level, sources: tuple[str, str]
) -> None:
    """:class:`InputError` (exit 2) when a score of either run is NaN or infinite: the
    gate decides on numbers, and a mean, an interval or a test of one that is not a
    number is none (a NaN mean compares false with every bound, which passed the gate)."""
    unit = "sessions" if level == "session" else "turns"
    for label, source, side in (("A", sources[0], "a"), ("B", sources[1], "b")):
        bad = [d for d in pairs if not math.isfinite(getattr(d, side))]
        if bad:
            shown_keys = ", ".join(f"{shown(d.key)} ({getattr(d, side)})" for d in bad[:3])
            raise InputError(
                f"run {label}: score {metric!r} is not a finite number in {len(bad)} of "
                f"{len(pairs)} {unit} (e.g. {shown_keys}); the gate does not decide on values "
                "that are not numbers: judge those again or remove them from the run",
                path=source,
            )


def compare_runs(
    run_a: Run | str | os.PathLike[str],
    run_b: Run | str | os.PathLike[str],
    *,
    metric: str,
    level: Level = "session",
    n_resamples: int = 10_000,
    seed: int = 0,
    common: bool = False,
) -> Comparison:
    """Compare ``metric`` of run B against run A, paired by session (or by turn).

    Only pairs where both runs have a score count; the keys where either is missing are
    listed in :attr:`Comparison.missing`. Runs over different sessions (or turns) raise
    :class:`~genir_eval.errors.InputError` unless ``common`` (then the sessions only one run
    has are left out and listed in :attr:`Comparison.only_a` / ``only_b``), as does a metric
    neither run has.
    """
    loaded = [r if isinstance(r, Run) else load_run(r) for r in (run_a, run_b)]
    maps = []
    for label, run in zip("AB", loaded, strict=True):
        try:
            maps.append(run.scores(metric, level))
        except KeyError as error:
            raise InputError(f"run {label} ({run.directory}): {error.args[0]}") from None
    table = SESSIONS_FILE if level == "session" else TURNS_FILE
    repeats = (loaded[0].repeat_scores(metric, level), loaded[1].repeat_scores(metric, level))
    return compare_scores(
        maps[0],
        maps[1],
        metric=metric,
        level=level,
        n_resamples=n_resamples,
        seed=seed,
        common=common,
        sources=(str(loaded[0].directory / table), str(loaded[1].directory / table)),
        repeats=repeats if any(repeats) else None,
    )


def gate(
    comparison: Comparison,
    *,
    max_drop: float | None = None,
    alpha: float | None = 0.05,
    fail_below: float | None = None,
    min_pairs: int = 0,
    margin: float | None = None,
    p_adjusted: float | None = None,
    correction: str = "none",
) -> GateResult:
    """``comparison``'s verdict by :data:`VERDICT_RULE`. With a ``margin`` (non-inferiority):
    a regression when the worse end of the paired 95% interval of the change lies past
    ``-margin``; without: a regression when B is worse with a p-value (``p_adjusted``, the
    family's adjusted one by ``correction``, else the comparison's own) below ``alpha``. Either
    way a regression when B's mean is below ``fail_below``. Else too few to decide with fewer
    than ``min_pairs`` sessions (or two), else a pass. ``max_drop`` is the deprecated name
    of ``margin``."""
    name = f"{comparison.metric} ({comparison.level} level)"
    if comparison.n == 0:
        return GateResult(False, (f"{name}: no pair has a score in both runs",))
    if comparison.sessions < MIN_UNITS:
        return GateResult(True, (), (_too_few(comparison, name, MIN_UNITS, "two at least"),))
    assert comparison.mean_b is not None
    flag = "--margin"
    if margin is None and max_drop is not None:
        margin, flag = max_drop, "--max-drop"
    if margin is not None:
        reasons = _not_non_inferior(comparison, name, margin, flag)
    else:
        reasons = _significantly_worse(comparison, name, alpha, p_adjusted, correction)
    if fail_below is not None and comparison.mean_b < fail_below:
        reasons.append(f"{name}: mean {comparison.mean_b:.4f} is below --fail-below {fail_below:g}")
    noise = noise_notes(comparison, name)
    if reasons:
        return GateResult(False, tuple(reasons), notes=noise, p_adjusted=p_adjusted)
    undecided = (
        (_too_few(comparison, name, min_pairs, f"--min-sessions {min_pairs}"),)
        if comparison.sessions < min_pairs
        else ()
    )
    notes = _interval_notes(comparison, alpha) if margin is None else ()
    return GateResult(True, (), undecided, (*notes, *noise), p_adjusted=p_adjusted)


#: Fewer sessions than this are too few to decide whatever --min-sessions says: a test or an
#: interval over one session (or one session's turns) says nothing of other sessions.
MIN_UNITS = 2


def _too_few(c: Comparison, name: str, bound: int, bound_words: str) -> str:
    if c.level == "session":
        return (
            f"{name}: {c.n} sessions compared, fewer than {bound_words}: too few to tell a "
            "change from noise"
        )
    sessions = f"{c.sessions} session{'s' if c.sessions != 1 else ''}"
    return (
        f"{name}: {c.n} turns of {sessions} compared, fewer sessions than {bound_words}: too "
        "few to tell a change from noise (the session is the unit resampled, not the turn)"
    )


def _worse_end(c: Comparison) -> float | None:
    """The worse end of the interval of the change, as an improvement (negative: worse)."""
    if c.ci95 is None:
        return None
    return c.ci95[0] if c.higher_is_better else -c.ci95[1]


def _not_non_inferior(c: Comparison, name: str, margin: float, flag: str) -> list[str]:
    """Why non-inferiority by ``margin`` is not shown: the interval's worse end lies below
    ``-margin`` (an end exactly at it passes)."""
    end = _worse_end(c)
    assert end is not None  # two sessions at least: an interval
    if end >= -margin:
        return []
    deprecated = (
        f" (--max-drop is deprecated: it is --margin {margin:g}, read against the interval)"
        if flag == "--max-drop"
        else ""
    )
    moved = "dropped" if c.higher_is_better else "rose (lower is better)"
    return [
        f"{name}: mean {moved} by up to {-end:.4f} within the 95% interval of the change, more "
        f"than {flag} {margin:g} (non-inferiority not shown){deprecated}"
    ]


def _significantly_worse(
    c: Comparison, name: str, alpha: float | None, p_adjusted: float | None, correction: str
) -> list[str]:
    assert c.mean_delta is not None
    loss = -c.mean_delta if c.higher_is_better else c.mean_delta
    p = c.p_value if p_adjusted is None else p_adjusted
    if not alpha or loss <= 0 or p is None or p >= alpha:
        return []
    moved = "dropped" if c.higher_is_better else "rose (lower is better)"
    adjusted = (
        f", {CORRECTION_NAMES[correction]}-adjusted p = {p:.4g}"
        if p_adjusted is not None and correction != "none"
        else ""
    )
    return [
        f"{name}: mean {moved} significantly ({c.test} p = {c.p_value:.4g}{adjusted} "
        f"< alpha {alpha:g})"
    ]


def across_words(correction: str, scores: int) -> str:
    """How the error was held across ``scores`` compared scores, as the terminal and the
    pull-request comment say it."""
    return f"Across {scores} compared score{'s' if scores != 1 else ''}: {CORRECTION_WORDS[correction]}."


#: The corrections' names as the verdict writes them.
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "unadjusted"}


def gate_all(
    comparisons: Sequence[Comparison],
    *,
    alpha: float | None = 0.05,
    correction: str = "holm",
    margins: Mapping[str, float] | None = None,
    fail_below: float | None = None,
    min_pairs: int = 0,
    max_drop: float | None = None,
) -> list[GateResult]:
    """Each comparison's verdict with the error held across them: the p-values of the
    comparisons tested for a significant drop (those without a margin in ``margins``)
    adjusted together by ``correction`` (:mod:`genir_eval.meta.multiplicity`). A
    comparison given a margin is decided by non-inferiority; every one must show it for
    the gate to pass, which needs no correction (an intersection-union test: Berger 1982).
    ``max_drop``: the deprecated margin of every score without its own."""
    margins = margins or {}
    tested = [
        i
        for i, c in enumerate(comparisons)
        if c.metric not in margins
        and max_drop is None
        and c.p_value is not None
        and c.sessions >= MIN_UNITS
    ]
    adjusted = adjust([float(comparisons[i].p_value or 0.0) for i in tested], correction)
    by_index = dict(zip(tested, adjusted, strict=True))
    return [
        gate(
            c,
            alpha=alpha,
            fail_below=fail_below,
            min_pairs=min_pairs,
            margin=margins.get(c.metric),
            max_drop=max_drop,
            p_adjusted=by_index.get(i),
            correction=correction,
        )
        for i, c in enumerate(comparisons)
    ]


def _interval_notes(comparison: Comparison, alpha: float | None) -> tuple[str, ...]:
    """Why no regression is called although the bootstrap interval lies wholly on the worse
    side of zero: the randomisation test decides, and it does not find the drop significant
    (a percentile interval over few pairs is too narrow: it never reaches past the pairs'
    own extremes)."""
    ci, p = comparison.ci95, comparison.p_value
    if ci is None:
        return ()
    worse_side = ci[1] < 0 if comparison.higher_is_better else ci[0] > 0
    if not worse_side:
        return ()
    test = "n/a" if p is None else f"{p:.4g}"
    bar = "disabled" if not alpha else f"{alpha:g}"
    return (
        f"{comparison.metric} ({comparison.level} level): the 95% interval "
        f"[{ci[0]:+.4f}, {ci[1]:+.4f}] excludes zero on the worse side, but the verdict rests "
        f"on the randomisation test (p = {test}, --alpha {bar}), which does not call the drop "
        f"significant over {comparison.n} pairs: a bootstrap interval over few pairs is too "
        "narrow to decide",
    )


def _delta_interval(c: Comparison, form: str) -> str:
    """The delta's interval in ``form``; below :data:`~genir_eval.meta.decide.MIN_N` pairs none
    is printed (the report's and the summary's rule: :func:`~genir_eval.meta.decide.too_small`)."""
    if too_small(c.n):
        return f" ({NO_INTERVAL})"
    return form.format(*c.ci95) if c.ci95 else ""


def describe(comparison: Comparison, *, worst: int = 5) -> str:
    """A few lines for the terminal."""
    c = comparison
    unit = "sessions" if c.level == "session" else "turns"
    left_out = (
        f"; left out {len(c.only_a)} {unit} only in run A and {len(c.only_b)} only in run B"
        if c.only_a or c.only_b
        else ""
    )
    if c.n == 0:
        return f"{c.metric} ({c.level} level): no pair has a score in both runs{left_out}"
    assert c.mean_a is not None and c.mean_b is not None and c.mean_delta is not None
    ci = _delta_interval(c, " [95% CI {:+.4f}, {:+.4f}]")
    dz = _dz_text(c)
    p = "n/a" if c.p_value is None else f"{c.p_value:.4g}{' (exact)' if c.p_exact else ''}"
    direction = "" if c.higher_is_better else ", lower is better"
    lines = [
        f"{c.metric} ({c.level} level{direction}, n={c.n}): mean {c.mean_a:.4f} -> {c.mean_b:.4f}, "
        f"delta {c.mean_delta:+.4f}{ci}; Cohen's d_z {dz}; {c.test} p {p}"
    ]
    if left_out:
        lines.append(f"  compared the {unit} both runs share{left_out}")
    if c.missing:
        lines.append(f"  {len(c.missing)} left out (score missing in a run)")
    got_worse = c.worse()
    if got_worse:
        listed = ", ".join(f"{shown(d.key)} ({d.delta:+.4f})" for d in got_worse[:worst])
        lines.append(f"  worse in {len(got_worse)} of {c.n} {unit}: {listed}")
    else:
        lines.append(f"  no {unit[:-1]} got worse")
    return "\n".join(lines)


def _dz_text(c: Comparison) -> str:
    if c.cohen_dz is not None:
        return f"{c.cohen_dz:+.3f}"
    if c.n >= 2:
        return "undefined (every paired difference is equal)"
    return "n/a"


def _md(text: Any) -> str:
    """Text for a Markdown table cell: no pipes or line breaks, no HTML, no control or
    bidirectional control characters."""
    return (
        shown(str(text))
        .replace("|", "\\|")
        .replace("\n", " ")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("`", "'")
    )


def markdown_summary(
    comparisons: Sequence[Comparison],
    results: Sequence[GateResult],
    *,
    run_a: str = "A",
    run_b: str = "B",
    worst: int = 5,
    correction: str | None = None,
) -> str:
    """A pull-request comment: verdict, one table row per score, the sessions that got
    worse (folded), what was left out, and why the gate failed; with ``correction``, how the
    error was held across the scores (:func:`across_words`)."""
    verdict = {
        "pass": "✅ no regression",
        "regression": "❌ regression",
        "too few to decide": "⚠️ too few to decide",
    }[verdict_of(results)]
    lines = [
        f"### genir-eval: {verdict}",
        "",
        f"Run B `{_md(run_b)}` against run A `{_md(run_a)}`: paired deltas, 95% paired "
        "bootstrap interval over sessions, randomisation test (McNemar's mid-p test for a "
        "pass/fail score).",
        "",
        *([across_words(correction, len(comparisons)), ""] if correction else []),
        "| score | level | n | A | B | Δ [95% CI] | p | d_z | |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for c, r in zip(comparisons, results, strict=True):
        if c.n == 0 or c.mean_a is None or c.mean_b is None or c.mean_delta is None:
            lines.append(f"| `{_md(c.metric)}` | {c.level} | 0 | – | – | – | – | – | ❌ |")
            continue
        ci = _delta_interval(c, " [{:+.3f}, {:+.3f}]")
        p = "–" if c.p_value is None else f"{c.p_value:.3g}"
        if r.p_adjusted is not None and c.p_value is not None and r.p_adjusted != c.p_value:
            p += f" (adjusted {r.p_adjusted:.3g})"
        dz = (
            f"{c.cohen_dz:+.2f}"
            if c.cohen_dz is not None
            else ("undefined (equal differences)" if c.n >= 2 else "–")
        )
        lines.append(
            f"| `{_md(c.metric)}` | {c.level} | {c.n} | {c.mean_a:.3f} | {c.mean_b:.3f} | "
            f"{c.mean_delta:+.3f}{ci} | {p} | {dz} | "
            f"{ {'pass': '✅', 'regression': '❌'}.get(r.verdict, '⚠️') } |"
        )
    notes = []
    for c in comparisons:
        unit = "sessions" if c.level == "session" else "turns"
        if c.only_a or c.only_b:
            notes.append(
                f"- `{_md(c.metric)}`: compared the {unit} both runs share; left out "
                f"{len(c.only_a)} only in A, {len(c.only_b)} only in B"
            )
        if c.missing:
            notes.append(f"- `{_md(c.metric)}`: {len(c.missing)} {unit} without a score in a run")
    if notes:
        lines += ["", *notes]
    reasons = [reason for r in results for reason in r.reasons]
    if reasons:
        lines += ["", "**Why it failed**", "", *(f"- {_md(reason)}" for reason in reasons)]
    undecided = [reason for r in results for reason in r.undecided]
    if undecided and not reasons:
        lines += ["", "**Why it cannot decide**", "", *(f"- {_md(reason)}" for reason in undecided)]
    notes = [note for r in results for note in r.notes]
    if notes:
        lines += ["", "**Read with the verdict**", "", *(f"- {_md(note)}" for note in notes)]
    lines += ["", f"Rule: {_md(VERDICT_RULE)}"]
    for c in comparisons:
        got_worse = c.worse()
        if not got_worse:
            continue
        unit = "sessions" if c.level == "session" else "turns"
        rows = "\n".join(
            f"| `{_md(d.key)}` | {d.a:.3f} | {d.b:.3f} | {d.delta:+.3f} |"
            for d in got_worse[:worst]
        )
        lines += [
            "",
            f"<details><summary>{len(got_worse)} of {c.n} {unit} got worse on "
            f"{_md(c.metric)} (largest drops)</summary>",
            "",
            f"| {unit[:-1]} | A | B | Δ |",
            "| --- | ---: | ---: | ---: |",
            rows,
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"
