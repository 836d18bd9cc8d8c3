"""``genir-eval arena``: several systems' answers to the same queries, judged in pairs.

Each input file is one system's logs (any input format). Answers are matched by session id
and turn index, or with ``match="query"`` by normalised query text; every pair of systems is
judged on every matched turn (or the pairs listed, or a seeded sample of them) by the
``pairwise`` judge through the same engines, cache, journal and exit codes as ``run``
(:class:`~genir_eval.runner.executor.LocalJudging`). The run folder holds ``pairs.jsonl``
(one row per judged pair), ``arena.json`` (the ranking and its figures) and ``report.html``.

Memory: the matched answers are held (one :class:`~genir_eval.records.Turn` per system and
query); pairs are judged ``window`` at a time and written as they are judged, and only a
compact outcome per pair (systems, winner, style figures) is kept for the ranking.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from genir_eval.errors import ConfigError, InputError, StorageError
from genir_eval.ingest import iter_sessions
from genir_eval.judges.base import make_judge
from genir_eval.judges.pairwise.judge import NAME, Pair, PairwiseJudge
from genir_eval.judges.pairwise.ranking import (
    Outcomes,
    bootstrap_scores,
    count_cycles,
    elo,
    fit_davidson,
    style_fit,
    win_matrix,
)
from genir_eval.judges.pairwise.rows import (
    agreement_with_gold,
    gold_winners,
    pair_row,
    style_features,
)
from genir_eval.judges.prompting import session_language
from genir_eval.records import Turn
from genir_eval.rundir.folder import (
    OUTPUT_VERSION,
    Run,
    _temporary,
    check_writable_folder,
    write_json,
)
from genir_eval.rundir.status import run_status
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

__all__ = [
    "ArenaSettings",
    "System",
    "system_args",
    "systems_of_runs",
    "run_arena",
    "arun_arena",
    "match_answers",
]

WINDOW = 2000


@dataclass(frozen=True)
class System:
    """One system's logs: ``format`` detected when ``None``; ``sources`` a side file of
    source texts (as ``run`` reads them)."""

    name: str
    path: Path
    format: str | None = None
    sources: Path | None = None


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


def system_args(arguments: Sequence[str]) -> tuple[System, ...]:
    """``NAME=PATH`` or ``PATH`` (named by the file's stem) -> systems; two at least, each
    name once."""
    systems = []
    for argument in arguments:
        name, sep, path = argument.partition("=")
        if not sep or not name or Path(argument).exists():
            name, path = Path(argument).stem, argument
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
        systems.append(
            System(name, path, found.get("format"), Path(str(sources)) if sources else None)
        )
    return systems[0], systems[1]


def normalised_query(text: str) -> str:
    """Case-folded, accents and punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


Key = tuple[str, int]
Answers = dict[Key, tuple[Turn, str, str]]  # key -> (turn, language, query shown)


def _read_system(system: System, match: str) -> tuple[Answers, int]:
    """The system's answers by key, and how many answers repeated a key (``match="query"``:
    the same query asked twice; the first answer is kept)."""
    answers: Answers = {}
    repeated = 0
    stream = iter_sessions(
        system.path,
        format=system.format,  # type: ignore[arg-type]
        sources=system.sources,
    )
    for session in stream:
        language = session_language(session)
        for turn in session.turns:
            key: Key = (
                (session.session_id, turn.index)
                if match == "session"
                else (normalised_query(turn.query), 1)
            )
            if key in answers:
                if match == "session":
                    raise InputError(
                        f"session {session.session_id!r} appears twice", path=str(system.path)
                    )
                repeated += 1
                continue
            answers[key] = (turn, language, session.session_id)
    return answers, repeated


@dataclass(frozen=True)
class Matched:
    keys: list[Key]
    answers: dict[str, Answers]
    unmatched: dict[str, int]
    #: the first system's session id and turn index for each key: how rows name the query
    where: dict[Key, tuple[str, int]]


def match_answers(systems: Sequence[System], match: str) -> Matched:
    """Every system's answers on the keys all systems share. Without ``match="query"`` a
    key one system lacks is a located error; with it, the unmatched answers are counted."""
    answers: dict[str, Answers] = {}
    unmatched: dict[str, int] = {}
    for system in systems:
        answers[system.name], unmatched[system.name] = _read_system(system, match)
    first = systems[0]
    if match == "session":
        for system in systems[1:]:
            _check_same(first, answers[first.name], system, answers[system.name])
        keys = list(answers[first.name])
    else:
        shared = set.intersection(*(set(a) for a in answers.values()))
        keys = [key for key in answers[first.name] if key in shared]
        for name, found in answers.items():
            unmatched[name] += sum(1 for key in found if key not in shared)
    if not keys:
        raise InputError(
            "no query is answered by every system (--match query matches by query text)",
            path=str(first.path),
        )
    first_answers = answers[first.name]
    named = {key: (first_answers[key][2], first_answers[key][0].index) for key in keys}
    return Matched(keys, answers, unmatched, named)


def _check_same(first: System, ours: Answers, other: System, theirs: Answers) -> None:
    for key in ours:
        if key not in theirs:
            raise InputError(
                f"session {key[0]!r} turn {key[1]} is answered by {first.name} ({first.path}) "
                f"but not by {other.name}: the systems' sessions must match "
                "(--match query matches by query text)",
                path=str(other.path),
            )
    for key in theirs:
        if key not in ours:
            raise InputError(
                f"session {key[0]!r} turn {key[1]} is answered by {other.name} but not by "
                f"{first.name} ({first.path}): the systems' sessions must match "
                "(--match query matches by query text)",
                path=str(other.path),
            )


PairSpec = tuple[Key, str, str]


def _all_pairs(matched: Matched, names: Sequence[str]) -> list[PairSpec]:
    return [(key, a, b) for key in matched.keys for a, b in itertools.combinations(names, 2)]


def _listed_pairs(path: Path, matched: Matched, names: Sequence[str], match: str) -> list[PairSpec]:
    """``--pairs FILE``: JSONL rows naming ``session_id`` (or ``session``), ``turn`` (1 when
    left out), ``a`` and ``b`` (or ``system_a``/``system_b``); with ``--match query``, a
    ``query`` instead of the session."""
    known = set(matched.keys)
    out: list[PairSpec] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the pairs file: {error}", path=str(path)) from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not JSON: {error.msg}", path=str(path), line=number) from None
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
        if match == "query":
            key: Key = (normalised_query(str(row.get("query", ""))), 1)
        else:
            key = (str(row.get("session_id", row.get("session", ""))), turn)
        if key not in known:
            raise InputError(
                f"no matched answers for {key[0]!r} turn {key[1]}",
                path=str(path),
                line=number,
                column="session_id" if match == "session" else "query",
            )
        out.append((key, str(a), str(b)))
    if not out:
        raise InputError("the pairs file lists no pair", path=str(path))
    return out


