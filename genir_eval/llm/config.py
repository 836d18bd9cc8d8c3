"""The engine's settings, declared once: name, default, bound, help.

:class:`EngineConfig` is the one declaration. Everything else is generated from its fields:
the scenario's ``[engine]`` reader (``runner/scenario.py``), the command line's engine flags
and the overrides they make (``cli/engine_options.py``), the help texts and the README's
table; :mod:`genir_eval.llm.build` turns a configuration into an
:class:`~genir_eval.llm.engine.Engine` for every path that judges (``run``, Ray workers,
``meta``, the benches), and the engine reads its settings from it. A numeric field's bound is
its entry in :data:`genir_eval.settings.SETTINGS` (same name), checked wherever a value is
read and when the configuration is made.

A field's ``metadata`` holds its ``help``, its ``kind`` (how it is read: ``setting`` a number
with a bound, ``choice`` one of ``choices``, ``switch`` true/false, ``cache`` a file or none,
``journal`` the default place, a file or none, ``path`` a file, ``text`` a string) and
``commands``: ``all`` for every command that judges, ``run`` for ``genir-eval run`` alone.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genir_eval.errors import ConfigError
from genir_eval.llm.providers.base import DEFAULT_MAX_REPLY_BYTES
from genir_eval.llm.store.cache import CACHE_MODES
from genir_eval.settings import SETTINGS, check_setting

__all__ = [
    "DEFAULT_CACHE_PATH",
    "DEFAULT_MAX_MISSING",
    "DEFAULT_STOP_AFTER",
    "DEFAULT_GIVE_UP_AFTER",
    "DEFAULT_MAX_REPLY_BYTES",
    "DEFAULT_MAX_REPLY_BYTES",
    "CACHE_MODES",
    "EXECUTORS",
    "EngineConfig",
    "engine_fields",
    "setting_value",
]

#: Where the cache lives when nothing says otherwise: relative to the working directory for
#: the commands, to the scenario's folder (``../.genir-cache/cache.sqlite``) for a scenario.
DEFAULT_CACHE_PATH = ".genir-cache/cache.sqlite"
#: A judge with more than this fraction of its labels missing fails the run (exit code 3).
DEFAULT_MAX_MISSING = 0.05
#: Consecutive permanent errors of one endpoint (401, 403, exhausted quota, unknown model)
#: after which the engine stops sending.
DEFAULT_STOP_AFTER = 5
#: Seconds with no reply at all (connection failures, attempts timed out) after which an
#: endpoint is given up.
DEFAULT_GIVE_UP_AFTER = 45.0
#: Where a run's judging step runs.
EXECUTORS = ("local", "ray")


def _setting(
    default: Any, help: str, *, kind: str = "setting", commands: str = "all", **more: Any
) -> Any:
    return field(
        default=default, metadata={"help": help, "kind": kind, "commands": commands, **more}
    )


@dataclass(frozen=True)
class EngineConfig:
    """How calls are made: concurrency, rates, retries, storage, failure policy, executor."""

    concurrency: int = _setting(16, "requests in flight (per provider/model)")
    rpm: float | None = _setting(None, "requests per minute (default: no cap)")
    tpm: int | None = _setting(None, "tokens per minute (default: no cap)")
    max_attempts: int = _setting(6, "attempts per call")
    timeout: float = _setting(60.0, "seconds per attempt")
    max_reply_bytes: int = _setting(
        DEFAULT_MAX_REPLY_BYTES,
        "bytes a reply may take on the wire: a longer one is cut off as it streams and the "
        "call recorded as failed, saying so",
        metavar="BYTES",
    )
    deadline: float = _setting(
        300.0,
        "seconds per judgment from its first send (not its wait for a slot), retries included",
    )
    cache: Path | None = _setting(
        None,
        "cache file, 'none' for no cache (default: for run, the scenario's engine.cache, else "
        f"{DEFAULT_CACHE_PATH} beside the scenario's folder; for other commands "
        f"{DEFAULT_CACHE_PATH} in the working folder)",
        kind="cache",
        metavar="PATH",
    )
    cache_mode: str = _setting(
        "read-write", "read-write, replay or off", kind="choice", choices=CACHE_MODES
    )
    #: True: the default place (a run's output folder; the cache file for other commands);
    #: a path: that file; False: no journal
    journal: bool | Path = _setting(
        True,
        "resume journal file, 'none' for no journal (default: for run, the scenario's "
        "engine.journal, else journal.sqlite in the output folder; for other commands the "
        "cache file)",
        kind="journal",
        metavar="PATH",
    )
    prices: Path | None = _setting(
        None,
        "a price table overriding the packaged one (default: the packaged table)",
        kind="path",
        metavar="FILE",
    )
    max_cost: float | None = _setting(
        None,
        "stop before the next call that would take what the run spends past this many USD "
        "(each attempt's cost reserved before it is sent: its prompt at about 4 characters a "
        "token, its answer at the request's max_tokens, priced by the price table; retries and "
        "repeats count; cache and journal hits cost nothing); the run is left failed with the "
        "reason 'budget' and resumes when run again (default: no cap)",
        metavar="USD",
    )
    max_tokens: int | None = _setting(
        None,
        "stop before the next call that would take the run's tokens (prompt and answer, "
        "reserved as for --max-cost) past N (default: no cap)",
        metavar="N",
    )
    max_missing: float = _setting(
        DEFAULT_MAX_MISSING,
        "the run fails (exit 3) when a judge has more than this fraction of its labels missing",
        metavar="FRACTION",
    )
    allow_permanent: bool = _setting(
        False,
        "do not fail the run for permanent provider errors (401/403, quota, unknown model, "
        "bad request) while the missing labels stay under --max-missing "
        "(--no-allow-permanent: fail even when the scenario allows them)",
        kind="switch",
    )
    stop_after: int = _setting(
        DEFAULT_STOP_AFTER,
        "stop sending after N consecutive permanent errors of one endpoint (401, 403, quota, "
        "unknown model; 0: never)",
        metavar="N",
    )
    give_up_after: float = _setting(
        DEFAULT_GIVE_UP_AFTER,
        "give an endpoint up after this long with no reply at all (connection failures, "
        "attempts timed out; 0: never)",
        metavar="SECONDS",
    )
    repeats: int = _setting(
        1,
        "judge a seeded random sample of sessions (--repeat-sample) this many times in all, "
        "each a fresh sample from the model (the cache and journal keyed by the repeat), and "
        "give each judge's noise in meta.json and run.json: the within-item spread, the share "
        "of sessions whose verdict would flip, the intraclass correlation with its interval; "
        "offline twins are deterministic and are not repeated (1: judge once)",
        commands="run",
        metavar="K",
    )
    repeat_sample: int = _setting(
        20,
        "how many sessions --repeats judges again, drawn at random (seed 0) from the run's",
        commands="run",
        metavar="N",
    )
    executor: str = _setting(
        "local",
        "where the judging runs: this process (local) or a Ray cluster (ray; needs "
        'pip install "genir-eval[ray]")',
        kind="choice",
        choices=EXECUTORS,
        commands="run",
    )
    ray_address: str | None = _setting(
        None,
        'the Ray cluster to join ("auto": the one `ray start` runs here; ray://host:10001 for '
        "a remote one; default: a new local cluster)",
        kind="text",
        commands="run",
        metavar="ADDR",
    )
    ray_workers: int | None = _setting(
        None,
        "shards of sessions, one Ray task each (default: the cluster's CPUs)",
        commands="run",
        metavar="N",
    )

    def __post_init__(self) -> None:
        """Every field within its bound (:data:`genir_eval.settings.SETTINGS`) or among its
        choices, whoever made the configuration (a scenario, the command line, the API)."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in SETTINGS and value is not None:
                try:
                    check_setting(f.name, value)
                except ValueError as error:
                    raise ConfigError(f"{f.name}: {error}") from None
            elif f.metadata["kind"] == "choice" and value not in f.metadata["choices"]:
                choices = ", ".join(f.metadata["choices"])
                raise ConfigError(f"{f.name}: expected one of {choices}, got {value!r}")


