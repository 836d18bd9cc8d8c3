"""The async judging engine: a provider wrapped in limits, retries, the cache and the journal.

``await engine.complete(request)`` returns a :class:`Completion` or a :class:`Failure` and never
raises for provider errors. One call goes through, in order: the journal (an ``ok`` row with the
same request fingerprint is returned without a call), the cache (a hit is returned; in replay
mode a miss is a ``cache_miss`` failure), then attempts, each one taking an in-flight slot
(AIMD :class:`~genir_eval.llm.limits.AdaptiveLimit`), the token budget and the request rate
(:class:`~genir_eval.llm.limits.RequestRate`, a sliding window of sends, or
:class:`~genir_eval.llm.limits.LearnedRate` when no rate is configured), and running under the
per-attempt timeout. With a journal, a judgment keeps the in-flight slot its first attempt
took (its repair call shares it) until :meth:`Engine.record` has committed its label: replies paid for and not yet journaled cannot pile up behind a journal whose commits
wait, so a process killed at any moment repeats at most ``concurrency`` judgments. While it
waits to retry after a failed attempt it holds no reply, so the slot is free meanwhile and
its next attempt takes one back first in line. Rate limits and transient errors are retried with
exponential backoff and jitter (Brooker 2015, AWS Architecture Blog: "equal jitter" at least
``Retry-After`` when the provider sends one, "full jitter" otherwise), up to
``max_attempts`` and the per-judgment ``deadline``; permanent errors are not retried. Error
messages pass through the provider's :meth:`~genir_eval.llm.providers.base.Provider.redact` before they
reach a :class:`Failure` or the journal, so an error body echoing the API key leaks nothing.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol, TextIO

from genir_eval.llm.config import EngineConfig, legacy_config
from genir_eval.llm.health import EndpointHealth
from genir_eval.llm.limits import (
    AdaptiveLimit,
    Budget,
    LearnedRate,
    LookupWindow,
    RateGate,
    RequestRate,
    Send,
    TokenBudget,
)
from genir_eval.llm.limits.budget import reserve, settle
from genir_eval.llm.prices import PriceTable, load_prices
from genir_eval.llm.providers.base import (
    Completion,
    Failure,
    JudgmentKey,
    Provider,
    ProviderError,
    Request,
    Usage,
    checked_logprobs,
    checked_usage,
    departure,
)
from genir_eval.llm.providers.classify import classify_exception
from genir_eval.llm.providers.offline import approx_tokens
from genir_eval.llm.store.cache import BadCacheRow, Cache, CacheMode, cache_key
from genir_eval.llm.store.journal import Journal, JournalEntry
from genir_eval.settings import public_url

__all__ = ["Engine", "REPAIR_SUFFIX", "judgment_of"]

_RETRIABLE = ("rate_limit", "transient")
# Judgments between entering complete() and their journal/cache answer (see LookupWindow).
_LOOKUP_WINDOW = 64
# Requests whose cache key is kept between their lookup and their journal row (the oldest
# dropped first: a judge that never records one only costs its place).
_KEYS_KEPT = 4096
#: What a repair call adds to its judgment's ``prompt_version`` (``judges.base.ask``): the
#: cache tells the two calls apart; the judgment, and its concurrency slot, is one.
REPAIR_SUFFIX = "+repair"


def judgment_of(key: JudgmentKey) -> JudgmentKey:
    """The judgment a call is for: a repair call's is the judgment it repairs."""
    version = key.prompt_version
    if version.endswith(REPAIR_SUFFIX):
        return replace(key, prompt_version=version[: -len(REPAIR_SUFFIX)])
    return key


class _Usage:
    __slots__ = ("calls", "input_tokens", "output_tokens", "cost", "cost_known", "unknown_usage")

    def __init__(self) -> None:
        self.calls = 0
        self.unknown_usage = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost = 0.0
        self.cost_known = True


class _Call:
    """What one provider call brought back: its answer or its error, when it was sent
    (``time.monotonic()``) and how long it took (seconds)."""

    __slots__ = ("completion", "error", "sent_at", "latency")

    def __init__(self, sent_at: float) -> None:
        self.completion: Completion | None = None
        self.error: ProviderError | None = None
        self.sent_at = sent_at
        self.latency = 0.0


