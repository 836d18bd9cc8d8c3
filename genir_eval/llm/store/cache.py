"""The persistent response cache: nothing paid twice.

One SQLite file (WAL, ``busy_timeout``) shared safely by concurrent runs. A row is keyed by
the SHA-256 of the canonical JSON of everything that changes the reply and nothing else:
provider, model, base URL (without credentials), messages, sampling parameters, the prompt
template version, the repeat index and the provider's own version when it has one (the offline
provider's code). Timeouts, retries, concurrency and the API key are
never part of it; the key's inputs are stored beside the reply so ``genir-eval cache show KEY``
explains any hit or miss.

Modes: ``read-write`` (default), ``replay`` (a miss is a ``cache_miss`` failure, no call is
made), ``off``.

Tables: ``cache`` (one row per key) and ``cache_runs`` (one row per engine run with its hits
and misses by model and task). The run journal (:mod:`genir_eval.llm.store.journal`) may live in the
same file in its own table.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from genir_eval.errors import InputError
from genir_eval.llm.providers.base import Completion, Request, TokenLogprob, Usage
from genir_eval.llm.store._sqlite import SqliteWorker

__all__ = [
    "CACHE_MODES",
    "CacheMode",
    "CACHE_VERSION",
    "BadCacheRow",
    "Cache",
    "CacheEntry",
    "cache_key",
    "key_inputs",
]

CacheMode = Literal["read-write", "replay", "off"]
CACHE_MODES: tuple[str, ...] = ("read-write", "replay", "off")
CACHE_VERSION = 1
#: What to do when the cache file cannot be used (said in the error).
CACHE_REMEDY = (
    "move it aside (a new cache is created; only its stored replies are lost) or run with "
    "--cache-mode off"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    inputs TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    logprobs TEXT,
    finish_reason TEXT,
    response_model TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cache_runs (
    run_id TEXT PRIMARY KEY,
    started REAL NOT NULL,
    finished REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    stats TEXT NOT NULL
);
"""