def select_pairs(settings: ArenaSettings, matched: Matched) -> list[PairSpec]:
    names = [s.name for s in settings.systems]
    pairs = (
        _listed_pairs(settings.pairs, matched, names, settings.match)
        if settings.pairs is not None
        else _all_pairs(matched, names)
    )
    if settings.max_pairs is not None and settings.max_pairs < len(pairs):
        chosen = sorted(random.Random(settings.seed).sample(range(len(pairs)), settings.max_pairs))
        pairs = [pairs[i] for i in chosen]
    return pairs


def _pair(spec: PairSpec, matched: Matched) -> Pair:
    key, a, b = spec
    turn_a, language, _ = matched.answers[a][key]
    turn_b = matched.answers[b][key][0]
    session_id, turn = matched.where[key]
    return Pair(
        session_id=session_id,
        turn=turn,
        query=turn_a.query,
        a=a,
        b=b,
        answer_a=turn_a,
        answer_b=turn_b,
        language=language,
    )


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


def _compact(row: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("session_id", "turn", "a", "b", "winner", "consistent", "style")
    return {
        **{k: row[k] for k in keep},
        "mirrored": any(o.get("mirrored") for o in row["orders"]),
    }


async def _judge_pairs(
    judging: LocalJudging,
    judge: PairwiseJudge,
    specs: Sequence[PairSpec],
    matched: Matched,
    out: TextIO,
    window: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Judge ``specs`` ``window`` at a time, writing each row as it is judged; returns the
    compact rows, the failed orders and how many orders were judged (a mirrored one is not:
    the offline twin is computed in-process, see :meth:`PairwiseJudge.compare_offline`)."""
    group = judging.groups[0]
    assert group.engine is not None
    engine = group.engine
    offline = group.provider == "offline"
    kept: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    judged = 0
    # an answer meets every other system's: its style figures are read once per window
    styles: dict[int, tuple[Turn, dict[str, float]]] = {}

    def style(turn: Turn) -> dict[str, float]:
        found = styles.get(id(turn))
        if found is None or found[0] is not turn:
            found = styles[id(turn)] = (turn, style_features(turn))
        return found[1]

    for start in range(0, len(specs), window):
        styles.clear()
        pairs = [_pair(spec, matched) for spec in specs[start : start + window]]
        if offline:
            verdicts = [judge.compare_offline(pair) for pair in pairs]
        else:
            verdicts = await asyncio.gather(*(judge.compare(pair, engine) for pair in pairs))
        for verdict in verdicts:
            pair = verdict.pair
            row = pair_row(verdict, (style(pair.answer_a), style(pair.answer_b)))
            out.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
            kept.append(_compact(row))
            judged += sum(1 for order in verdict.orders if not order.mirrored)
            failures.extend(
                {"judge": NAME, "reason": order.missing_reason}
                for order in verdict.orders
                if order.overall is None
            )
    return kept, failures, judged


def _systems_table(
    names: Sequence[str], outcomes: Outcomes, resamples: int, seed: int
) -> list[dict[str, Any]]:
    fit = fit_davidson(outcomes)
    scores = elo(fit.theta)
    draws = bootstrap_scores(outcomes, resamples=resamples, seed=seed) if resamples else None
    matrix = win_matrix(outcomes)
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
        table.append({"name": name, "score": float(scores[i]), "ci95": ci, **record})
    return sorted(table, key=lambda row: -row["score"])


def _style_table(names: Sequence[str], outcomes: Outcomes) -> dict[str, Any]:
    fit = style_fit(outcomes)
    scores = elo(fit.theta)
    return {
        "coefficients": dict(fit.beta),
        "scores": {name: float(scores[i]) for i, name in enumerate(names)},
        "tie_parameter": fit.nu,
    }


def _consistency(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    both = [r["consistent"] for r in rows if r["consistent"] is not None]
    cycles = count_cycles(rows)
    return {
        "position_consistency": sum(both) / len(both) if both else None,
        "pairs_in_both_orders": len(both),
        # the offline twin's swapped order is its mirror: no position bias to measure
        "mirrored_pairs": sum(1 for r in rows if r.get("mirrored")),
        "intransitive_cycles": cycles["cycles"],
        "decided_triads": cycles["triads"],
        "cycle_rate": cycles["cycles"] / cycles["triads"] if cycles["triads"] else None,
    }


def _gold(settings: ArenaSettings, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    if settings.gold is None:
        return None
    from genir_eval.ingest.preferences import read_preferences

    wanted = settings.gold_criterion
    preferences = [
        p
        for p in read_preferences(settings.gold)
        if p.in_arena and (wanted is None or p.criterion in (wanted, None))
    ]
    gold = gold_winners(
        {
            "session_id": p.session,
            "turn": p.turn or 1,
            "a": p.system_a,
            "b": p.system_b,
            "winner": p.winner,
        }
        for p in preferences
    )
    agreement = agreement_with_gold(rows, gold)
    return {"path": str(settings.gold), "criterion": wanted, **agreement.to_dict()}


async def arun_arena(
    settings: ArenaSettings,
    *,
    overrides: Overrides | None = None,
    progress: bool = False,
    log: TextIO | None = None,
    window: int = WINDOW,
) -> dict[str, Any]:
    """Judge the arena and write its folder; returns ``arena.json``'s document."""
    started = time.monotonic()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    scenario = _scenario(settings, overrides)
    check_credentials(scenario)
    say = (lambda m: print(f"genir-eval: {m}", file=log)) if log else (lambda m: None)
    judge = make_judge(NAME, **settings.options)
    assert isinstance(judge, PairwiseJudge)
    matched = match_answers(settings.systems, settings.match)
    specs = select_pairs(settings, matched)
    names = [s.name for s in settings.systems]
    out = settings.out.resolve()
    check_writable_folder(out, "the output folder")
    judging = LocalJudging(scenario, out, progress=progress, log=log, say=say, label="arena")
    say(f"judging {len(specs)} pairs of {len(names)} systems on {len(matched.keys)} queries")
    try:
        with _temporary(out / "pairs.jsonl") as handle:
            async with judging:
                rows, failures, orders = await _judge_pairs(
                    judging, judge, specs, matched, handle, window
                )
    except OSError as error:
        raise StorageError(
            f"cannot write pairs.jsonl: {error.strerror or error}", path=str(out)
        ) from None
    outcomes = Outcomes.from_rows(names, rows)
    missing_pairs = sum(1 for r in rows if r["winner"] is None)
    group = judging.groups[0]
    status = run_status(
        {NAME: {"labels": orders, "missing": len(failures)}},
        failures,
        judging.engine_stats,
        endpoints={NAME: where(group)},
        max_missing=scenario.engine.max_missing,
        allow_permanent=scenario.engine.allow_permanent,
    )
    document: dict[str, Any] = {
        "version": OUTPUT_VERSION,
        "started_at": started_at,
        "judge": {"name": NAME, "options": dict(judge.options), "endpoint": where(group)},
        "inputs": [{"name": s.name, "path": str(s.path)} for s in settings.systems],
        "match": settings.match,
        "queries": len(matched.keys),
        "unmatched": matched.unmatched,
        "pairs": {
            "judged": len(rows) - missing_pairs,
            "missing": missing_pairs,
            "ties": int(np.sum(outcomes.result == 0.5)),
        },
        "systems": _systems_table(names, outcomes, settings.resamples, settings.seed)
        if len(outcomes)
        else [],
        "matrix": win_matrix(outcomes),
        "style_control": _style_table(names, outcomes) if len(outcomes) else None,
        "consistency": _consistency(rows),
        "reply_stats": judge.stats.rates(),
        "engines": judging.engine_stats,
        "status": status,
    }
    document["gold"] = _gold(settings, rows)
    if settings.min_win_rate is not None:
        document["gate"] = gate_against(
            rows,
            baseline=settings.baseline or names[0],
            systems=names,
            threshold=settings.min_win_rate,
            alpha=settings.alpha,
            resamples=settings.gate_resamples or max(settings.resamples, 1000),
            seed=settings.seed,
        )
    document["duration_s"] = round(time.monotonic() - started, 3)
    write_json(out / "arena.json", document)
    from genir_eval.report.arena import render_arena

    render_arena(out / "report.html", document)
    say(f"wrote {out} ({len(rows)} pairs, {missing_pairs} missing) in {document['duration_s']}s")
    return document


def run_arena(settings: ArenaSettings, **options: Any) -> dict[str, Any]:
    """Sync twin of :func:`arun_arena` (works from notebooks too)."""
    from genir_eval.llm.sync import run_sync

    return run_sync(arun_arena(settings, **options))
