"""The judge interface: labels, the registry, and the one helper every judge calls.

A judge is a factory returning an async callable (inspect_ai's scorers): ``make_judge(name,
**options)`` rebuilds it from a scenario file or a result row, since ``name`` and
``options`` are kept on the judge. Calling a judge on a :class:`~genir_eval.records.Session`
with an engine returns :class:`Label` objects, each keeping its evidence (raw reply, prompt
hash, why it is missing). Every judge goes through :func:`ask`, which resumes from the
engine's journal, parses and validates the reply, repairs once, and never defaults.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from genir_eval.errors import ConfigError
from genir_eval.judges.parsing import ReplyError
from genir_eval.llm.engine import REPAIR_SUFFIX
from genir_eval.llm.providers.base import (
    Completion,
    Failure,
    GenerateConfig,
    JudgmentKey,
    Message,
    Request,
)
from genir_eval.llm.store.journal import as_stored
from genir_eval.records import Session

# What judges call: ``genir_eval.llm.engine.Engine`` or a wrapper delegating to one (the
# runner's progress-tracking engine), so it is typed structurally as Any.
Engine = Any

__all__ = [
    "LABEL_VERSION",
    "Label",
    "Judge",
    "JudgeStats",
    "Factory",
    "register_judge",
    "judge_sessions",
    "ask",
    "prompt_hash",
    "label_to_dict",
    "label_from_dict",
    "REPAIR_SUFFIX",
]

LABEL_VERSION = 1

T = TypeVar("T")


@dataclass(frozen=True)
class Label:
    """One judgment's outcome with its evidence. ``value is None`` means missing."""

    key: JudgmentKey
    value: Any | None
    missing_reason: str | None = None
    raw: str | None = None
    prompt_hash: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def missing(self) -> bool:
        return self.value is None


@dataclass
class JudgeStats:
    """How replies fared for one judge: the rates the meta report shows."""

    calls: int = 0
    reused: int = 0
    parse_failures: int = 0
    repairs: int = 0
    repaired_ok: int = 0
    truncations: int = 0
    failures: int = 0
    missing: int = 0
    #: journal rows not reused because they fail the checks a fresh reply gets (their raw
    #: reply no longer parses to the stored label, a label out of range, another judgment's
    #: row): asked again instead
    journal_rejected: int = 0

    def rates(self) -> dict[str, float | int]:
        n = max(self.calls, 1)
        out: dict[str, float | int] = dataclasses.asdict(self)
        out["parse_failure_rate"] = self.parse_failures / n
        out["repair_rate"] = self.repairs / n
        out["truncation_rate"] = self.truncations / n
        out["missing_rate"] = self.missing / max(self.calls + self.reused, 1)
        return out


@runtime_checkable
class Judge(Protocol):
    """What a registered factory returns."""

    name: str
    kind: str
    options: Mapping[str, Any]

    async def __call__(self, session: Session, engine: Engine) -> list[Label]: ...


Factory = Callable[..., Judge]
REGISTRY: dict[str, Factory] = {}


def register_judge(name: str) -> Callable[[Factory], Factory]:
    """Register ``factory(**options) -> Judge`` under ``name`` (e.g. ``"spans"``)."""

    def decorate(factory: Factory) -> Factory:
        if name in REGISTRY and REGISTRY[name] is not factory:
            raise ConfigError(f"judge {name!r} is registered twice")
        REGISTRY[name] = factory
        return factory

    return decorate


async def judge_sessions(judge: Judge, sessions: Iterable[Session], engine: Engine) -> list[Label]:
    """Run ``judge`` on all sessions concurrently; the engine bounds concurrency and
    :func:`ask` resumes from the journal, so re-running a run only fills the gaps."""
    results = await asyncio.gather(*(judge(session, engine) for session in sessions))
    return [label for labels in results for label in labels]


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 of the rendered prompt (roles and contents, in order)."""
    payload = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


REPAIR_PROMPT = {
    "en": (
        "Your previous reply could not be used: {reason}. Reply again with only the JSON "
        "object requested above, complete and valid, and nothing else."
    ),
    "zh": (
        "你上一次的回复无法使用：{reason}。请只重新输出上文要求的完整、合法的 JSON 对象，"
        "不要输出其他内容。"
    ),
}


def _checked_entry(key: JudgmentKey, entry: Any, parse: Callable[[str], Any]) -> Label | None:
    """The journal's label for ``key`` if the row passes the checks a fresh reply gets: it is
    this judgment's row, its raw reply parses (type and range) and parses to the label stored
    beside it. ``None`` otherwise: the row was edited or damaged, and the judgment is asked
    again rather than a bad label used."""
    if entry.key != key or not isinstance(entry.raw, str):
        return None
    stored = entry.value
    value = stored["value"] if isinstance(stored, Mapping) and "value" in stored else stored
    try:
        parsed = parse(entry.raw)
    except ReplyError:
        return None
    if as_stored(parsed) != value:
        return None
    return _label_from_entry(key, entry)


def _label_from_entry(key: JudgmentKey, entry: Any) -> Label:
    stored = entry.value
    if isinstance(stored, Mapping) and "value" in stored:
        return Label(
            key=key,
            value=stored["value"],
            raw=entry.raw,
            prompt_hash=stored.get("hash"),
            extra={**dict(stored.get("extra") or {}), "resumed": True},
        )
    return Label(key=key, value=stored, raw=entry.raw, extra={"resumed": True})


async def _journal(
    engine: Engine, request: Request, result: Completion | Failure, label: Label
) -> None:
    """Journal the final outcome under the judgment's own request (a repaired reply is
    stored as that request's raw reply, so a resumed run parses it directly)."""
    if isinstance(result, Failure):
        await engine.record(request, result)
        return
    if label.value is None:
        failure = Failure("permanent", label.missing_reason or "unusable reply")
        await engine.record(request, result, failure=failure)
        return
    value = {"value": label.value, "extra": dict(label.extra), "hash": label.prompt_hash}
    await engine.record(request, result, value=value)