class _Deadline:
    """A judgment's deadline: ``seconds`` after its first attempt takes an in-flight slot."""

    __slots__ = ("seconds", "at")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at: float | None = None

    def start(self) -> float:
        """The deadline (event-loop time), set at the first call."""
        if self.at is None:
            self.at = asyncio.get_running_loop().time() + self.seconds
        return self.at


class ProgressListener(Protocol):
    """What the engine tells of its judgments, for a progress line drawn by the command line
    or the runner (:class:`~genir_eval.runner.progress.Progress`)."""

    def add_total(self, n: int) -> None:
        """``n`` more judgments begun."""

    def update(self, *, failed: bool = False, cached: bool = False) -> None:
        """One judgment finished."""


class Engine:
    """Limits, retries, cache and journal around one provider and model.

    ``config`` (:class:`~genir_eval.llm.config.EngineConfig`, its declared defaults when not
    given) holds the settings: ``concurrency`` caps requests in flight (AIMD lowers it on
    overload, a timeout, 503 or 529, and climbs back by one per ``aimd_increase_every``
    successes); ``rpm``/``tpm`` cap requests and tokens per minute; ``timeout`` bounds one
    attempt and ``deadline`` one judgment, retries and waits included; ``stop_after`` and
    ``give_up_after`` say when an endpoint is given up (the earlier keyword form,
    ``Engine(provider, concurrency=8, rpm=600)``, still works with a
    :class:`DeprecationWarning`: :func:`~genir_eval.llm.config.legacy_config`). The keywords are what is not
    configuration: the opened cache (in its own mode) and journal, the price table, and ``progress``, which hears of each judgment as it begins and
    as it ends (the engine draws nothing). Commands open engines through
    :mod:`genir_eval.llm.build`, which builds provider and storage from the configuration.
    """

    def __init__(
        self,
        provider: Provider,
        config: EngineConfig | None = None,
        *,
        cache: Cache | None = None,
        journal: Journal | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        seed: int | None = 0,
        aimd_increase_every: int = 4,
        aimd_cooldown_s: float = 2.0,
        prices: PriceTable | None = None,
        progress: ProgressListener | None = None,
        quiet: bool = False,
        summary_stream: TextIO | None = None,
        notice: str | None = None,
        owns_storage: bool = True,
        rate_gate: Callable[[], Any] | None = None,
        budget: Budget | None = None,
        **legacy: Any,
    ) -> None:
        cache_mode: CacheMode | None = legacy.pop("cache_mode", None)
        if legacy:
            config = legacy_config(config, legacy)
        config = config if config is not None else EngineConfig()
        self.config = config
        concurrency, rpm, tpm = config.concurrency, config.rpm, config.tpm
        self.provider = provider
        self.concurrency = concurrency
        self.rpm = rpm
        self.tpm = tpm
        self.max_attempts = config.max_attempts
        self.deadline = config.deadline
        self.cache = cache
        self.cache_mode: CacheMode = cache_mode or (cache.mode if cache is not None else "off")
        self.journal = journal
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.prices = prices if prices is not None else load_prices()
        self.notice = notice
        self.quiet = quiet
        self.summary_stream = summary_stream
        self.owns_storage = owns_storage
        self._rate_gate = rate_gate
        # what the run may spend (--max-cost, --max-tokens): shared by a run's engines
        if budget is None and (config.max_cost is not None or config.max_tokens is not None):
            budget = Budget(config.max_cost, config.max_tokens)
        self.budget = budget
        self.run_id = uuid.uuid4().hex
        self._aimd = (aimd_increase_every, aimd_cooldown_s)
        self._rng = random.Random(seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._limit = AdaptiveLimit(
            concurrency, increase_every=aimd_increase_every, cooldown_s=aimd_cooldown_s
        )
        self._lookups = LookupWindow(_LOOKUP_WINDOW)
        self.health = EndpointHealth(
            stop_after=config.stop_after, give_up_after=config.give_up_after
        )
        # what the engine waits for, for a progress line: replies in flight, retries sleeping
        self.in_flight = 0
        self.backing_off = 0
        self._rate: RequestRate | None = None
        self._learned: RateGate | None = None
        self._budget: TokenBudget | None = None
        self._progress = progress
        self._started = time.time()
        self._t0 = time.monotonic()
        self._first_send: float | None = None
        self._closed = False
        # counters
        self.requests = 0
        self.completed = 0
        self.calls = 0
        self.retries = 0
        self.cache_hits = 0
        self.cache_misses = 0
        self.journal_hits = 0
        self.failures: Counter[str] = Counter()
        self.errors_seen: Counter[str] = Counter()
        self._usage: dict[tuple[str, str, str], _Usage] = {}
        self._cache_by_task: dict[str, Counter[str]] = {}
        self._keys: dict[int, tuple[Request, str, str]] = {}

    # -- identity --------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return str(getattr(self.provider, "model", "") or "")

    def fingerprint(self, request: Request) -> str:
        """The request's cache key: the same bytes out for the same inputs (see cache.py),
        the provider's :attr:`~genir_eval.llm.providers.base.Provider.version` included."""
        return self._key(request)[0]

    def _key(self, request: Request) -> tuple[str, str]:
        """:func:`cache_key` of ``request``, computed once for the lookup and the journal
        row (canonical JSON and SHA-256: a tenth of the engine's own CPU a judgment)."""
        keys = self._keys
        known = keys.get(id(request))
        if known is not None and known[0] is request:
            return known[1], known[2]
        provider = self.provider
        fingerprint, inputs = cache_key(
            provider.name, provider.base_url, request, version=provider.version
        )
        # the request is held while its key is: its id cannot be another's meanwhile
        keys[id(request)] = (request, fingerprint, inputs)
        if len(keys) > _KEYS_KEPT:
            del keys[next(iter(keys))]
        return fingerprint, inputs

    def resume(self, request: Request) -> JournalEntry | None:
        """The journal's ``ok`` entry for this request if its fingerprint still matches."""
        if self.journal is None:
            return None
        entry = self.journal.get(request.key)
        if (
            entry is None
            or not entry.ok
            or entry.key != request.key  # a row edited to another judgment's columns
            or entry.fingerprint != self.fingerprint(request)
        ):
            return None
        return entry

    # -- the call --------------------------------------------------------------------------
    def _holder(self, request: Request) -> JudgmentKey | None:
        """The judgment that keeps the in-flight slot ``request`` takes until :meth:`record`
        has journaled it; none without a journal (a slot an attempt)."""
        return None if self.journal is None else judgment_of(request.key)

    async def complete(self, request: Request) -> Completion | Failure:
        try:
            return await self._complete(request)
        except BaseException:
            # cancelled (the run is stopping): the judgment will not be journaled
            self._limit.release(self._holder(request))
            raise

    async def _complete(self, request: Request) -> Completion | Failure:
        self._bind_loop()
        self.requests += 1
        if self._progress is not None:
            self._progress.add_total(1)  # the total is known before the first wait
        use_cache = self.cache is not None and self.cache_mode != "off" and self.provider.cacheable
        if self.journal is None and not use_cache:
            return self._done(await self._attempts(request))
        await self._lookups.acquire()
        try:
            found, fingerprint, inputs = await self._lookup(request, use_cache)
        finally:
            self._lookups.release()
        if found is not None:
            return self._done(found)
        result = await self._attempts(request)
        if isinstance(result, Completion) and use_cache:
            assert self.cache is not None and fingerprint is not None and inputs is not None
            try:
                await self.cache.put(
                    fingerprint,
                    inputs,
                    provider=self.provider.name,
                    model=request.config.model,
                    task=request.task,
                    completion=result,
                )
            except Exception as error:  # noqa: BLE001 - the reply is still good
                self.errors_seen[f"cache write: {type(error).__name__}"] += 1
        return self._done(result)

    async def _lookup(
        self, request: Request, use_cache: bool
    ) -> tuple[Completion | Failure | None, str | None, str | None]:
        """The journal's then the cache's answer for ``request`` (``None``: make the call),
        with the request's fingerprint and key inputs when computed."""
        fingerprint: str | None = None
        inputs: str | None = None
        if self.journal is not None:
            entry = self.journal.get(request.key)
            if (
                entry is not None
                and entry.ok
                and isinstance(entry.raw, str)
                and entry.key == request.key
            ):
                fingerprint, inputs = self._key(request)
                if entry.fingerprint == fingerprint:
                    self.journal_hits += 1
                    return Completion(text=entry.raw, model=self.model, cached=True), None, None
        if not use_cache:
            return None, fingerprint, inputs
        assert self.cache is not None
        if fingerprint is None:
            fingerprint, inputs = self._key(request)
        by_task = self._cache_by_task.setdefault(request.task, Counter())
        bad_row = ""
        try:
            hit = await self.cache.get(fingerprint)
        except BadCacheRow as error:  # edited or damaged: asked again, never used
            hit = None
            bad_row = f" (its cached row was refused: {error})"
            self.errors_seen["cache: bad row asked again"] += 1
        except Exception as error:  # noqa: BLE001 - a broken cache must not stop the run
            hit = None
            self.errors_seen[f"cache read: {type(error).__name__}"] += 1
        if hit is not None:
            self.cache_hits += 1
            by_task["hits"] += 1
            return hit, fingerprint, inputs
        self.cache_misses += 1
        by_task["misses"] += 1
        if self.cache_mode == "replay":
            failure = Failure(
                "cache_miss",
                f"replay mode: no cached reply for key {fingerprint} (task {request.task})"
                f"{bad_row}",
                attempts=0,
            )
            return failure, fingerprint, inputs
        return None, fingerprint, inputs

    async def record(
        self,
        request: Request,
        result: Completion | Failure,
        *,
        value: Any = None,
        failure: Failure | None = None,
    ) -> None:
        """Journal the judgment of ``request``: ``value`` is the judge's parsed label; pass
        ``failure`` when the reply could not be parsed. Once the row is committed (or could
        not be), the judgment's in-flight slot is free. A no-op without a journal."""
        if self.journal is None:
            return
        try:
            fingerprint = self.fingerprint(request)
            self._keys.pop(id(request), None)
            if failure is not None:
                failure = replace(failure, message=self.provider.redact(failure.message))
            if isinstance(result, Failure):
                await self.journal.record(request.key, failure=result, fingerprint=fingerprint)
            else:
                await self.journal.record(
                    request.key,
                    value=value,
                    failure=failure,
                    raw=result.text,
                    fingerprint=fingerprint,
                )
        finally:
            self._limit.release(judgment_of(request.key))

    def _done(self, result: Completion | Failure) -> Completion | Failure:
        self.completed += 1
        if isinstance(result, Failure):
            self.failures[result.error_class] += 1
        if self._progress is not None:
            self._progress.update(
                failed=isinstance(result, Failure),
                cached=isinstance(result, Completion) and result.cached,
            )
        return result

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        # Limits hold loop-bound futures and locks: (re)build them for this loop.
        self._loop = loop
        self._limit = AdaptiveLimit(
            self.concurrency, increase_every=self._aimd[0], cooldown_s=self._aimd[1]
        )
        self._lookups = LookupWindow(_LOOKUP_WINDOW)
        self.health.rebind()
        self._rate = RequestRate(self.rpm) if self.rpm else None
        limited = self.provider.rate_limited
        self._learned = None if self.rpm or not limited else LearnedRate()
        if self._rate_gate is not None and limited:
            # the request rate is kept elsewhere (a Ray cluster's coordinator): its gate
            # stands in for both, and is told of answers and 429s as the learned rate is
            self._rate = None
            self._learned = self._rate_gate()
        self._budget = TokenBudget(self.tpm) if self.tpm else None

    def _estimate_tokens(self, request: Request) -> int:
        return sum(approx_tokens(m.content) for m in request.messages) + request.config.max_tokens

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        ceiling = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
        if retry_after is not None:
            # The provider said when: at least that, spread by equal jitter.
            return max(ceiling / 2 + self._rng.random() * ceiling / 2, retry_after)
        # No Retry-After: full jitter, uniform over [0, ceiling] (Brooker 2015: the least
        # work and the soonest completion of the jittered schemes).
        return self._rng.random() * ceiling

    async def _attempts(self, request: Request) -> Completion | Failure:
        """Attempts at ``request`` until one is answered, its error is final, or the
        judgment's ``deadline`` or ``max_attempts`` is reached. The deadline counts from
        the first attempt's in-flight slot: time queued behind the engine's own concurrency
        limit (a slow model at concurrency 1, a large batch) is not the judgment's."""
        deadline = _Deadline(self.deadline)
        attempt = 0
        while True:
            attempt += 1
            outcome = await self._attempt(request, attempt, deadline)
            if not isinstance(outcome, float):
                return outcome
            self.retries += 1
            self.backing_off += 1
            # a failed attempt left no reply to journal: the slot is free while it waits
            self._limit.release(self._holder(request))
            try:
                # woken early when the engine stops: the next round returns "stopped"
                await self.health.sleep(outcome)
            finally:
                self.backing_off -= 1

    async def _attempt(
        self, request: Request, attempt: int, clock: _Deadline
    ) -> Completion | Failure | float:
        """Attempt number ``attempt``: an in-flight slot, then the token budget and the
        request rate, then the call. Its answer, a final failure, or how long to wait before
        the next attempt (seconds). ``clock`` is the judgment's deadline, which starts when
        its first attempt has a slot."""
        if self.health.reason is not None:
            return self._stopped(attempt - 1)
        holder = self._holder(request)
        await self._limit.acquire(first=attempt > 1, holder=holder)
        deadline = clock.start()
        try:
            if self.health.reason is not None:
                return self._stopped(attempt - 1)
            # Tokens first, the request rate last: a send admitted by the rate and then
            # kept waiting for tokens would go out late, bunched with later ones.
            reservation = (
                await self._budget.acquire(self._estimate_tokens(request))
                if self._budget is not None
                else None
            )
            send = await self._admit(first=attempt > 1)
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return Failure(
                    "deadline",
                    f"deadline of {self.deadline:g}s reached before attempt {attempt}",
                    attempts=attempt - 1,
                )
            spend = reserve(self.budget, self.prices, self.provider.name, request)
            if isinstance(spend, str):
                self.health.stop(f"budget: {spend}")
                return Failure("budget", f"not sent: budget: {spend}", attempts=attempt - 1)
            call = await self._call(request, min(self.config.timeout, remaining), send)
            settle(self.budget, self.prices, self.provider.name, spend, request, call.completion)
            if reservation is not None and self._budget is not None:
                used = (
                    call.completion.usage.input_tokens + call.completion.usage.output_tokens
                    if call.completion is not None
                    else reservation.tokens
                )
                self._budget.reconcile(reservation, used)
        finally:
            if holder is None:
                self._limit.release()  # a journaled judgment keeps it until record()
        if call.completion is not None:
            return self._answered(request, call.completion, call)
        return self._errored(call, attempt, deadline)

    async def _admit(self, *, first: bool) -> Send | None:
        """Wait for the request rate (configured, learned or shared) to let a send go."""
        if self._rate is not None:
            return await self._rate.acquire(first=first)
        if self._learned is not None:
            return await self._learned.acquire(first=first)
        return None

    async def _call(self, request: Request, timeout: float, send: Send | None) -> _Call:
        """One provider call under ``timeout``; its errors classified, never raised."""
        self.calls += 1
        call = _Call(time.monotonic())
        if self._first_send is None:
            self._first_send = call.sent_at
        started = time.perf_counter()
        self.in_flight += 1
        # the provider tells the rate when the request leaves (the call's task copies this
        # context)
        token = departure.set(None if send is None else send.depart)
        try:
            call.completion = await asyncio.wait_for(
                self.provider.generate(request.messages, request.config, request=request),
                timeout,
            )
        except asyncio.TimeoutError:
            call.error = ProviderError(
                f"attempt timed out after {timeout:g}s", error_class="transient", overload=True
            )
        except ProviderError as raised:
            call.error = raised
        except Exception as raised:  # noqa: BLE001 - classified, never propagated
            call.error = classify_exception(raised)
        finally:
            departure.reset(token)
            self.in_flight -= 1
            if send is not None:
                send.settle(time.monotonic())
        call.latency = time.perf_counter() - started
        return call

    def _answered(self, request: Request, completion: Completion, call: _Call) -> Completion:
        """The limits hear of an answer; the completion gets its latency and model."""
        self.health.on_reply()
        if isinstance(self._learned, LearnedRate):
            self._learned.on_answer(completion.rate_limit, sent_at=call.sent_at)
        elif self._learned is not None:
            self._learned.on_answer(completion.rate_limit)
        self._limit.on_success(call.latency)
        usage = completion.usage
        completion = replace(
            completion,
            latency_s=call.latency,
            model=completion.model or request.config.model,
            cached=False,
            # a provider's counts are checked before the reply is cached (any provider, not
            # only the built-in ones, which check them as they read the reply)
            usage=checked_usage(usage.input_tokens, usage.output_tokens) if usage.known else usage,
            logprobs=checked_logprobs(completion.logprobs),
        )
        self._account(request, completion.usage)
        return completion

    def _errored(self, call: _Call, attempt: int, deadline: float) -> Failure | float:
        """The limits and the endpoint's health hear of an error; the judgment's failure
        when it is final, else the wait before the next attempt (seconds)."""
        error = call.error
        assert error is not None
        # Redacted here too (not only in the SDK providers): whatever a provider raised
        # goes into a Failure, the journal and the run's output.
        message = self.provider.redact(str(error))
        self.errors_seen[error.error_class] += 1
        self.health.on_error(error, message, sent_at=call.sent_at)
        # A 429 is retried after its Retry-After; the pace hears of it and decides whether
        # it shows a limit (LearnedRate.evident). Only overload (a timeout, 503, 529)
        # lowers the in-flight limit: a 429 speaks of a rate, a 500 or a dropped
        # connection of nothing the provider accepts.
        if error.overload:
            self._limit.on_overload(sent_at=call.sent_at)
        if error.error_class == "rate_limit":
            if self._learned is not None:
                self._learned.on_rate_limit(sent_at=call.sent_at, info=error.rate_limit)
        elif error.status is not None and self._learned is not None:
            self._learned.on_answer()  # an HTTP error still took a place in the rate
        if error.error_class not in _RETRIABLE or attempt >= self.max_attempts:
            return Failure(error.error_class, message, attempts=attempt)
        delay = self._backoff(attempt, error.retry_after)
        if asyncio.get_running_loop().time() + delay >= deadline:
            return Failure(
                "deadline",
                f"deadline of {self.deadline:g}s reached after {attempt} attempts; "
                f"last error ({error.error_class}): {message}",
                attempts=attempt,
            )
        return delay

    def _stopped(self, attempts: int) -> Failure:
        return Failure("stopped", f"not sent: {self.health.reason}", attempts=attempts)

    def waiting_for(self) -> str:
        """What this engine waits for now, in words (for a progress line without a TTY)."""
        where = public_url(self.provider.base_url) or self.provider.name
        parts = []
        if self.in_flight:
            parts.append(f"{self.in_flight} replies from {self.model} at {where}")
        if self.backing_off:
            parts.append(f"{self.backing_off} retries backing off")
        if self.health.reason:
            parts.append(f"stopped ({self.health.reason})")
        return "; ".join(parts)

    def _account(self, request: Request, usage: Usage) -> None:
        key = (self.provider.name, request.config.model, request.task)
        row = self._usage.get(key)
        if row is None:
            row = self._usage[key] = _Usage()
        row.calls += 1
        if not usage.known:
            row.unknown_usage += 1
            row.cost_known = False
        row.input_tokens += usage.input_tokens
        row.output_tokens += usage.output_tokens
        cost = self.prices.cost(self.provider.name, request.config.model, usage)
        if cost is None:
            row.cost_known = False
        else:
            row.cost += cost

    # -- reporting -------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Calls, cache hits, failures by class, retries, tokens and cost (``None`` = unknown
        price), overall and by provider/model/task. JSON-serialisable."""
        usage = [
            {
                "provider": provider,
                "model": model,
                "task": task,
                "calls": row.calls,
                "input_tokens": row.input_tokens,
                "output_tokens": row.output_tokens,
                "calls_without_usage": row.unknown_usage,
                "cost_usd": row.cost if row.cost_known else None,
            }
            for (provider, model, task), row in sorted(self._usage.items())
        ]
        known = all(u["cost_usd"] is not None for u in usage)
        return {
            "run_id": self.run_id,
            "provider": self.provider.name,
            "model": self.model,
            "requests": self.requests,
            "completed": self.completed,
            "calls": self.calls,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "journal_hits": self.journal_hits,
            "failures": dict(self.failures),
            "stopped": self.health.reason,
            "budget": None if self.budget is None else self.budget.stats(),
            "endpoint": public_url(self.provider.base_url),
            "errors_seen": dict(self.errors_seen),
            "input_tokens": sum(u["input_tokens"] for u in usage),
            "output_tokens": sum(u["output_tokens"] for u in usage),
            # replies whose token counts were not counts (negative, fractional, text): their
            # tokens are not in the sums above and the cost is unknown
            "calls_without_usage": sum(u["calls_without_usage"] for u in usage),
            "cost_usd": sum(u["cost_usd"] or 0.0 for u in usage) if known else None,
            "usage": usage,
            "concurrency": {
                "max": self.concurrency,
                "current": self._limit.limit,
                "lowest": self._limit.min_seen,
                "decreases": self._limit.decreases,
            },
            "request_rate": self._rate_stats(),
            "cache_by_task": {task: dict(c) for task, c in self._cache_by_task.items()},
            "elapsed_s": time.monotonic() - self._t0,
            # From the engine's creation to its first provider call (None: no call yet).
            "first_send_s": None if self._first_send is None else self._first_send - self._t0,
        }

    def _rate_stats(self) -> dict[str, Any]:
        """The request rate the engine kept to: configured (``rpm``) or learned."""
        if self._rate is not None:
            return {
                "source": "configured",
                "rpm": self.rpm,
                "max_loop_lag_s": round(self._rate.max_lag, 4),
                "restamped": self._rate.window.restamped,
                # sends counted from their reported departure, and the longest a send took
                # from its grant to leaving
                "departed": self._rate.window.departed,
                "max_departure_delay_s": round(self._rate.window.max_delay, 4),
                # sends whose grant left the window before they left the client, held
                # until they did
                "overdue": self._rate.window.overdue,
            }
        learned = self._learned
        if learned is None:
            return {"source": "none"}
        if not isinstance(learned, LearnedRate):
            return {"source": "shared"}  # kept by the cluster's coordinator
        rate = learned.rate()
        return {
            "source": "learned",
            "rpm": None if rate is None else round(rate * 60.0, 1),
            "stated_rpm": None if learned.stated is None else round(learned.stated * 60.0, 1),
            "decreases": learned.decreases,
            # 429s, and those taken for noise (retried, the pace untouched)
            "rate_limited": learned.refused,
            "taken_for_noise": learned.ignored,
        }

    def summary(self) -> str:
        s = self.stats()
        cost = "unknown" if s["cost_usd"] is None else f"${s['cost_usd']:.4f}"
        failures = ", ".join(f"{k} {v}" for k, v in sorted(s["failures"].items())) or "none"
        return (
            f"{s['provider']}/{s['model']}: {s['completed']} judged calls in {s['elapsed_s']:.1f}s; "
            f"provider calls {s['calls']} (retries {s['retries']}), cache hits {s['cache_hits']}, "
            f"resumed {s['journal_hits']}; failures: {failures}; tokens in {s['input_tokens']} "
            f"out {s['output_tokens']}; cost {cost}"
            + (
                f" ({s['calls_without_usage']} replies gave no valid token counts)"
                if s["calls_without_usage"]
                else ""
            )
        )

    # -- lifecycle -------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the provider and, if the engine owns them, the cache and journal; record the
        run's cache hits and misses in the cache file; print the summary if asked."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.provider.aclose()
        finally:
            if self.cache is not None:
                if self.cache_hits or self.cache_misses:
                    await self._record_run()
                if self.owns_storage:
                    await self.cache.aclose()
            if self.journal is not None and self.owns_storage:
                await self.journal.aclose()
        if self.summary_stream is not None and not self.quiet:
            print(f"genir-eval: {self.summary()}", file=self.summary_stream)

    async def _record_run(self) -> None:
        """Record this run's cache hits and misses in the cache file; a cache that cannot
        be written (a full disk) must not fail the run's end: the judgments are journaled."""
        assert self.cache is not None
        stats = self.stats()
        try:
            await self.cache.record_run(
                self.run_id,
                started=self._started,
                provider=self.provider.name,
                model=self.model,
                stats={
                    "hits": stats["cache_hits"],
                    "misses": stats["cache_misses"],
                    "calls": stats["calls"],
                    "by_task": stats["cache_by_task"],
                },
            )
        except Exception as error:  # noqa: BLE001 - only the hit/miss statistics are lost
            self.errors_seen[f"cache write: {type(error).__name__}"] += 1

    async def __aenter__(self) -> Engine:
        if self.notice and not self.quiet:
            print(f"genir-eval: {self.notice}", file=self.summary_stream or sys.stderr)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
