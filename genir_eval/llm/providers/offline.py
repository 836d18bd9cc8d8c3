"""The offline provider: no network, deterministic, the embedded default.

Judges register a handler per task with :func:`register_offline`; the handler receives the
whole :class:`Request` (its ``context`` carries the structured inputs) and returns the reply
text in the same format an LLM would answer, so the judge's parser reads both alike.

The provider's :attr:`~OfflineProvider.version` is a hash of the code that produces its
replies, so the journal does not resume, nor the cache serve, labels an older twin wrote (see
:func:`code_version`).
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from genir_eval.llm.providers.base import (
    Completion,
    GenerateConfig,
    Message,
    Provider,
    ProviderError,
    Request,
    Usage,
)

__all__ = [
    "OfflineHandler",
    "OfflineProvider",
    "register_offline",
    "offline_handler",
    "approx_tokens",
    "code_version",
    "register_offline_version",
    "version_parts",
]

OfflineHandler = Callable[[Request], "str | Awaitable[str]"]

_HANDLERS: dict[str, OfflineHandler] = {}


def register_offline(task: str, handler: OfflineHandler) -> OfflineHandler:
    """Register ``handler`` for ``task`` (exact name, or a prefix such as ``"link_usefulness"``
    that serves every ``"link_usefulness.*"`` task without its own handler). Returns the
    handler so it can be used as a decorator through :func:`offline_handler`."""
    _HANDLERS[task] = handler
    return handler


def offline_handler(task: str) -> Callable[[OfflineHandler], OfflineHandler]:
    """Decorator form of :func:`register_offline`."""

    def decorate(handler: OfflineHandler) -> OfflineHandler:
        return register_offline(task, handler)

    return decorate


def approx_tokens(text: str) -> int:
    """About four characters per token, the usual rule of thumb for English BPE tokenizers."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _lookup(task: str) -> OfflineHandler | None:
    handler = _HANDLERS.get(task)
    if handler is None and "." in task:
        handler = _HANDLERS.get(task.split(".", 1)[0])
    return handler


_VERSIONS: dict[tuple[frozenset[str], tuple[str, ...]], str] = {}
_VERSION_PARTS: list[Callable[[], str]] = []


def register_offline_version(part: Callable[[], str]) -> None:
    """Add ``part()`` to the offline provider's version: something besides the handlers'
    source that decides their replies (which evidence model is installed), so labels
    journaled or cached under one are not resumed under another."""
    if part not in _VERSION_PARTS:
        _VERSION_PARTS.append(part)


def version_parts() -> tuple[str, ...]:
    """The registered parts of the offline provider's version, as they stand now."""
    return tuple(part() for part in _VERSION_PARTS)


def _imported_modules(roots: frozenset[str]) -> set[str]:
    """``roots`` and every module they reach through their globals (imported modules, and
    the modules of imported functions and classes), within the top-level packages of
    ``roots``: the code a handler can run."""
    packages = {name.split(".", 1)[0] for name in roots}
    seen: set[str] = set()
    todo = [name for name in roots if name in sys.modules]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for value in vars(sys.modules[name]).values():
            if inspect.ismodule(value):
                found: str | None = value.__name__
            else:
                found = getattr(value, "__module__", None)
            if (
                isinstance(found, str)
                and found not in seen
                and found.split(".", 1)[0] in packages
                and found in sys.modules
            ):
                todo.append(found)
    return seen


def _code_files(modules: frozenset[str]) -> list[Path]:
    files = {Path(__file__).resolve()}
    for name in _imported_modules(modules | {"genir_eval.records"}):
        source = getattr(sys.modules.get(name), "__file__", None)
        if source and source.endswith(".py"):
            files.add(Path(source).resolve())
    return sorted(p for p in files if p.is_file())


def code_version(parts: tuple[str, ...] = ()) -> str:
    """A hash (16 hex digits) of the source of the code that produces the offline replies.

    Which files: the module of every registered handler and every module of its package it
    reaches through its imports (the features, lexical scores and parsing a twin calls),
    ``genir_eval/records.py`` (the sessions they read) and this module. An edit to any of
    them retires the offline labels journaled under the old code, which costs a re-run of
    free, fast code and never resumes a stale label. ``parts`` (:func:`version_parts`) are
    hashed in too. Computed once per set of handler modules and parts (a handler registered
    later adds its files)."""
    modules = frozenset(str(getattr(h, "__module__", "") or "") for h in _HANDLERS.values())
    version = _VERSIONS.get((modules, parts))
    if version is None:
        digest = hashlib.sha256()
        for part in parts:
            digest.update(f"{part}\0".encode())
        for path in _code_files(modules):
            pieces = path.parts
            name = (
                "/".join(pieces[pieces.index("genir_eval") :])
                if "genir_eval" in pieces
                else path.name
            )
            digest.update(f"{name}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
        version = _VERSIONS[(modules, parts)] = digest.hexdigest()[:16]
    return version


class OfflineProvider(Provider):
    """Answers from registered handlers; usage counted approximately, cost zero."""

    name = "offline"
    cacheable = False
    rate_limited = False

    def __init__(self, model: str = "offline") -> None:
        self.model = model
        self._parts: tuple[str, ...] | None = None

    @property
    def version(self) -> str:
        """The hash of the handlers' code and of the registered version parts
        (:func:`code_version`), the parts read once per provider (one run)."""
        if self._parts is None:
            self._parts = version_parts()
        return code_version(self._parts)

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, *, request: Request | None = None
    ) -> Completion:
        if request is None:
            raise ProviderError(
                "the offline provider needs the Request (its task names the handler)",
                error_class="permanent",
            )
        handler = _lookup(request.task)
        if handler is None:
            raise ProviderError(
                f"no offline handler registered for task {request.task!r}",
                error_class="permanent",
            )
        start = time.perf_counter()
        reply = handler(request)
        text = await reply if inspect.isawaitable(reply) else reply
        if not isinstance(text, str):
            raise ProviderError(
                f"offline handler for {request.task!r} returned {type(text).__name__}, not str",
                error_class="permanent",
            )
        usage = Usage(
            input_tokens=sum(approx_tokens(m.content) for m in messages),
            output_tokens=approx_tokens(text),
        )
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.model,
            finish_reason="stop",
        )