def _strip_credentials(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def key_inputs(
    provider: str, base_url: str | None, request: Request, *, version: str = ""
) -> dict[str, Any]:
    """Everything that changes the reply, and nothing else (see the module doc).

    ``version`` is the provider's own version (:attr:`Provider.version`): what decides its
    replies besides the request, such as the offline provider's code. It enters the key only
    when non-empty, so the keys of providers without one are unchanged."""
    config = request.config
    inputs: dict[str, Any] = {
        "v": CACHE_VERSION,
        "provider": provider,
        "model": config.model,
        "base_url": _strip_credentials(base_url),
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "response_format": config.response_format,
        "logprobs": config.logprobs,
        "top_logprobs": config.top_logprobs,
        "extra": dict(config.extra),
        "prompt_version": request.key.prompt_version,
        "repeat": request.key.repeat,
    }
    if version:
        inputs["provider_version"] = version
    if config.json_schema is not None:
        # Only when set, so the keys of requests without a schema are unchanged.
        inputs["json_schema"] = dict(config.json_schema)
    return inputs


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def cache_key(
    provider: str, base_url: str | None, request: Request, *, version: str = ""
) -> tuple[str, str]:
    """``(sha256 hex, canonical inputs JSON)`` for ``request`` sent to ``provider`` at
    ``version`` (see :func:`key_inputs`)."""
    inputs = _canonical(key_inputs(provider, base_url, request, version=version))
    return hashlib.sha256(inputs.encode("utf-8")).hexdigest(), inputs


@dataclass(frozen=True)
class CacheEntry:
    key: str
    provider: str
    model: str
    task: str
    inputs: dict[str, Any]
    completion: Completion
    created: float


def _logprobs_to_json(logprobs: tuple[TokenLogprob, ...] | None) -> str | None:
    if logprobs is None:
        return None
    return json.dumps([[t.token, t.logprob, [list(alt) for alt in t.top]] for t in logprobs])


def _logprobs_from_json(text: str | None) -> tuple[TokenLogprob, ...] | None:
    if text is None:
        return None
    return tuple(
        TokenLogprob(token=tok, logprob=lp, top=tuple((a, b) for a, b in top))
        for tok, lp, top in json.loads(text)
    )


_COLUMNS = (
    "key, provider, model, task, inputs, text, input_tokens, output_tokens, latency_s, "
    "logprobs, finish_reason, response_model, created"
)


def _entry(row: tuple[Any, ...]) -> CacheEntry:
    (
        key,
        provider,
        model,
        task,
        inputs,
        text,
        tin,
        tout,
        latency,
        logprobs,
        finish,
        rmodel,
        created,
    ) = row
    return CacheEntry(
        key=key,
        provider=provider,
        model=model,
        task=task,
        inputs=json.loads(inputs),
        completion=Completion(
            text=text,
            usage=Usage(input_tokens=tin, output_tokens=tout),
            latency_s=latency,
            model=rmodel or model,
            logprobs=_logprobs_from_json(logprobs),
            finish_reason=finish,
            cached=True,
        ),
        created=created,
    )


# A run's start and end: seconds since 1970, before the year 3000 (what a clock can print).
_LATEST = 32_503_680_000.0
_RUN_COUNTS = ("hits", "misses", "calls")


def _run_row(path: str, row: tuple[Any, ...]) -> dict[str, Any]:
    """A ``cache_runs`` row as :meth:`Cache.record_run` wrote it, or a located
    :class:`~genir_eval.errors.InputError`: the file is the user's, and a row edited by hand
    (or by another program) is bad input, not a crash."""
    rowid, run_id, started, finished, provider, model, mode, stats = row

    def bad(column: str, message: str) -> InputError:
        return InputError(message, path=path, row=rowid, column=f"cache_runs.{column}")

    for column, value in (
        ("run_id", run_id),
        ("provider", provider),
        ("model", model),
        ("mode", mode),
    ):
        if not isinstance(value, str) or not value:
            raise bad(column, f"must be non-empty text, not {value!r}")
    for column, value in (("started", started), ("finished", finished)):
        if type(value) not in (int, float) or not 0 <= value < _LATEST:
            raise bad(column, f"must be a time in seconds since 1970, not {value!r}")
    try:
        counts = json.loads(stats) if isinstance(stats, str) else None
    except (ValueError, RecursionError):
        counts = None
    if not isinstance(counts, dict):
        raise bad("stats", f"must be a JSON object of counts, not {str(stats)[:80]!r}")
    for key in _RUN_COUNTS:
        value = counts.get(key, 0)
        if type(value) is not int or value < 0:
            raise bad("stats", f"{key} must be a whole number >= 0, not {value!r}")
    return {
        "run_id": run_id,
        "started": started,
        "finished": finished,
        "provider": provider,
        "model": model,
        "mode": mode,
        **counts,
    }


class BadCacheRow(ValueError):
    """A cache row that fails the checks a fresh reply gets (see :meth:`Cache.get`)."""


def _check_row(key: str, row: tuple[Any, ...]) -> CacheEntry:
    """The row as an entry, if it is what :meth:`Cache.put` wrote for ``key``: its inputs hash
    to the key and name its provider and model, its reply is text, its token counts whole
    numbers >= 0, its latency a number and its log-probabilities readable."""
    _, provider, model, _, inputs, text, tin, tout, latency, logprobs, *_ = row
    if not isinstance(inputs, str) or hashlib.sha256(inputs.encode("utf-8")).hexdigest() != key:
        raise BadCacheRow("its stored inputs do not hash to its key (another request's row)")
    if not isinstance(text, str):
        raise BadCacheRow(f"its reply is a {type(text).__name__}, not text")
    for name, value in (("input_tokens", tin), ("output_tokens", tout)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BadCacheRow(f"its {name} {value!r} is not a whole number >= 0")
    if isinstance(latency, bool) or not isinstance(latency, (int, float)):
        raise BadCacheRow(f"its latency {latency!r} is not a number")
    try:
        entry = _entry(row)
    except (ValueError, TypeError) as error:  # the inputs or log-probabilities JSON
        raise BadCacheRow(f"a stored field does not read back: {error}") from None
    if not isinstance(entry.inputs, dict) or (
        entry.inputs.get("provider"),
        entry.inputs.get("model"),
    ) != (provider, model):
        raise BadCacheRow("its provider and model are not those of its inputs")
    for token in entry.completion.logprobs or ():
        if not isinstance(token.logprob, (int, float)) or not token.logprob <= 0:  # NaN too
            raise BadCacheRow(f"a log-probability {token.logprob!r} is not a number <= 0")
    return entry


class Cache:
    """The cache file; reads and writes go through one background thread."""

    def __init__(self, path: str | Path, mode: CacheMode = "read-write") -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode {mode!r}; expected one of {CACHE_MODES}")
        self.path = Path(path)
        self.mode: CacheMode = mode
        self._worker = SqliteWorker(self.path, _SCHEMA, what="cache", remedy=CACHE_REMEDY)

    # -- async, for the engine -----------------------------------------------------------
    async def get(self, key: str) -> Completion | None:
        """The stored reply for ``key``, ``None`` if there is none. A row that fails the checks
        a fresh reply gets (:func:`_check_row`: edited or damaged) is never used: it is
        removed, so the reply is asked again and stored anew, and :class:`BadCacheRow` says
        why (the engine counts it as a miss and reports it)."""

        def read(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            return conn.execute(f"SELECT {_COLUMNS} FROM cache WHERE key = ?", (key,)).fetchone()

        row = await self._worker.run(read)
        if row is None:
            return None
        try:
            return _check_row(key, row).completion
        except BadCacheRow:

            def remove(conn: sqlite3.Connection) -> None:
                conn.execute("DELETE FROM cache WHERE key = ?", (key,))

            await self._worker.run(remove, write=True)
            raise

    async def put(
        self,
        key: str,
        inputs: str,
        *,
        provider: str,
        task: str,
        completion: Completion,
        model: str | None = None,
    ) -> None:
        """Store ``completion`` under ``key``; ``model`` is the one ``inputs`` names (read
        from them when not given)."""
        if model is None:
            model = json.loads(inputs)["model"]
        values = (
            key,
            CACHE_VERSION,
            provider,
            model,
            task,
            inputs,
            completion.text,
            completion.usage.input_tokens,
            completion.usage.output_tokens,
            completion.latency_s,
            _logprobs_to_json(completion.logprobs),
            completion.finish_reason,
            completion.model,
            time.time(),
        )

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO cache (key, version, provider, model, task, inputs, text, "
                "input_tokens, output_tokens, latency_s, logprobs, finish_reason, response_model, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        await self._worker.run(write, write=True)

    async def record_run(
        self,
        run_id: str,
        *,
        started: float,
        provider: str,
        model: str,
        stats: dict[str, Any],
    ) -> None:
        values = (run_id, started, time.time(), provider, model, self.mode, json.dumps(stats))

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO cache_runs (run_id, started, finished, provider, model, "
                "mode, stats) VALUES (?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        await self._worker.run(write, write=True)

    # -- sync, for the CLI and tests ---------------------------------------------------------
    def entry(self, key: str) -> CacheEntry | None:
        """The stored entry for ``key`` (a full key or an unambiguous prefix of >= 6 chars)."""

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            if len(key) >= 64:
                query, arg = f"SELECT {_COLUMNS} FROM cache WHERE key = ?", key
            else:
                query, arg = f"SELECT {_COLUMNS} FROM cache WHERE key >= ? AND key < ? LIMIT 2", key
                return conn.execute(query, (arg, arg + "\uffff")).fetchall()
            return conn.execute(query, (arg,)).fetchall()

        if len(key) < 6:
            raise ValueError("give at least 6 characters of the key")
        rows = self._worker.run_sync(read)
        if len(rows) != 1:
            return None
        return _entry(rows[0])

    def stats(self) -> dict[str, Any]:
        """Rows, size, rows by model and task, and the hits/misses each recorded run saw."""

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            rows = conn.execute("SELECT COUNT(*) FROM cache").fetchone()[0]
            by = conn.execute(
                "SELECT provider, model, task, COUNT(*), SUM(input_tokens), SUM(output_tokens) "
                "FROM cache GROUP BY provider, model, task ORDER BY provider, model, task"
            ).fetchall()
            runs = conn.execute(
                "SELECT rowid, run_id, started, finished, provider, model, mode, stats "
                "FROM cache_runs ORDER BY rowid"
            ).fetchall()
            return {"rows": rows, "by": by, "runs": runs}

        data = self._worker.run_sync(read)
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
            if p.exists()
        )
        return {
            "path": str(self.path),
            "rows": data["rows"],
            "size_bytes": size,
            "by_model_task": [
                {
                    "provider": p,
                    "model": m,
                    "task": t,
                    "rows": n,
                    "input_tokens": tin or 0,
                    "output_tokens": tout or 0,
                }
                for p, m, t, n, tin, tout in data["by"]
            ],
            "runs": sorted(
                (_run_row(str(self.path), row) for row in data["runs"]),
                key=lambda run: run["started"],
            ),
        }

    def close(self) -> None:
        self._worker.close()

    async def aclose(self) -> None:
        import asyncio

        await asyncio.to_thread(self._worker.close)

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
