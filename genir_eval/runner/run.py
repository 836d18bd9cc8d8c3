"""Running a scenario end to end: sessions in, judged and scored run directory out.

:func:`run_scenario` loads the scenario and the sessions, checks credentials (before any
call), runs every judge over every session concurrently through the engine (one engine per
provider/model, sharing one cache; one progress line for the whole run), assembles the
tables and the meta-evaluation (:mod:`genir_eval.runner.assemble`) and writes the run
directory (:mod:`genir_eval.rundir.folder`) and ``report.html``.

A run resumes: every judgment is journaled in the output directory as it completes, so
running the same scenario into the same directory again only asks for what is missing;
and the shared cache answers repeated requests across runs without a provider call.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import platform
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from genir_eval.errors import ConfigError, InputError, StorageError
from genir_eval.figures import counted
from genir_eval.ingest import Format, iter_sessions
from genir_eval.ingest.preferences import read_preferences
from genir_eval.judges.base import Judge, Label
from genir_eval.judges.kinds import judge_kind
from genir_eval.judges.offline.semantic import evidence_name
from genir_eval.judges.registry import make_judge
from genir_eval.llm.config import engine_fields, setting_value
from genir_eval.llm.sync import run_sync
from genir_eval.meta.headline import Headline, choose_headline
from genir_eval.paths import claim_folder, real_path
from genir_eval.records import PACKAGE_VERSION, Session
from genir_eval.report.evidence import evidence_rows
from genir_eval.report.html import render_report
from genir_eval.rundir.folder import (
    EVIDENCE_FILE,
    FAILURES_FILE,
    LINKS_FILE,
    OUTPUT_VERSION,
    RUN_FILE,
    SESSIONS_FILE,
    TURNS_FILE,
    Run,
    RunWriter,
    check_writable_folder,
    file_digest,
)
from genir_eval.rundir.status import run_status
from genir_eval.runner.assemble import Assembly, JudgeInfo, link_judge_ids
from genir_eval.runner.executor import Group, LocalJudging, groups_of, where
from genir_eval.runner.noise import Reservoir, noise_line, noise_of_run, repeat_rows
from genir_eval.runner.scenario import (
    JudgeSpec,
    LlmSpec,
    Scenario,
    check_credentials,
    load_scenario,
    measure_groups,
)
from genir_eval.settings import public_url

if TYPE_CHECKING:
    from genir_eval.runner.ray_executor import RayJudging

__all__ = ["Overrides", "run_scenario", "arun_scenario", "apply_overrides"]


class Overrides:
    """Settings that replace the scenario's, as the command line's options do.

    ``provider``/``model``/``base_url`` apply to every judge; ``engine`` (or the same as
    keywords) names fields of the engine's configuration
    (:class:`~genir_eval.llm.config.EngineConfig`), given as the command line gives them
    (``cache="none"``, ``journal="none"`` or a path). ``None`` leaves the scenario's."""

    def __init__(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        engine: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> None:
        given = {**dict(engine or {}), **settings}
        unknown = sorted(set(given) - {f.name for f in engine_fields()})
        if unknown:
            raise TypeError(f"Overrides: no engine setting named {', '.join(unknown)}")
        self.provider, self.model, self.base_url = provider, model, base_url
        self.engine = {
            name: setting_value(name, value) for name, value in given.items() if value is not None
        }


def apply_overrides(scenario: Scenario, overrides: Overrides | None) -> Scenario:
    """``scenario`` with the given overrides applied (``None`` fields keep the scenario's)."""
    if overrides is None:
        return scenario
    o = overrides
    engine = replace(scenario.engine, **o.engine)
    judges = scenario.judges
    provider = o.provider
    if provider is None and o.base_url is not None:
        # a base URL alone means an OpenAI-compatible server, as the command line's help says
        provider = "openai"
    if provider is not None or o.model is not None or o.base_url is not None:
        judges = tuple(
            replace(
                spec,
                llm=LlmSpec(
                    provider=provider or spec.llm.provider,
                    # a new provider without a model means that provider's default model
                    model=o.model
                    if o.model is not None
                    else (None if provider and provider != spec.llm.provider else spec.llm.model),
                    base_url=o.base_url if o.base_url is not None else spec.llm.base_url,
                ),
            )
            for spec in judges
        )
    return replace(scenario, engine=engine, judges=judges)


def _without_credentials(document: Any) -> Any:
    """The scenario as read, with the credentials, query and fragment of every ``base_url``
    removed: run.json is shared, the key in ``https://user:key@host`` is not."""
    if isinstance(document, Mapping):
        return {
            key: public_url(value)
            if key == "base_url" and isinstance(value, str)
            else _without_credentials(value)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [_without_credentials(value) for value in document]
    return document


def _judge_info(judge: Judge, spec: JudgeSpec) -> JudgeInfo:
    return JudgeInfo(id=spec.id, kind=str(getattr(judge, "kind", "")))


def _fallback_headline(scenario: Scenario, infos: Sequence[JudgeInfo]) -> str | None:
    """What a run leads with when no judge with evidence ran: a judge's own score that is
    not a grounding one (not a link, citation or span judge's), else the first
    statement-usefulness measure (with a link judge), else the first citation measure (with
    a citation judge), else the first judge's score."""
    kinds = {j.id: judge_kind(j.kind) for j in infos}
    own = [
        j.id
        for j in infos
        if not (kinds[j.id].labels_links or kinds[j.id].judges_citations or kinds[j.id].marks_units)
    ]
    if own:
        return own[0]
    has_link_judge = scenario.aggregate.link_judges or any(
        k.feeds_link_measures for k in kinds.values()
    )
    has_citation_judge = any(k.judges_citations for k in kinds.values())
    usefulness, citation = measure_groups(
        scenario.aggregate.measures, citation_judge=has_citation_judge
    )
    if has_link_judge and usefulness:
        return usefulness[0]
    if has_citation_judge and citation:
        return citation[0]
    return infos[0].id if infos else None


def _default_headline(scenario: Scenario, infos: Sequence[JudgeInfo]) -> Headline:
    """The score the run leads with (:func:`genir_eval.meta.headline.choose_headline`): the
    scenario's, else the judge with evidence of tracking people, else the fallback."""
    names = {spec.id: spec.name for spec in scenario.judges}
    return choose_headline(
        [(j.id, names.get(j.id, j.id)) for j in infos],
        _fallback_headline(scenario, infos),
        named=scenario.meta.headline,
    )


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {
        "genir_eval": PACKAGE_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    for package in ("numpy", "scipy", "matplotlib"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            pass
    return out


def _resumed(judges: Any) -> int:
    total = 0
    for judge in judges:
        stats: Any = getattr(judge, "stats", None)
        total += int(getattr(stats, "reused", 0) or 0)
    return total


def _sum_cost(stats: Sequence[Mapping[str, Any]]) -> float | None:
    costs = [s.get("cost_usd") for s in stats]
    if any(c is None for c in costs):
        return None
    return float(sum(c for c in costs if c is not None))


def _evidence(
    sessions: Sequence[Session], labels: Mapping[str, Sequence[Label]], infos: Sequence[JudgeInfo]
) -> Iterator[dict[str, Any]]:
    """``evidence.jsonl``'s rows, session by session (what the report shows per turn)."""
    by_session: dict[str, dict[str, list[Label]]] = defaultdict(lambda: defaultdict(list))
    for judge_id, judged in labels.items():
        for label in judged:
            by_session[label.key.session_id][judge_id].append(label)
    spans_judges = [info.id for info in infos if judge_kind(info.kind).marks_units]
    for session in sessions:
        yield from evidence_rows(
            session, by_session.get(session.session_id, {}), spans_judges=spans_judges
        )


# Sessions judged, scored and written together: the run's memory is bounded by a window
# (and the score columns), not by the number of sessions.
WINDOW = 500


def _session_stream(
    scenario: Scenario, sessions: Iterable[Session] | None
) -> tuple[Iterator[Session], list[Any]]:
    """The scenario's sessions one at a time, as the reader parses them (``input.limit``
    applied), and the list the reader fills with skipped sessions' errors as it goes."""
    skipped: list[Any] = []
    if sessions is None:
        reader = iter_sessions(
            scenario.input.path,
            format=cast(Format | None, scenario.input.format),
            skip_invalid=scenario.input.skip_invalid,
            sources=scenario.input.sources,
        )
        sessions, skipped = reader, reader.skipped
    stream: Iterator[Session] = iter(sessions)
    if scenario.input.limit is not None:
        stream = itertools.islice(stream, scenario.input.limit)
    return stream, skipped


def _windows(stream: Iterator[Session], size: int) -> Iterator[list[Session]]:
    while batch := list(itertools.islice(stream, size)):
        yield batch


def _amend(
    combined: Mapping[str, Mapping[str, Any]],
) -> Callable[[str, dict[str, Any]], dict[str, Any]] | None:
    """Adds each row's z-score combinations (computed over the whole run) to its scores."""
    if not any(combined.values()):
        return None
    position = {table: 0 for table in combined}

    def amend(table: str, row: dict[str, Any]) -> dict[str, Any]:
        values = combined.get(table)
        if values:
            i = position[table]
            position[table] = i + 1
            for name, column in values.items():
                value = float(column[i])
                row["scores"][name] = None if math.isnan(value) else value
        return row

    return amend


def _names(combined: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    return {table: list(values) for table, values in combined.items()}


async def arun_scenario(
    scenario: Scenario | str | os.PathLike[str],
    *,
    out_dir: str | os.PathLike[str] | None = None,
    overrides: Overrides | None = None,
    progress: bool = False,
    log: TextIO | None = None,
    sessions: Iterable[Session] | None = None,
    window: int = WINDOW,
) -> Run:
    """Async twin of :func:`run_scenario`."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    started = time.monotonic()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    loaded = _loaded(scenario, overrides)
    say: Callable[[str], None] = (
        (lambda m: print(f"genir-eval: {m}", file=log)) if log else (lambda m: None)
    )

    digests = _input_digests(loaded, reads_input=sessions is None)  # before they are read
    stream, skipped = _session_stream(loaded, sessions)
    windows = _windows(stream, window)
    sample = Reservoir(loaded.engine.repeat_sample) if loaded.engine.repeats > 1 else None
    if sample is not None:
        windows = sample.windows(windows)
    first = next(windows, None)
    if first is None:
        raise ConfigError(f"input.path: no session to evaluate in {loaded.input.path}")
    out = _output_folder(loaded, out_dir)

    judges = {spec.id: make_judge(spec.name, **spec.options) for spec in loaded.judges}
    judge_files = _bind(judges, loaded, out, sessions, say)
    infos = [_judge_info(judges[spec.id], spec) for spec in loaded.judges]
    groups = groups_of(loaded)
    assembly = _assembly(loaded, infos)
    writer = _open_writer(loaded, out, say)
    judging = _judging(loaded, out, groups, judges, progress=progress, log=log, say=say)
    try:
        async with judging:
            say(
                f"judging with {counted(len(loaded.judges), 'judge')} "
                f"({', '.join(f'{g.provider}/{g.model}' for g in groups)}), "
                f"{counted(window, 'session')} at a time"
            )
            n_sessions = await _judge_windows(judging, first, windows, assembly, writer, infos, out)
            repeated = (
                await noise_of_run(judging, judges, sample.items, loaded.engine.repeats)
                if sample is not None
                else None
            )
        # every session went by: a preference naming none of them is refused, not left out
        # (the judgments are journaled: a run again with the file mended pays nothing twice)
        assembly.check_preferences()
    except BaseException:
        writer.abort()
        raise
    engine_stats = judging.engine_stats
    journal_paths = judging.journal_paths
    noise, repeats = _repeated_parts(repeated, sample, infos, loaded)

    skipped = [str(error) for error in skipped]
    combined = assembly.finish()
    chosen = _default_headline(loaded, infos)
    headline = chosen.score
    meta = assembly.meta(headline)
    if noise is not None:
        say(noise_line(noise))
        _put_noise(meta, noise)
    info_doc = _run_document(
        loaded,
        headline=chosen,
        started=(started, started_at),
        n_sessions=n_sessions,
        writer=writer,
        skipped=skipped,
        judge_rows=_judge_rows(loaded, infos, groups, judges, assembly),
        engine_stats=engine_stats,
        resumed=_resumed(judges.values()),
        assembly=assembly,
        digests=digests,
    )
    if noise is not None:
        info_doc["judge_noise"] = noise
    info_doc["status"] = _status(assembly, engine_stats, groups, loaded.engine)
    try:
        run = writer.finish(
            meta=meta,
            info=info_doc,
            amend=_amend(combined),
            extra_scores=_names(combined),
            report=render_report if loaded.output.report else None,
            judge_files=judge_files,
            repeats=repeats or None,
        )
    except OSError as error:
        writer.abort()
        raise _output_fault(error, out, journal_paths) from None
    say(_written_line(out, n_sessions, assembly.failures_total, info_doc, started))
    return run


def _repeated_parts(
    repeated: Any, sample: Reservoir | None, infos: Any, loaded: Scenario
) -> tuple[Any, Any]:
    """From the repeats judged (``None`` without ``--repeats``): each judge's noise block,
    and each repeat's score rows for ``repeats.jsonl``."""
    if repeated is None or sample is None:
        return None, None
    return repeated.blocks, repeat_rows(sample.items, repeated.labels, infos, loaded.aggregate)


def _open_writer(loaded: Scenario, out: Path, say: Callable[[str], None]) -> RunWriter:
    """The run folder's writer, opened before any call (a fault here loses nothing)."""
    try:
        writer = RunWriter(out, csv=loaded.output.csv, evidence=True, failures=True)
    except OSError as error:
        raise _output_fault(error, out, None) from None
    if writer.removed_stale:
        say(f"removed {len(writer.removed_stale)} part files a stopped run left in {out}")
    return writer


def _status(assembly: Any, engine_stats: Any, groups: Any, engine_spec: Any) -> dict[str, Any]:
    """The run's status: each judge's missing share against ``max_missing`` and the
    endpoints' permanent errors (``rundir/status.py``)."""
    return run_status(
        assembly.label_counts,
        assembly.failure_counts(),
        engine_stats,
        endpoints={spec.id: where(group) for group in groups for spec in group.specs},
        max_missing=engine_spec.max_missing,
        allow_permanent=engine_spec.allow_permanent,
    )


def _put_noise(meta: dict[str, Any] | None, noise: Mapping[str, Any]) -> None:
    """The judges' noise from repeats in ``meta.json``: the whole block, and each judge's
    beside its other figures, so its quality card (terminal and report) shows it."""
    if meta is None:
        return
    meta["judge_noise"] = noise
    for judge_id, block in noise.items():
        if judge_id in (meta.get("judges") or {}):
            meta["judges"][judge_id]["noise"] = block


def _written_line(
    out: Path, n_sessions: int, missing: int, info_doc: Mapping[str, Any], started: float
) -> str:
    """The run's last progress line: where it wrote, what it judged and what it cost."""
    return (
        f"wrote {out} ({counted(n_sessions, 'session')}, {counted(missing, 'missing label')}, "
        f"{info_doc['provider_calls']} provider calls, {info_doc['cache']['hits']} cache hits, "
        f"{info_doc['cache']['resumed']} resumed) in {time.monotonic() - started:.2f}s"
    )


#: Files only a run writes: an unmarked folder holding one is a run's, made before folders
#: were marked (:mod:`genir_eval.paths`).
RUN_SIGNATURE = (RUN_FILE, TURNS_FILE, SESSIONS_FILE, LINKS_FILE, EVIDENCE_FILE, FAILURES_FILE)


def _output_folder(loaded: Scenario, out_dir: str | os.PathLike[str] | None) -> Path:
    """The run's folder, claimed (the writer replaces and removes the run's files: only in
    a folder a run made, :mod:`genir_eval.paths`) and found writable before any call."""
    out = real_path(out_dir) if out_dir is not None else loaded.output.dir
    claim_folder(out, "run", signature=RUN_SIGNATURE, option="--out (or output.dir)")
    check_writable_folder(out, "the output folder")
    return out


def _input_digests(loaded: Scenario, *, reads_input: bool) -> dict[str, str | None]:
    """The SHA-256 of the scenario file and of the input files the run reads (logs, source
    texts, preferences), for run.json: a command that reads one again later refuses it when
    it changed since (``input.sha256``, ``input.sources_sha256``, ...)."""
    named = {
        "scenario": loaded.path,
        "sha256": loaded.input.path if reads_input else None,
        "sources_sha256": loaded.input.sources,
        "preferences_sha256": loaded.input.preferences,
    }
    try:
        return {
            key: file_digest(Path(path)) if path is not None and Path(path).is_file() else None
            for key, path in named.items()
        }
    except OSError as error:
        raise InputError(
            f"cannot read the file: {error.strerror or error}", path=str(error.filename)
        ) from None


def _bind(
    judges: Mapping[str, Judge],
    loaded: Scenario,
    out: Path,
    sessions: Iterable[Session] | None,
    say: Callable[[str], None],
) -> tuple[str, ...]:
    """Give the judges that read the run's input before judging it (``bind_run``: the
    nugget judge pools each query's sources and checks its nugget file) a way to read the
    run's sessions again and the output folder, before any call. Sessions given as a
    one-pass iterator cannot be read twice: those judges then get none. Returns the files
    the judges write into the folder (``run.json`` lists them with their digests)."""
    read: Callable[[], Iterable[Session]] | None
    if sessions is None:
        read = lambda: _session_stream(loaded, None)[0]  # noqa: E731
    elif isinstance(sessions, Sequence):
        given = sessions
        read = lambda: iter(given)  # noqa: E731
    else:
        read = None
    written: list[str] = []
    for judge in judges.values():
        bind = getattr(judge, "bind_run", None)
        if bind is not None:
            written.extend(bind(read, out) or ())
        for note in getattr(judge, "notes", ()):  # what a judge says of its files, a line each
            say(note)
    return tuple(written)


def _loaded(scenario: Scenario | str | os.PathLike[str], overrides: Overrides | None) -> Scenario:
    """The scenario read, with the overrides applied and its credentials checked."""
    loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    loaded = apply_overrides(loaded, overrides)
    try:
        check_credentials(loaded)
    except ConfigError as error:
        raise ConfigError(f"{loaded.path}: {error}" if loaded.path else str(error)) from None
    return loaded


def _assembly(loaded: Scenario, infos: list[JudgeInfo]) -> Assembly:
    """Tables and meta-evaluation built window by window, with people's preferences when
    the scenario names a file of them."""
    preferences = (
        read_preferences(loaded.input.preferences, form="run")
        if loaded.input.preferences is not None
        else ()
    )
    return Assembly(
        infos,
        loaded.aggregate,
        loaded.meta,
        link_judge_ids(loaded.aggregate, infos),
        preferences=preferences,
        preferences_path=loaded.input.preferences,
    )


def _judging(
    loaded: Scenario,
    out: Path,
    groups: list[Group],
    judges: dict[str, Judge],
    *,
    progress: bool,
    log: TextIO | None,
    say: Callable[[str], None],
) -> LocalJudging | RayJudging:
    """The judging step the scenario's executor asks for (not yet entered)."""
    engine_spec = loaded.engine
    if engine_spec.executor == "ray":
        from genir_eval.runner.ray_executor import RayJudging

        # the workers open the engines and make every call; the driver opens none
        return RayJudging(
            loaded,
            out,
            address=engine_spec.ray_address,
            workers=engine_spec.ray_workers,
            judges=judges,
            say=say,
        )
    return LocalJudging(
        loaded, out, groups=groups, judges=judges, progress=progress, log=log, say=say
    )


async def _judge_windows(
    judging: LocalJudging | RayJudging,
    first: list[Session],
    windows: Iterator[list[Session]],
    assembly: Assembly,
    writer: RunWriter,
    infos: Sequence[JudgeInfo],
    out: Path,
) -> int:
    """Judge, score and write every window; the number of sessions written.

    Two windows in flight: the next one is judged while this one is scored and written, so
    the engines (or the cluster) do not drain at each window's end. Both share the engines
    (or the cluster's coordinator): one request-rate budget."""
    n_sessions = 0
    batch: list[Session] | None = first
    current: asyncio.Future[dict[str, list[Label]]] = asyncio.ensure_future(judging.judge(first))
    following_task: asyncio.Future[dict[str, list[Label]]] | None = None
    try:
        while batch is not None:
            following = next(windows, None)
            if following is not None:
                following_task = asyncio.ensure_future(judging.judge(following))
            labels = await current
            tables = assembly.add(batch, labels)
            try:
                writer.add(
                    links=tables.links,
                    turns=tables.turns,
                    sessions=tables.sessions,
                    citations=tables.citations,
                    evidence=_evidence(batch, labels, infos),
                    failures=tables.failures,
                )
            except OSError as error:  # a full disk mid-run: the journal keeps the rest
                raise _output_fault(error, out, judging.journal_paths) from None
            n_sessions += len(batch)
            del labels, tables
            batch = following
            if following_task is not None:
                current, following_task = following_task, None
    finally:
        for task in (current, following_task):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
    return n_sessions


def _run_document(
    loaded: Scenario,
    *,
    headline: Headline,
    started: tuple[float, str],
    n_sessions: int,
    writer: RunWriter,
    skipped: list[str],
    judge_rows: list[dict[str, Any]],
    engine_stats: list[dict[str, Any]],
    resumed: int,
    assembly: Assembly,
    digests: Mapping[str, str | None],
) -> dict[str, Any]:
    """run.json without its status: the scenario, versions, input, judges, engines, usage,
    cost, cache and the first failures."""
    engine_spec = loaded.engine
    started_s, started_at = started
    info_doc: dict[str, Any] = {
        "version": OUTPUT_VERSION,
        "scenario": {
            "name": loaded.name,
            "path": str(loaded.path) if loaded.path else None,
            "description": loaded.description,
            "meta": {"headline": headline.score},
            "document": _without_credentials(loaded.document),
            # what a later command reads again (compare --pairwise: the logs; the gate: the
            # scenario's threshold) is refused when it changed since
            "sha256": digests.get("scenario"),
        },
        # which score leads and why (the report card reads its evidence by the judge's name)
        "headline": headline.as_dict(),
        "versions": _versions(),
        "started_at": started_at,
        "duration_s": round(time.monotonic() - started_s, 3),
        "input": {
            "path": str(loaded.input.path),
            "format": loaded.input.format,
            "sources": str(loaded.input.sources) if loaded.input.sources else None,
            "preferences": str(loaded.input.preferences) if loaded.input.preferences else None,
            **{key: value for key, value in digests.items() if key != "scenario"},
            "sessions": n_sessions,
            "turns": writer.rows("turns"),
            "links": writer.rows("links"),
        },
        "skipped": skipped,
        "judges": judge_rows,
        # what the offline twins read: semantic (the model in the installed extra) or lexical
        "offline_evidence": evidence_name(),
        "engines": engine_stats,
        "usage": {
            "input_tokens": sum(s["input_tokens"] for s in engine_stats),
            "output_tokens": sum(s["output_tokens"] for s in engine_stats),
        },
        "cost_usd": _sum_cost(engine_stats),
        "provider_calls": sum(s["calls"] for s in engine_stats),
        "cache": {
            "hits": sum(s["cache_hits"] for s in engine_stats),
            "misses": sum(s["cache_misses"] for s in engine_stats),
            "lookups": sum(s["cache_hits"] + s["cache_misses"] for s in engine_stats),
            # judgments taken from the journal without asking the engine (judge side) or
            # answered from the journal by the engine
            "resumed": resumed + sum(s["journal_hits"] for s in engine_stats),
            "path": str(engine_spec.cache)
            if engine_spec.cache is not None and engine_spec.cache_mode != "off"
            else None,
        },
        # the first MAX_LISTED_FAILURES missing judgments; failures.jsonl has them all
        "failures": assembly.failures,
        "failures_total": assembly.failures_total,
    }
    return info_doc


def _judge_rows(
    loaded: Scenario,
    infos: Sequence[JudgeInfo],
    groups: Sequence[Group],
    judges: Mapping[str, Judge],
    assembly: Assembly,
) -> list[dict[str, Any]]:
    """run.json's ``judges``: each judge's name, endpoint, options, prompt versions, label
    counts and reply statistics."""
    spec_by_id = {spec.id: spec for spec in loaded.judges}
    group_of = {spec.id: group for group in groups for spec in group.specs}
    rows = []
    for info in infos:
        spec, group, judge = spec_by_id[info.id], group_of[info.id], judges[info.id]
        versions = sorted(assembly.prompt_versions.get(info.id, set()))
        stats: Any = getattr(judge, "stats", None)
        rows.append(
            {
                "id": info.id,
                "name": spec.name,
                "kind": info.kind,
                "provider": group.provider,
                "model": group.model,
                "base_url": public_url(group.base_url),
                "options": dict(spec.options),
                "prompt_version": ", ".join(versions),
                **assembly.label_counts.get(info.id, {"labels": 0, "missing": 0}),
                "reply_stats": stats.rates() if hasattr(stats, "rates") else None,
            }
        )
    return rows


def _output_fault(error: OSError, out: Path, journal_paths: Sequence[Path] | None) -> StorageError:
    """The one line for an output file that cannot be written (a full disk, a folder made
    read-only mid-run), saying where the judgments made so far are kept (``None``: it
    happened before any call)."""
    if journal_paths is None:
        return StorageError(
            f"cannot write the run's outputs: {error.strerror or error}; nothing was asked "
            "yet (before any call): run again once fixed",
            path=str(error.filename or out),
        )
    kept = ", ".join(str(p) for p in journal_paths)
    again = (
        f"the judgments are kept in {kept}: run again once fixed, no call is repeated"
        if kept
        else "run again once fixed (no journal was kept: what the cache lacks is asked again)"
    )
    return StorageError(
        f"cannot write the run's outputs: {error.strerror or error}; {again}",
        path=str(error.filename or out),
    )


def run_scenario(
    scenario: Scenario | str | os.PathLike[str],
    *,
    out_dir: str | os.PathLike[str] | None = None,
    overrides: Overrides | None = None,
    progress: bool = False,
    log: TextIO | None = None,
    sessions: Iterable[Session] | None = None,
    window: int = WINDOW,
) -> Run:
    """Run ``scenario`` (a :class:`Scenario` or the path of its TOML file) and return the
    run read back from its directory (``out_dir``, else the scenario's ``output.dir``).

    ``sessions`` replaces the scenario's input (sessions already loaded, or any iterable
    of them). Sessions are judged, scored and written ``window`` at a time, so memory does
    not grow with their number (only the score columns do, 8 bytes a score); ``progress`` shows
    one progress line on stderr; ``log`` receives one-line notices. Raises
    :class:`~genir_eval.errors.ConfigError` before any call when the scenario is invalid or
    a provider's API key is not set. Works from notebooks too (see ``run_sync``).
    """
    return run_sync(
        arun_scenario(
            scenario,
            out_dir=out_dir,
            overrides=overrides,
            progress=progress,
            log=log,
            sessions=sessions,
            window=window,
        )
    )
