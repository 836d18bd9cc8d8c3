"""``run --dry-run``: what a run would send, and cost, without a call.

Every judge of the scenario goes over the sessions through an engine whose provider stands
for the real one (:class:`~genir_eval.llm.dry_run.DryRunProvider`): each request
the real provider would be sent is counted with its prompt tokens and an estimate of its
answer's, a reply the cache already holds is counted as a hit (it costs nothing), and the
offline twin's reply lets the judge go on. Nothing is written and no key is needed; the
cost is the price table's (``--prices``), unknown for a model it does not price.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from genir_eval.errors import ConfigError
from genir_eval.figures import counted
from genir_eval.judges.base import judge_sessions
from genir_eval.judges.registry import make_judge
from genir_eval.llm.build import open_engine, open_prices, open_provider
from genir_eval.llm.config import EngineConfig
from genir_eval.llm.dry_run import DryRunProvider, DryTally
from genir_eval.llm.prices import PriceTable
from genir_eval.llm.providers.base import Provider, Usage
from genir_eval.llm.store.cache import Cache
from genir_eval.llm.sync import run_sync
from genir_eval.records import Session
from genir_eval.runner.executor import Group, groups_of
from genir_eval.runner.run import Overrides, _session_stream, apply_overrides
from genir_eval.runner.scenario import Scenario, load_scenario

__all__ = ["DryRunRow", "DryRun", "dry_run", "dry_run_text"]


@dataclass(frozen=True)
class DryRunRow:
    """One judge's estimate: calls (cache hits apart), tokens, and cost (``None``: the
    price table does not price the model)."""

    judge: str
    provider: str
    model: str
    calls: int
    cache_hits: int
    prompt_tokens: int
    answer_tokens: int
    answer_limit_tokens: int
    cost: float | None
    cost_limit: float | None
    tokenizer: str


@dataclass(frozen=True)
class DryRun:
    rows: tuple[DryRunRow, ...]
    sessions: int
    max_cost: float | None
    max_tokens: int | None

    @property
    def cost(self) -> float | None:
        costs = [r.cost for r in self.rows]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)

    @property
    def tokens(self) -> int:
        return sum(r.prompt_tokens + r.answer_tokens for r in self.rows)


def dry_run(
    scenario: Scenario | str | os.PathLike[str],
    *,
    overrides: Overrides | None = None,
    sessions: Iterable[Session] | None = None,
) -> DryRun:
    """What running ``scenario`` would send and cost (see the module's docstring)."""
    return run_sync(adry_run(scenario, overrides=overrides, sessions=sessions))


async def adry_run(
    scenario: Scenario | str | os.PathLike[str],
    *,
    overrides: Overrides | None = None,
    sessions: Iterable[Session] | None = None,
) -> DryRun:
    """Async twin of :func:`dry_run`."""
    loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    loaded = apply_overrides(loaded, overrides)
    stream, _ = _session_stream(loaded, sessions)
    read = list(stream)
    if not read:
        raise ConfigError(f"input.path: no session to evaluate in {loaded.input.path}")
    engine_spec = loaded.engine
    prices = open_prices(engine_spec)
    cache = (
        Cache(engine_spec.cache, mode="replay")
        if engine_spec.cache is not None
        and engine_spec.cache_mode != "off"
        and engine_spec.cache.is_file()
        else None
    )
    rows = []
    try:
        for group in groups_of(loaded):
            real = _real_provider(engine_spec, group)
            for spec in group.specs:
                tally = DryTally()
                provider = DryRunProvider(
                    real,
                    name=group.provider,
                    model=group.model,
                    base_url=group.base_url,
                    cache=cache,
                    tally=tally,
                )
                engine = open_engine(
                    EngineConfig(cache=None, journal=False, concurrency=engine_spec.concurrency),
                    provider,
                    prices=prices,
                    quiet=True,
                    owns_storage=False,
                )
                try:
                    judge = make_judge(spec.name, **spec.options)
                    await judge_sessions(judge, read, engine)
                finally:
                    await engine.aclose()
                rows.append(_row(spec.id, group, tally, provider.tokenizer, prices))
            if real is not None:
                await real.aclose()
    finally:
        if cache is not None:
            await cache.aclose()
    return DryRun(tuple(rows), len(read), engine_spec.max_cost, engine_spec.max_tokens)


def _real_provider(config: EngineConfig, group: Group) -> Provider | None:
    """The real provider, for its cache key (its base URL and version); ``None`` when it
    cannot be opened here (no API key: the dry run needs none), and then the cache is read
    under the group's own names."""
    if group.provider == "offline":
        return None
    try:
        return open_provider(config, group.provider, model=group.model, base_url=group.base_url)
    except ConfigError:
        return None


def _row(
    judge: str, group: Group, tally: DryTally, tokenizer: str, prices: PriceTable
) -> DryRunRow:
    calls = sum(tally.calls.values())
    prompt = sum(tally.prompt_tokens.values())
    answer = sum(tally.answer_tokens.values())
    limit = sum(tally.answer_limit.values())
    return DryRunRow(
        judge=judge,
        provider=group.provider,
        model=group.model,
        calls=calls,
        cache_hits=sum(tally.hits.values()),
        prompt_tokens=prompt,
        answer_tokens=answer,
        answer_limit_tokens=limit,
        cost=prices.cost(group.provider, group.model, Usage(prompt, answer)),
        cost_limit=prices.cost(group.provider, group.model, Usage(prompt, limit)),
        tokenizer=tokenizer,
    )


def _usd(value: float | None) -> str:
    return "unknown (no price)" if value is None else f"${value:.4f}"


def dry_run_text(result: DryRun) -> str:
    """The dry run as the terminal prints it: one block per judge, then the total and the
    caps."""
    lines = [
        f"dry run: no call made; {counted(result.sessions, 'session')} read; cache hits cost "
        "nothing and are not counted as calls"
    ]
    for r in result.rows:
        lines += [
            f"  {r.judge} ({r.provider}/{r.model}): {counted(r.calls, 'call')}, "
            f"{r.cache_hits} cached",
            f"    prompt tokens {r.prompt_tokens:,}; answer tokens about {r.answer_tokens:,} "
            f"(the offline twin's replies' length; at most {r.answer_limit_tokens:,} at "
            "max_tokens)",
            f"    cost {_usd(r.cost)} (at most {_usd(r.cost_limit)}); tokens counted by "
            f"{r.tokenizer}",
        ]
    lines.append(f"total: {result.tokens:,} tokens, cost {_usd(result.cost)}")
    if result.max_cost is not None and result.cost is not None:
        within = "within" if result.cost <= result.max_cost else "PAST"
        lines.append(f"  {within} --max-cost ${result.max_cost:g}")
    if result.max_tokens is not None:
        within = "within" if result.tokens <= result.max_tokens else "PAST"
        lines.append(f"  {within} --max-tokens {result.max_tokens:,}")
    return "\n".join(lines) + "\n"
