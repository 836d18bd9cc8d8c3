"""The judging step of a run: every judge over the sessions, through the engines.

:class:`LocalJudging` is what a local run does (one engine per provider/model/endpoint,
sharing one cache; a journal per engine in the output folder; all judges concurrently),
opened once and given the run's windows of sessions; :func:`judge_locally` is the same over
one list of sessions, what each Ray worker does over its shard
(:mod:`genir_eval.runner.ray_executor`, with a journal shard and the cluster's global
request rate).
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import hashlib
import re
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from genir_eval.figures import counted
from genir_eval.judges.base import Judge, Label, judge_sessions
from genir_eval.judges.registry import make_judge
from genir_eval.llm.build import open_cache, open_engine, open_prices, open_provider
from genir_eval.llm.engine import Engine
from genir_eval.llm.limits import Budget
from genir_eval.llm.providers.factory import DEFAULT_MODELS, resolve_provider
from genir_eval.llm.store.journal import Journal
from genir_eval.records import Session
from genir_eval.runner.progress import Heartbeat, Progress
from genir_eval.runner.scenario import JudgeSpec, Scenario
from genir_eval.settings import public_url

__all__ = ["Group", "Judged", "LocalJudging", "groups_of", "judge_locally", "journal_path", "where"]


@dataclass
class Group:
    """The judges sharing one provider, model and endpoint, and their engine."""

    provider: str
    model: str
    base_url: str | None
    notice: str | None
    specs: list[JudgeSpec]
    engine: Engine | None = None
    journal: Journal | None = None


@dataclass
class Judged:
    """What the judging step gives the rest of the run."""

    #: judge id -> its labels, in session order
    labels: dict[str, list[Label]]
    #: one ``Engine.stats()`` per engine (per engine and shard on Ray)
    engine_stats: list[dict[str, Any]] = field(default_factory=list)
    #: the journal files written (kept for a resume)
    journal_paths: list[Path] = field(default_factory=list)
    #: judge id -> the judge's reply statistics (``JudgeStats``), when it keeps any
    judge_stats: dict[str, Any] = field(default_factory=dict)


def groups_of(scenario: Scenario) -> list[Group]:
    groups: dict[tuple[str, str, str | None], Group] = {}
    for spec in scenario.judges:
        resolved, notice = resolve_provider(spec.llm.provider, base_url=spec.llm.base_url)
        model = spec.llm.model or DEFAULT_MODELS[resolved]
        key = (resolved, model, spec.llm.base_url)
        if key not in groups:
            groups[key] = Group(resolved, model, spec.llm.base_url, notice, [])
        groups[key].specs.append(spec)
    return list(groups.values())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "x"


def journal_path(out: Path, group: Group, n_groups: int, tag: str | None = None) -> Path:
    """``journal.sqlite`` in the output folder (``journal.<tag>.sqlite`` for a shard), with
    the provider/model in the name when the run has several engines."""
    stem = "journal" if tag is None else f"journal.{tag}"
    if n_groups == 1:
        return out / f"{stem}.sqlite"
    name = _slug(f"{group.provider}.{group.model}")
    if group.base_url:
        name += "." + hashlib.sha256(group.base_url.encode()).hexdigest()[:8]
    return out / f"{stem}.{name}.sqlite"


_SHARD = re.compile(r"shard-[0-9]+-of-([0-9]+)")


def earlier_journals(out: Path, group: Group, n_groups: int, tag: str | None = None) -> list[Path]:
    """The journals ``out`` holds for ``group`` from runs laid out otherwise: the local
    run's ``journal.sqlite`` and Ray shards of another worker count (``shard-<k>-of-<m>``,
    ``m`` not this run's), which a resume reads so that changing ``--ray-workers`` or the
    executor repeats no judgment they hold. The shards of this run's own layout are left out:
    each holds other sessions."""
    own = journal_path(out, group, n_groups, tag)
    mine = _SHARD.fullmatch(tag or "")
    plain = journal_path(out, group, n_groups)
    found = []
    if plain != own and plain.is_file():
        found.append(plain)
    probe = journal_path(out, group, n_groups, "shard-0-of-0")
    head, tail = probe.name.split("shard-0-of-0", 1)
    for path in sorted(out.glob(f"{glob.escape(head)}shard-*-of-*{glob.escape(tail)}")):
        middle = path.name[len(head) : len(path.name) - len(tail)]
        layout = _SHARD.fullmatch(middle)
        if layout is None or path == own:
            continue
        if mine is not None and layout.group(1) == mine.group(1):
            continue
        found.append(path)
    return found


def where(group: Group) -> str:
    """``provider/model at url`` (the URL without its credentials): how a run names an engine."""
    name = f"{group.provider}/{group.model}"
    url = public_url(group.base_url)
    return f"{name} at {url}" if url else name


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


#: Without a terminal, a progress line at least this often (seconds).
HEARTBEAT_S = 30.0


def _waiting_line(display: Progress, groups: Sequence[Group]) -> str:
    waits = [g.engine.waiting_for() for g in groups if g.engine is not None]
    waits = [w for w in waits if w]
    line = (
        f"{display.done:,} judgments done, {display.under_way:,} under way, "
        f"{display.failures} failed"
    )
    return f"{line}; waiting for {'; '.join(waits)}" if waits else f"{line}; judging"


async def _all_or_none(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Await every coroutine; when one raises, cancel the others and raise that error (a
    journal that cannot be written stops the run before more calls are paid for)."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class LocalJudging:
    """The judging step in this process, open for as many batches of sessions as a run has.

    ``async with LocalJudging(scenario, out) as judging``: one engine per provider/model/
    endpoint (:func:`groups_of`), sharing one cache, each with its journal in ``out``; then
    ``await judging.judge(sessions)`` per batch (batches judged at the same time share the
    engines, so their concurrency and request rate are the run's, not one per batch). On
    leaving, ``engine_stats`` holds one ``Engine.stats()`` per engine and ``journal_paths``
    the journal files written.

    ``groups``/``judges``: the runner's own (built here when not given); ``journal_tag``
    names a journal shard (``journal.<tag>.sqlite``); ``rate_gate`` makes the engines take
    their request rate from a shared limiter instead of their own (Ray workers);
    ``progress`` draws one progress line (or, when ``log`` is not a terminal, writes a
    heartbeat line to it every ``HEARTBEAT_S``).
    """

    def __init__(
        self,
        scenario: Scenario,
        out: Path,
        *,
        groups: list[Group] | None = None,
        judges: dict[str, Judge] | None = None,
        progress: bool = False,
        log: TextIO | None = None,
        say: Callable[[str], None] | None = None,
        label: str = "judging",
        journal_tag: str | None = None,
        rate_gate: Callable[[], Any] | None = None,
    ) -> None:
        self.scenario = scenario
        self.out = out
        self.groups = groups if groups is not None else groups_of(scenario)
        self.judges = (
            judges
            if judges is not None
            else {spec.id: make_judge(spec.name, **spec.options) for spec in scenario.judges}
        )
        self.progress = progress
        self.log = log
        self.say = say or (lambda message: None)
        self.journal_tag = journal_tag
        self.rate_gate = rate_gate
        self.engine_stats: list[dict[str, Any]] = []
        self.journal_paths: list[Path] = []
        self._display = Progress(quiet=not progress, label=label)
        self._storage = contextlib.AsyncExitStack()
        self._heartbeat: Heartbeat | None = None

    async def __aenter__(self) -> LocalJudging:
        try:
            self._open()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _open(self) -> None:
        engine_spec = self.scenario.engine
        prices = open_prices(engine_spec)
        storage = self._storage
        cache = open_cache(engine_spec)
        if cache is not None:
            storage.push_async_callback(cache.aclose)
        shared_journal: Journal | None = None
        if isinstance(engine_spec.journal, Path):
            # one file named by the user: every provider/model's judgments in it, keyed apart
            path = engine_spec.journal
            if self.journal_tag is not None:
                path = path.with_name(f"{path.stem}.{self.journal_tag}{path.suffix}")
            shared_journal = Journal(path)
            storage.push_async_callback(shared_journal.aclose)
        # one budget for the run's engines: --max-cost is what the run spends in all
        budget = (
            Budget(engine_spec.max_cost, engine_spec.max_tokens)
            if engine_spec.max_cost is not None or engine_spec.max_tokens is not None
            else None
        )
        for group in self.groups:
            if group.notice:
                self.say(group.notice)
            provider = open_provider(
                engine_spec, group.provider, model=group.model, base_url=group.base_url
            )
            if shared_journal is not None:
                group.journal = shared_journal
            elif engine_spec.journal:
                path = journal_path(self.out, group, len(self.groups), self.journal_tag)
                earlier = earlier_journals(self.out, group, len(self.groups), self.journal_tag)
                group.journal = Journal(path, earlier=earlier)
                storage.push_async_callback(group.journal.aclose)
            if group.journal is not None and group.journal.path not in self.journal_paths:
                self.journal_paths.append(group.journal.path)
            group.engine = open_engine(
                engine_spec,
                provider,
                cache=cache,
                journal=group.journal,
                prices=prices,
                progress=self._display if self.progress else None,
                quiet=True,
                owns_storage=False,
                rate_gate=self.rate_gate,
                budget=budget,
            )
        if self.progress and self.log is not None and not _is_tty(self.log):
            # no progress bar without a terminal: a line at least every 30 s instead
            display, groups = self._display, self.groups
            self._heartbeat = Heartbeat(
                lambda: _waiting_line(display, groups), stream=self.log, every_s=HEARTBEAT_S
            )

    async def judge(self, sessions: Sequence[Session]) -> dict[str, list[Label]]:
        """Every judge over ``sessions``: judge id -> its labels in session order."""
        labels: dict[str, list[Label]] = {}

        async def judge_all(spec: JudgeSpec, group: Group) -> None:
            assert group.engine is not None
            labels[spec.id] = await judge_sessions(self.judges[spec.id], sessions, group.engine)

        await _all_or_none(judge_all(spec, group) for group in self.groups for spec in group.specs)
        return {spec.id: labels[spec.id] for spec in self.scenario.judges}

    def judge_stats(self) -> dict[str, Any]:
        """judge id -> the judge's reply statistics (``JudgeStats``), for judges keeping any."""
        return {
            judge_id: stats
            for judge_id, judge in self.judges.items()
            if (stats := getattr(judge, "stats", None)) is not None
        }

    async def aclose(self) -> None:
        """Stop the heartbeat and the progress line, close the engines (their stats kept in
        ``engine_stats``), the journals and the cache."""
        try:
            if self._heartbeat is not None:
                await self._heartbeat.aclose()
                self._heartbeat = None
            self._display.close()
            for group in self.groups:
                if group.engine is not None:
                    self.engine_stats.append(group.engine.stats())
                    engine, group.engine = group.engine, None
                    await engine.aclose()
        finally:
            await self._storage.aclose()


async def judge_locally(
    scenario: Scenario, sessions: Sequence[Session], out: Path, **options: Any
) -> Judged:
    """Every judge of ``scenario`` over ``sessions`` in this process, engines opened and
    closed around them (a Ray worker's shard); ``options`` are :class:`LocalJudging`'s."""
    options.setdefault("label", f"judging {counted(len(sessions), 'session')}")
    judging = LocalJudging(scenario, out, **options)
    async with judging:
        judging.say(
            f"judging {counted(len(sessions), 'session')} with {counted(len(scenario.judges), 'judge')} "
            f"({', '.join(f'{g.provider}/{g.model}' for g in judging.groups)})"
        )
        labels = await judging.judge(sessions)
    return Judged(
        labels=labels,
        engine_stats=judging.engine_stats,
        journal_paths=judging.journal_paths,
        judge_stats=judging.judge_stats(),
    )