def _truncated(completion: Completion) -> bool:
    return (completion.finish_reason or "").lower() in {"length", "max_tokens"}


async def ask(
    engine: Engine,
    key: JudgmentKey,
    messages: Sequence[Message],
    config: GenerateConfig,
    task: str,
    context: Any,
    parse: Callable[[str], T],
    *,
    stats: JudgeStats | None = None,
    language: str = "en",
    extra: Callable[[Completion, T], Mapping[str, Any]] | None = None,
) -> Label:
    """Ask the engine for one judgment and return it as a :class:`Label`.

    A journal row that is ``ok`` (and whose request fingerprint still matches) is reused
    without calling. Otherwise the reply is parsed
    with ``parse`` (which raises :class:`~genir_eval.judges.parsing.ReplyError` on an
    unusable reply); an unusable reply gets one repair call, whose request carries
    ``prompt_version + "+repair"`` so the cache tells it apart. If that fails too, the label
    is missing with the reason, never a default. The final result is journaled.
    """
    stats = stats if stats is not None else JudgeStats()
    messages = tuple(messages)
    request = Request(key=key, messages=messages, config=config, task=task, context=context)
    entry = engine.resume(request)
    if entry is not None and entry.value is not None:
        resumed = _checked_entry(key, entry, parse)
        if resumed is not None:
            stats.reused += 1
            return resumed
        stats.journal_rejected += 1

    phash = prompt_hash(messages)
    stats.calls += 1
    result = await engine.complete(request)
    final: Completion | Failure = result
    label, first_reason = _interpret(result, key, phash, parse, stats, extra)
    if label is None:
        assert isinstance(result, Completion)
        first_raw = result.text
        stats.repairs += 1
        repair_key = dataclasses.replace(key, prompt_version=key.prompt_version + REPAIR_SUFFIX)
        lang = "zh" if language.startswith("zh") else "en"
        repair_messages = (
            *messages,
            Message("assistant", result.text),
            Message("user", REPAIR_PROMPT[lang].format(reason=first_reason)),
        )
        # A truncated first reply should get room to finish the second time.
        repair_config = config
        if _truncated(result):
            repair_config = dataclasses.replace(config, max_tokens=config.max_tokens * 2)
        second = await engine.complete(
            Request(
                key=repair_key,
                messages=repair_messages,
                config=repair_config,
                task=task,
                context=context,
            )
        )
        final = second
        label, second_reason = _interpret(second, key, phash, parse, stats, extra)
        if label is None:
            assert isinstance(second, Completion)
            label = Label(
                key=key,
                value=None,
                missing_reason=f"unparseable after repair: {first_reason}; then {second_reason}",
                raw=second.text,
                prompt_hash=phash,
                extra={"first_raw": first_raw, "repaired": True},
            )
        elif label.value is not None:
            stats.repaired_ok += 1
            label = dataclasses.replace(
                label, extra={**label.extra, "repaired": True, "first_raw": first_raw}
            )
    if label.value is None:
        stats.missing += 1
    await _journal(engine, request, final, label)
    return label


def _interpret(
    result: Completion | Failure,
    key: JudgmentKey,
    phash: str,
    parse: Callable[[str], T],
    stats: JudgeStats,
    extra: Callable[[Completion, T], Mapping[str, Any]] | None,
) -> tuple[Label | None, str]:
    """A label for a usable reply or a provider failure; ``None`` (and why) when a repair
    may help."""
    if isinstance(result, Failure):
        stats.failures += 1
        failed = Label(
            key=key,
            value=None,
            missing_reason=f"{result.error_class}: {result.message}",
            prompt_hash=phash,
            extra={"attempts": result.attempts},
        )
        return failed, failed.missing_reason or ""
    truncated = _truncated(result)
    if truncated:
        stats.truncations += 1
    try:
        value = parse(result.text)
    except ReplyError as error:
        stats.parse_failures += 1
        if error.truncated and not truncated:
            stats.truncations += 1
        return None, str(error)
    more = dict(extra(result, value)) if extra is not None else {}
    if result.cached:
        more["cached"] = True
    return Label(key=key, value=value, raw=result.text, prompt_hash=phash, extra=more), ""


def label_to_dict(label: Label) -> dict[str, Any]:
    """A JSON-ready result row; ``label_from_dict`` reads it back."""
    k = label.key
    return {
        "version": LABEL_VERSION,
        "session_id": k.session_id,
        "turn": k.turn,
        "item": k.item,
        "judge": k.judge,
        "prompt_version": k.prompt_version,
        "repeat": k.repeat,
        "value": label.value,
        "missing_reason": label.missing_reason,
        "raw": label.raw,
        "prompt_hash": label.prompt_hash,
        "extra": dict(label.extra),
    }


def label_from_dict(d: Mapping[str, Any]) -> Label:
    key = JudgmentKey(
        session_id=str(d["session_id"]),
        turn=d.get("turn"),
        item=str(d["item"]),
        judge=str(d["judge"]),
        prompt_version=str(d["prompt_version"]),
        repeat=int(d.get("repeat", 0)),
    )
    return Label(
        key=key,
        value=d.get("value"),
        missing_reason=d.get("missing_reason"),
        raw=d.get("raw"),
        prompt_hash=d.get("prompt_hash"),
        extra=dict(d.get("extra") or {}),
    )