_FIELDS = {f.name: f for f in dataclasses.fields(EngineConfig)}


def engine_fields(command: str = "run") -> Iterator[dataclasses.Field[Any]]:
    """The fields of :class:`EngineConfig` that ``command`` takes (``run`` takes them all)."""
    for f in dataclasses.fields(EngineConfig):
        if command == "run" or f.metadata["commands"] == "all":
            yield f


def setting_value(name: str, given: Any) -> Any:
    """A setting given as the command line gives it (``--cache none``, ``--journal PATH``) as
    the configuration holds it: ``none`` is no cache or journal, a file name its real path."""
    kind = _FIELDS[name].metadata["kind"]
    if kind in ("cache", "journal") and given == "none":
        return None if kind == "cache" else False
    if kind in ("cache", "journal", "path") and isinstance(given, (str, Path)):
        from genir_eval.paths import real_path

        return real_path(given)
    return given


#: The keywords ``Engine`` took before its settings became one :class:`EngineConfig`, and the
#: field each one is now (``attempt_timeout`` is ``timeout``).
LEGACY_KEYWORDS = {
    "concurrency": "concurrency",
    "rpm": "rpm",
    "tpm": "tpm",
    "max_attempts": "max_attempts",
    "attempt_timeout": "timeout",
    "deadline": "deadline",
    "stop_after": "stop_after",
    "give_up_after": "give_up_after",
}


def legacy_config(config: EngineConfig | None, given: dict[str, Any]) -> EngineConfig:
    """An :class:`EngineConfig` from the keywords of the earlier signature
    (``Engine(provider, concurrency=8, rpm=600)``), with a :class:`DeprecationWarning`; a
    keyword neither signature knows is a :class:`TypeError`, as Python's own would be."""
    unknown = sorted(set(given) - set(LEGACY_KEYWORDS))
    if unknown:
        raise TypeError(f"Engine() got an unexpected keyword argument {unknown[0]!r}")
    if config is not None:
        raise TypeError(
            f"Engine() takes its settings either as config or as keywords, not both "
            f"(got config and {', '.join(sorted(given))})"
        )
    fields = {LEGACY_KEYWORDS[name]: value for name, value in given.items()}
    warnings.warn(
        f"Engine({', '.join(f'{n}=...' for n in sorted(given))}) is deprecated: pass "
        f"Engine(provider, EngineConfig({', '.join(f'{f}=...' for f in sorted(fields))}))",
        DeprecationWarning,
        stacklevel=3,
    )
    return EngineConfig(**fields)
