"""``genir-eval arena``: several systems' answers to the same queries, judged in pairs.

Each input file is one system's logs (any input format). Answers are matched by session id
and turn index, or with ``match="query"`` by normalised query text; every pair of systems is
judged on every matched turn (or the pairs listed, or a seeded sample of them) by the
``pairwise`` judge through the same engines, cache, journal and exit codes as ``run``
(:class:`~genir_eval.runner.executor.LocalJudging`). The run folder holds ``pairs.jsonl``
(one row per judged pair), ``arena.json`` (the ranking and its figures) and ``report.html``.

Memory is bounded as ``run``'s is: the answers are read once into a SQLite file in the run
folder (:class:`~genir_eval.runner.arena_answers.AnswerStore`) and read back ``window`` pairs
at a time; each row is written as it is judged, and only a few numbers a pair are kept for
the ranking, the gate and the figures (:class:`Tally`); the gold agreement reads
``pairs.jsonl`` back a row at a time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import math
import random
import time
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from genir_eval.errors import ConfigError, InputError, StorageError
from genir_eval.figures import counted
from genir_eval.ingest.validate import has_surrogate
from genir_eval.judges.pairwise.judge import NAME, Pair, PairVerdict, PairwiseJudge
from genir_eval.judges.pairwise.ranking import (
    STYLE_FEATURES,
    Outcomes,
    bootstrap_scores,
    count_cycles,
    elo,
    fit_davidson,
    style_differences,
    style_fit,
    win_matrix,
)
from genir_eval.judges.pairwise.rows import (
    pair_row,
    style_features,
)
from genir_eval.judges.registry import make_judge
from genir_eval.paths import claim_folder, real_path, release_folder
from genir_eval.records import Turn
from genir_eval.rundir.folder import (
    OUTPUT_VERSION,
    Run,
    _temporary,
    check_writable_folder,
    file_digest,
    write_json,
)
from genir_eval.rundir.status import run_status
from genir_eval.runner.arena_answers import STORE_NAME, AnswerStore, System, normalised_query
from genir_eval.runner.arena_figures import (
    example_pairs,
    rate_interval,
    style_intervals,
    win_rates,
)
from genir_eval.runner.arena_gold import gold_block, read_gold
from genir_eval.runner.executor import LocalJudging, where
from genir_eval.runner.pairwise_gate import gate_against
from genir_eval.runner.run import Overrides, apply_overrides
from genir_eval.runner.scenario import (
    AggregateSpec,
    EngineSpec,
    InputSpec,
    JudgeSpec,
    LlmSpec,
    MetaSpec,
    OutputSpec,
    Scenario,
    check_credentials,
)
from genir_eval.stale import remove_stale_parts

__all__ = [
    "ArenaSettings",
    "System",
    "Selection",
    "Tally",
    "system_args",
    "systems_of_runs",
    "select_pairs",
    "run_arena",
    "arun_arena",
]

WINDOW = 2000
#: Files only an arena writes: an unmarked folder holding one is an arena's (see
#: :mod:`genir_eval.paths`).
ARENA_SIGNATURE = ("arena.json", "pairs.jsonl")


@dataclass(frozen=True)
class ArenaSettings:
    """What ``genir-eval arena`` was asked (the command line's options)."""

    systems: tuple[System, ...]
    out: Path
    match: str = "session"
    pairs: Path | None = None
    max_pairs: int | None = None
    seed: int = 0
    resamples: int = 200
    options: Mapping[str, Any] = field(default_factory=dict)
    gold: Path | None = None
    gold_criterion: str | None = "quality_overall"
    baseline: str | None = None
    min_win_rate: float | None = None
    alpha: float = 0.05
    #: the gate's bootstrap resamples (default: ``max(resamples, 1000)``)
    gate_resamples: int | None = None
    #: the command the output folder is marked with (:mod:`genir_eval.paths`): an arena's
    #: folder and ``compare --pairwise --out``'s are not each other's
    command: str = "arena"
    #: the nugget judge's options: each system's nugget scores beside the ranking
    #: (:mod:`genir_eval.runner.arena_nuggets`); ``None``: none
    nuggets: Mapping[str, Any] | None = None


def system_args(arguments: Sequence[str]) -> tuple[System, ...]:
    """``NAME=PATH`` or ``PATH`` (named by the file's stem) -> systems; two at least, each
    name once."""
    systems = []
    for argument in arguments:
        name, sep, path = argument.partition("=")
        if not sep or not name or Path(argument).exists():
            name, path = Path(argument).stem, argument
        if has_surrogate(name):
            # a file name's bytes that are not UTF-8 (the name names files and rows it writes)
            raise ConfigError(
                f"system name {name!r} is not valid Unicode text: name it with NAME=PATH"
            )
        systems.append(System(name, Path(path)))
    if len(systems) < 2:
        raise ConfigError(
            "arena compares systems: give at least two system files (one per system), "
            f"got {len(systems)}"
        )
    seen: dict[str, Path] = {}
    for system in systems:
        if system.name in seen:
            raise ConfigError(
                f"two systems are named {system.name!r} ({seen[system.name]} and {system.path}): "
                "name them with NAME=PATH"
            )
        seen[system.name] = system.path
    return tuple(systems)


def systems_of_runs(run_a: Run, run_b: Run) -> tuple[System, System]:
    """The logs two runs read, as two systems (``genir-eval compare --pairwise``): each run's
    ``run.json`` names its input (path, format, source texts); the systems are named by the
    run folders (``A`` and ``B`` when both folders have one name)."""
    names = [run_a.directory.name, run_b.directory.name]
    if names[0] == names[1]:
        names = ["A", "B"]
    systems = []
    for name, run in zip(names, (run_a, run_b), strict=True):
        found = run.info.get("input")
        if not isinstance(found, Mapping) or not found.get("path"):
            raise InputError(
                "run.json names no input logs (input.path): a pairwise comparison judges the "
                "runs' answers, read again from their logs",
                path=str(run.directory / "run.json"),
            )
        path = Path(str(found["path"]))
        if not path.is_file():
            raise InputError(
                f"the logs this run read ({path}) are gone: a pairwise comparison reads the "
                "answers from them (run.json input.path)",
                path=str(run.directory / "run.json"),
            )
        sources = found.get("sources")
        _check_unchanged(run, path, found.get("sha256"), "logs", "input.sha256")
        if sources:
            _check_unchanged(
                run,
                Path(str(sources)),
                found.get("sources_sha256"),
                "source texts",
                "input.sources_sha256",
            )
        systems.append(
            System(name, path, found.get("format"), Path(str(sources)) if sources else None)
        )
    return systems[0], systems[1]


def _check_unchanged(run: Run, path: Path, digest: Any, what: str, field_name: str) -> None:
    """Refuse ``path`` (read again for ``run``) unless its SHA-256 is the one the run
    recorded when it read it: logs rewritten since would be judged as this run's answers."""
    where_ = str(run.directory / "run.json")
    if not isinstance(digest, str):
        raise InputError(
            f"run.json records no digest of the {what} it read ({field_name}): a run of an "
            f"older genir-eval, whose {what} cannot be told unchanged; run it again",
            path=where_,
        )
    try:
        now = file_digest(path)
    except OSError as error:
        raise InputError(
            f"cannot read the {what} this run read: {error.strerror or error}", path=str(path)
        ) from None
    if now != digest:
        raise InputError(
            f"the {what} this run read ({path}) changed after the run (SHA-256 differs from "
            f"{field_name}): a pairwise comparison would judge other answers than the run's; "
            "run it again on the current file",
            path=where_,
        )


#: A pair to judge: the matched query's position and the two systems' numbers.
PairSpec = tuple[int, int, int]


@dataclass(frozen=True)
class Selection:
    """The pairs to judge, in judging order, as numbers: ``chosen`` indexes (all when
    ``None``) into either every pair of systems on every matched query (query by query, the
    systems' pairs in command-line order) or the pairs listed (``listed``: position, system
    a, system b, three numbers a pair)."""

    total: int
    n_systems: int
    listed: array[int] | None = None
    chosen: array[int] | None = None

    def __len__(self) -> int:
        return self.total if self.chosen is None else len(self.chosen)

    def specs(self, start: int, stop: int) -> list[PairSpec]:
        """The pairs ``start`` to ``stop`` (judging order)."""
        stop = min(stop, len(self))
        indexes = range(start, stop) if self.chosen is None else self.chosen[start:stop]
        if self.listed is not None:
            listed = self.listed
            return [(listed[3 * i], listed[3 * i + 1], listed[3 * i + 2]) for i in indexes]
        combos = list(itertools.combinations(range(self.n_systems), 2))
        return [(i // len(combos), *combos[i % len(combos)]) for i in indexes]


# a turn number SQLite can hold (a turn beyond it names no answer either way)
_MAX_TURN = 2**63 - 1


def _listed_pairs(path: Path, store: AnswerStore, names: Sequence[str], match: str) -> array[int]:
    """``--pairs FILE``: JSONL rows naming ``session_id`` (or ``session``), ``turn`` (1 when
    left out), ``a`` and ``b`` (or ``system_a``/``system_b``); with ``--match query``, a
    ``query`` instead of the session. Read a line at a time; kept as three numbers a pair."""
    out: array[int] = array("q")
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    out.extend(_listed_pair(line, number, path, store, names, match))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the pairs file: {error}", path=str(path)) from None
    if not out:
        raise InputError("the pairs file lists no pair", path=str(path))
    return out


def _listed_pair(
    line: str, number: int, path: Path, store: AnswerStore, names: Sequence[str], match: str
) -> PairSpec:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", path=str(path), line=number) from None
    except RecursionError:
        raise InputError(
            "the JSON is nested too deeply to read", path=str(path), line=number
        ) from None
    if not isinstance(row, dict):
        raise InputError("a row must be a JSON object", path=str(path), line=number)
    a, b = row.get("a", row.get("system_a")), row.get("b", row.get("system_b"))
    for field_name, value in (("a", a), ("b", b)):
        if value not in names:
            raise InputError(
                f"unknown system {value!r}; the systems are {', '.join(names)}",
                path=str(path),
                line=number,
                column=field_name,
            )
    if a == b:
        raise InputError("a and b name the same system", path=str(path), line=number)
    turn = row.get("turn", 1)
    if type(turn) is not int or not 1 <= turn <= _MAX_TURN:
        raise InputError(
            f"must be a 1-based turn number (an integer), not {turn!r}",
            path=str(path),
            line=number,
            column="turn",
        )
    field = "query" if match == "query" else "session_id" if "session_id" in row else "session"
    value = row.get(field, "")
    if type(value) is int:  # a numeric session id names the session spelt with its digits
        value = str(value)
    if not isinstance(value, str) or has_surrogate(value):
        raise InputError(
            f"must be text (valid Unicode), not {value!r}",
            path=str(path),
            line=number,
            column=field,
        )
    if match == "query":
        key, turn = normalised_query(value), 1
    else:
        key = value
    position = store.position(key, turn)
    if position is None:
        raise InputError(
            f"no matched answers for {key!r} turn {turn}",
            path=str(path),
            line=number,
            column="session_id" if match == "session" else "query",
        )
    return position, names.index(str(a)), names.index(str(b))


def select_pairs(settings: ArenaSettings, store: AnswerStore) -> Selection:
    """The pairs to judge: all, or those listed (``--pairs``), or a seeded uniform sample of
    either (``--max-pairs``)."""
    names = [s.name for s in settings.systems]
    if settings.pairs is not None:
        listed = _listed_pairs(settings.pairs, store, names, settings.match)
        selection = Selection(len(listed) // 3, len(names), listed)
    else:
        selection = Selection(store.queries * math.comb(len(names), 2), len(names))
    if settings.max_pairs is not None and settings.max_pairs < selection.total:
        sample = random.Random(settings.seed).sample(range(selection.total), settings.max_pairs)
        selection = dataclasses.replace(selection, chosen=array("q", sorted(sample)))
    return selection


def _pairs(
    specs: Sequence[PairSpec], store: AnswerStore, names: Sequence[str]
) -> tuple[list[Pair], dict[tuple[int, int], Turn]]:
    """The window's pairs, their answers read back from the store (each answer once)."""
    answers = store.answers((position, s) for position, a, b in specs for s in (a, b))
    where = {position: store.where(position) for position in {spec[0] for spec in specs}}
    pairs = []
    for position, a, b in specs:
        first, second = answers[(position, a)], answers[(position, b)]
        session_id, turn = where[position]
        pairs.append(
            Pair(
                session_id=session_id,
                turn=turn,
                query=first.turn.query,
                a=names[a],
                b=names[b],
                answer_a=first.turn,
                answer_b=second.turn,
                language=first.language,
            )
        )
    return pairs, {place: answer.turn for place, answer in answers.items()}


def _scenario(settings: ArenaSettings, overrides: Overrides | None) -> Scenario:
    """A one-judge scenario for the engine machinery ``run`` uses (its defaults, then the
    command line's engine options)."""
    spec = JudgeSpec(name=NAME, id=NAME, llm=LlmSpec(), options=dict(settings.options))
    scenario = Scenario(
        name="arena",
        path=None,
        input=InputSpec(path=settings.systems[0].path),
        engine=EngineSpec(),
        judges=(spec,),
        aggregate=AggregateSpec(),
        meta=MetaSpec(),
        output=OutputSpec(dir=settings.out),
    )
    return apply_overrides(scenario, overrides)


class Tally:
    """What the end of an arena needs of each judged pair, as numbers (about 60 bytes a
    pair; ``pairs.jsonl`` holds the rest): the query's position, the systems' numbers, the
    result (1 a won, 0 b won, 0.5 a tie, NaN missing), the style differences the
    style-controlled fit reads, whether both orders agreed; and counts of the mirrored
    pairs, the orders judged and the failures by reason."""

    def __init__(self) -> None:
        self.query: array[int] = array("q")
        self.a: array[int] = array("q")
        self.b: array[int] = array("q")
        self.result: array[float] = array("d")
        self.style: array[float] = array("d")
        #: 1 both orders agreed, 0 they did not, -1 not judged in both orders
        self.consistent: array[int] = array("b")
        self.mirrored = 0
        self.orders = 0
        self.failures: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self.result)

    def add(self, spec: PairSpec, verdict: PairVerdict, row: Mapping[str, Any]) -> None:
        position, a, b = spec
        self.query.append(position)
        self.a.append(a)
        self.b.append(b)
        winner = row["winner"]
        self.result.append(
            math.nan if winner is None else 1.0 if winner == "a" else 0.0 if winner == "b" else 0.5
        )
        self.style.extend(style_differences(row["style"]["a"], row["style"]["b"]))
        consistent = row["consistent"]
        self.consistent.append(-1 if consistent is None else int(bool(consistent)))
        self.mirrored += any(order.mirrored for order in verdict.orders)
        self.orders += sum(1 for order in verdict.orders if not order.mirrored)
        for order in verdict.orders:
            if order.overall is None:
                self.failures[str(order.missing_reason)] += 1

    @property
    def missing(self) -> int:
        return int(np.isnan(np.frombuffer(self.result, dtype=float)).sum())

    def outcomes(self, names: Sequence[str]) -> Outcomes:
        """The judged pairs (missing ones left out), queries numbered in the order they
        first appear, as :meth:`Outcomes.from_rows` numbers them."""
        result = np.frombuffer(self.result, dtype=float)
        kept = ~np.isnan(result)
        query = np.frombuffer(self.query, dtype=np.int64)[kept]
        _, first, inverse = np.unique(query, return_index=True, return_inverse=True)
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        return Outcomes(
            tuple(names),
            np.frombuffer(self.a, dtype=np.int64)[kept],
            np.frombuffer(self.b, dtype=np.int64)[kept],
            result[kept],
            rank[inverse.reshape(-1)],
            np.frombuffer(self.style, dtype=float).reshape(-1, len(STYLE_FEATURES))[kept],
        )

    def failure_rows(self) -> list[dict[str, Any]]:
        return [
            {"judge": NAME, "reason": reason, "count": count}
            for reason, count in self.failures.items()
        ]


async def _judge_pairs(
    judging: LocalJudging,
    judge: PairwiseJudge,
    selection: Selection,
    store: AnswerStore,
    names: Sequence[str],
    out: TextIO,
    window: int,
) -> Tally:
    """Judge the selected pairs ``window`` at a time (their answers read back from
    ``store``, so only a window's answers are in memory), writing each row as it is judged;
    returns the numbers kept of each pair (a mirrored order is not judged: the offline
    twin is computed in-process, see :meth:`PairwiseJudge.compare_offline`)."""
    group = judging.groups[0]
    assert group.engine is not None
    engine = group.engine
    offline = group.provider == "offline"
    tally = Tally()
    for start in range(0, len(selection), window):
        specs = selection.specs(start, start + window)
        pairs, turns = _pairs(specs, store, names)
        # an answer meets every other system's: its style figures are read once per window
        styles = {place: style_features(turn) for place, turn in turns.items()}
        if offline:
            verdicts = [judge.compare_offline(pair) for pair in pairs]
        else:
            verdicts = await asyncio.gather(*(judge.compare(pair, engine) for pair in pairs))
        for (position, a, b), verdict in zip(specs, verdicts, strict=True):
            row = pair_row(verdict, (styles[(position, a)], styles[(position, b)]))
            out.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
            tally.add((position, a, b), verdict, row)
    return tally


def _systems_table(
    names: Sequence[str], outcomes: Outcomes, resamples: int, seed: int
) -> list[dict[str, Any]]:
    fit = fit_davidson(outcomes)
    scores = elo(fit.theta)
    draws = bootstrap_scores(outcomes, resamples=resamples, seed=seed) if resamples else None
    matrix = win_matrix(outcomes)
    rates = win_rates(outcomes, resamples=resamples, seed=seed)
    table = []
    for i, name in enumerate(names):
        record = {"wins": 0, "ties": 0, "losses": 0}
        for counts in matrix[name].values():
            for k in record:
                record[k] += counts[k]
        ci = (
            [float(np.percentile(draws[:, i], 2.5)), float(np.percentile(draws[:, i], 97.5))]
            if draws is not None
            else None
        )
        rate = rates[name]
        table.append(
            {
                "name": name,
                "score": float(scores[i]),
                "ci95": ci,
                **record,
                "win_rate": rate["win_rate"],
                "win_rate_ci95": rate["ci95"],
            }
        )
    return sorted(table, key=lambda row: -row["score"])


def _style_table(
    names: Sequence[str], outcomes: Outcomes, resamples: int, seed: int
) -> dict[str, Any]:
    fit = style_fit(outcomes)
    scores = elo(fit.theta)
    return {
        "coefficients": dict(fit.beta),
        "scores": {name: float(scores[i]) for i, name in enumerate(names)},
        "scores_ci95": style_intervals(outcomes, resamples=resamples, seed=seed),
        "tie_parameter": fit.nu,
    }


def _consistency(tally: Tally, outcomes: Outcomes) -> dict[str, Any]:
    consistent = np.frombuffer(tally.consistent, dtype=np.int8)
    both = consistent[consistent >= 0]
    cycles = count_cycles(outcomes)
    return {
        "position_consistency": int(both.sum()) / both.size if both.size else None,
        "position_consistency_ci95": rate_interval(int(both.sum()), int(both.size)),
        "pairs_in_both_orders": int(both.size),
        # the offline twin's swapped order is its mirror: no position bias to measure
        "mirrored_pairs": tally.mirrored,
        "intransitive_cycles": cycles["cycles"],
        "decided_triads": cycles["triads"],
        "cycle_rate": cycles["cycles"] / cycles["triads"] if cycles["triads"] else None,
    }


async def arun_arena(
    settings: ArenaSettings,
    *,
    overrides: Overrides | None = None,
    progress: bool = False,
    log: TextIO | None = None,
    window: int = WINDOW,
) -> dict[str, Any]:
    """Judge the arena and write its folder; returns ``arena.json``'s document. Pairs are
    judged ``window`` at a time: the answers in memory are that window's."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    started = time.monotonic()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    scenario = _scenario(settings, overrides)
    check_credentials(scenario)
    say = (lambda m: print(f"genir-eval: {m}", file=log)) if log else (lambda m: None)
    judge = make_judge(NAME, **settings.options)
    assert isinstance(judge, PairwiseJudge)
    names = [s.name for s in settings.systems]
    out = real_path(settings.out)
    made = not out.exists()
    # pairs.jsonl, arena.json and report.html are replaced: only in a folder an arena made
    claimed = claim_folder(out, settings.command, signature=ARENA_SIGNATURE, option="--out")
    remove_stale_parts(out, [STORE_NAME, "pairs.jsonl", "arena.json", "report.html"])
    check_writable_folder(out, "the output folder")
    try:
        with AnswerStore(out) as store:
            store.read(settings.systems, settings.match)
            selection = select_pairs(settings, store)
            gold = read_gold(settings.gold, settings.gold_criterion, store, names)
            # the nugget judge's options and file are checked before any pair is judged
            nugget_judge = _nugget_judge(settings, say)
            judging = LocalJudging(
                scenario, out, progress=progress, log=log, say=say, label="arena"
            )
            say(
                f"judging {counted(len(selection), 'pair')} of {counted(len(names), 'system')} on "
                f"{counted(store.queries, 'query/queries')}"
            )
            try:
                with _temporary(out / "pairs.jsonl") as handle:
                    async with judging:
                        tally = await _judge_pairs(
                            judging, judge, selection, store, names, handle, window
                        )
                        nuggets = await _nuggets(settings, nugget_judge, judging, say)
            except OSError as error:
                raise StorageError(
                    f"cannot write pairs.jsonl: {error.strerror or error}", path=str(out)
                ) from None
            queries, unmatched = store.queries, dict(store.unmatched)
    except (InputError, ConfigError):
        release_folder(out, claimed)
        _remove_if_made(out, made)
        raise
    document: dict[str, Any] = {
        "version": OUTPUT_VERSION,
        "started_at": started_at,
        "judge": {
            "name": NAME,
            "options": dict(judge.options),
            "endpoint": where(judging.groups[0]),
            # the offline twin is a baseline, not a model's judgment: the report says so
            "offline": judging.groups[0].provider == "offline",
        },
        "inputs": [{"name": s.name, "path": str(s.path)} for s in settings.systems],
        "match": settings.match,
        "queries": queries,
        "unmatched": unmatched,
        **_figures(settings, tally),
        "reply_stats": judge.stats.rates(),
        "engines": judging.engine_stats,
        "status": _status(scenario, judging, tally),
    }
    document["gold"] = gold_block(settings.gold, settings.gold_criterion, gold, out / "pairs.jsonl")
    document["examples"] = example_pairs(out / "pairs.jsonl", names)
    document["settings"] = _settings(settings, selection)
    if nuggets is not None:
        document["nuggets"] = nuggets
    if settings.min_win_rate is not None:
        document["gate"] = gate_against(
            tally.outcomes(names),
            baseline=settings.baseline or names[0],
            threshold=settings.min_win_rate,
            alpha=settings.alpha,
            resamples=settings.gate_resamples or max(settings.resamples, 1000),
            seed=settings.seed,
        )
    document["duration_s"] = round(time.monotonic() - started, 3)
    write_json(out / "arena.json", document)
    from genir_eval.report.arena import render_arena

    render_arena(out / "report.html", document)
    missing = document["pairs"]["missing"]
    say(
        f"wrote {out} ({counted(len(tally), 'pair')}, {missing} missing) "
        f"in {document['duration_s']}s"
    )
    return document


def _nugget_judge(settings: ArenaSettings, say: Any) -> Any:
    """The nugget judge, its options checked and its nugget file read against the systems'
    queries (a located error before any call), when asked; its notes said."""
    if settings.nuggets is None:
        return None
    from genir_eval.runner.arena_nuggets import nugget_judge

    judge = nugget_judge(settings.systems, settings.nuggets)
    for note in judge.notes:
        say(note)
    return judge


async def _nuggets(
    settings: ArenaSettings, judge: Any, judging: LocalJudging, say: Any
) -> dict[str, Any] | None:
    """Each system's nugget scores through the arena's engine, when asked."""
    if judge is None:
        return None
    from genir_eval.runner.arena_nuggets import nugget_scores

    say(f"scoring the answers of {len(settings.systems)} systems with the nugget judge")
    return await nugget_scores(
        settings.systems,
        judge,
        judging.groups[0].engine,
        resamples=max(settings.resamples, 200),
        seed=settings.seed,
    )


def _settings(settings: ArenaSettings, selection: Selection) -> dict[str, Any]:
    """What the arena was asked, as its report says it (``None``: not given)."""
    return {
        "match": settings.match,
        "pairs_file": str(settings.pairs) if settings.pairs else None,
        "max_pairs": settings.max_pairs,
        "pairs_selected": len(selection),
        "seed": settings.seed,
        "resamples": settings.resamples,
        "gold": str(settings.gold) if settings.gold else None,
        "gold_criterion": settings.gold_criterion if settings.gold else None,
        "baseline": settings.baseline,
        "min_win_rate": settings.min_win_rate,
        "alpha": settings.alpha,
        "nuggets": settings.nuggets is not None,
    }


def _remove_if_made(folder: Path, made: bool) -> None:
    """Leave no output folder behind for refused input: the folder is removed when this
    arena made it and it is empty (the answer store is removed as it closes)."""
    if not made:
        return
    try:
        folder.rmdir()  # only when empty
    except OSError:
        pass  # the input's error is the one to report


def _figures(settings: ArenaSettings, tally: Tally) -> dict[str, Any]:
    """The pairs' counts, the ranking, the matrix, style control and consistency, from the
    numbers kept of each pair."""
    names = [s.name for s in settings.systems]
    outcomes = tally.outcomes(names)
    missing_pairs = tally.missing
    return {
        "pairs": {
            "judged": len(tally) - missing_pairs,
            "missing": missing_pairs,
            "ties": int(np.sum(outcomes.result == 0.5)),
        },
        "systems": _systems_table(names, outcomes, settings.resamples, settings.seed)
        if len(outcomes)
        else [],
        "matrix": win_matrix(outcomes),
        "style_control": _style_table(names, outcomes, settings.resamples, settings.seed)
        if len(outcomes)
        else None,
        "consistency": _consistency(tally, outcomes),
    }


def _status(scenario: Scenario, judging: LocalJudging, tally: Tally) -> dict[str, Any]:
    return run_status(
        {NAME: {"labels": tally.orders, "missing": sum(tally.failures.values())}},
        tally.failure_rows(),
        judging.engine_stats,
        endpoints={NAME: where(judging.groups[0])},
        max_missing=scenario.engine.max_missing,
        allow_permanent=scenario.engine.allow_permanent,
    )


def run_arena(settings: ArenaSettings, **options: Any) -> dict[str, Any]:
    """Sync twin of :func:`arun_arena` (works from notebooks too)."""
    from genir_eval.llm.sync import run_sync

    return run_sync(arun_arena(settings, **options))
