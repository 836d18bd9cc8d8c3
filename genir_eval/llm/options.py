"""The engine's command-line options, shared by every command that judges."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genir_eval.errors import GenirError
from genir_eval.llm.cache import CACHE_MODES, Cache
from genir_eval.llm.engine import Engine
from genir_eval.llm.journal import Journal
from genir_eval.llm.prices import load_prices
from genir_eval.llm.providers import PROVIDER_NAMES, make_provider, resolve_provider
from genir_eval.settings import check_base_url, parse_setting

__all__ = [
    "DEFAULT_CACHE_PATH",
    "DEFAULT_MAX_MISSING",
    "DEFAULT_STOP_AFTER",
    "DEFAULT_GIVE_UP_AFTER",
    "add_engine_arguments",
    "engine_from_args",
    "setting_type",
]

DEFAULT_CACHE_PATH = ".genir-cache/cache.sqlite"
#: A judge with more than this fraction of its labels missing fails the run (exit code 3).
DEFAULT_MAX_MISSING = 0.05
#: Consecutive permanent errors of one endpoint (401, 403, exhausted quota, unknown model)
#: after which the engine stops sending.
DEFAULT_STOP_AFTER = 5
#: Seconds with no reply at all (connection failures, attempts timed out) after which an
#: endpoint is given up.
DEFAULT_GIVE_UP_AFTER = 45.0


def setting_type(name: str) -> Callable[[str], Any]:
    """An argparse ``type`` for the numeric setting ``name`` (see :mod:`genir_eval.settings`):
    ``nan``, ``inf`` and out-of-range values are refused with what was expected."""

    def parse(text: str) -> Any:
        try:
            return parse_setting(name, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = name  # argparse names the type in its messages
    return parse


def _url(text: str) -> str:
    try:
        return check_base_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_engine_arguments(
    parser: argparse.ArgumentParser,
    *,
    cache_help: str | None = None,
    journal_help: str | None = None,
) -> None:
    """The engine's options; ``cache_help``/``journal_help`` say what happens when
    ``--cache``/``--journal`` are left out, where a command's defaults differ (``run``: the
    scenario's)."""
    group = parser.add_argument_group("LLM engine")
    group.add_argument(
        "--provider",
        choices=PROVIDER_NAMES,
        default="auto",
        help="auto (default): --base-url or OPENAI_API_KEY -> openai, ANTHROPIC_API_KEY -> "
        "anthropic, else offline",
    )
    group.add_argument("--model", help="model name (default: the provider's default)")
    group.add_argument(
        "--base-url",
        type=_url,
        help="an OpenAI-compatible server (vLLM, Ollama, llama.cpp); without --provider it "
        "selects the openai provider (default: the provider's own API)",
    )
    group.add_argument(
        "--concurrency",
        type=setting_type("concurrency"),
        default=16,
        help="requests in flight (default 16)",
    )
    group.add_argument(
        "--rpm", type=setting_type("rpm"), help="requests per minute (default: no cap)"
    )
    group.add_argument(
        "--tpm", type=setting_type("tpm"), help="tokens per minute (default: no cap)"
    )
    group.add_argument(
        "--cache",
        default=DEFAULT_CACHE_PATH,
        metavar="PATH",
        help=cache_help or f"cache file (default {DEFAULT_CACHE_PATH})",
    )
    group.add_argument(
        "--cache-mode",
        choices=CACHE_MODES,
        default="read-write",
        help="read-write (default), replay, off",
    )
    group.add_argument(
        "--journal",
        metavar="PATH",
        help=journal_help
        or "run journal for resuming (default: the cache file; 'none' to keep no journal)",
    )
    group.add_argument(
        "--max-attempts",
        type=setting_type("max_attempts"),
        default=6,
        help="attempts per call (default 6)",
    )
    group.add_argument(
        "--timeout",
        type=setting_type("timeout"),
        default=60.0,
        help="seconds per attempt (default 60)",
    )
    group.add_argument(
        "--deadline",
        type=setting_type("deadline"),
        default=300.0,
        help="seconds per judgment, retries included (default 300)",
    )
    group.add_argument(
        "--prices",
        metavar="FILE",
        help="a price table overriding the packaged one (default: the packaged table)",
    )
    group.add_argument(
        "--max-missing",
        type=setting_type("max_missing"),
        default=DEFAULT_MAX_MISSING,
        metavar="FRACTION",
        help="the run fails (exit 3) when a judge has more than this fraction of its labels "
        f"missing (default {DEFAULT_MAX_MISSING})",
    )
    group.add_argument(
        "--allow-permanent",
        # --no-allow-permanent overrides a scenario's allow_permanent = true
        action=argparse.BooleanOptionalAction,
        default=None,
        help="do not fail the run for permanent provider errors (401/403, quota, unknown "
        "model, bad request) while the missing labels stay under --max-missing; "
        "--no-allow-permanent fails it even when the scenario allows them (default: the "
        "scenario's allow_permanent, else fail)",
    )
    group.add_argument(
        "--stop-after",
        type=setting_type("stop_after"),
        default=DEFAULT_STOP_AFTER,
        metavar="N",
        help="stop sending after N consecutive permanent errors of one endpoint (401, 403, "
        f"quota, unknown model; default {DEFAULT_STOP_AFTER}, 0: never)",
    )
    group.add_argument(
        "--give-up-after",
        type=setting_type("give_up_after"),
        default=DEFAULT_GIVE_UP_AFTER,
        metavar="SECONDS",
        help="give an endpoint up after this long with no reply at all (connection failures, "
        "attempts timed out) "
        f"(default {DEFAULT_GIVE_UP_AFTER:g}, 0: never)",
    )
    group.add_argument("--quiet", action="store_true", help="no progress bar, notice or summary")


def engine_from_args(args: argparse.Namespace) -> Engine:
    """An :class:`Engine` from the options of :func:`add_engine_arguments`. Use it as
    ``async with engine_from_args(args) as engine:`` (prints the provider notice on entry and
    the summary on exit unless ``--quiet``)."""
    resolved, notice = resolve_provider(args.provider, base_url=args.base_url)
    provider = make_provider(
        resolved,
        model=args.model,
        base_url=args.base_url,
        timeout=args.timeout,
        pool_shards=max(1, args.concurrency // 16),
    )
    cache: Cache | None = None
    journal: Journal | None = None
    try:
        if args.cache_mode != "off":
            cache = Cache(Path(args.cache), mode=args.cache_mode)
        journal_path = getattr(args, "journal", None)
        if journal_path != "none":
            journal = Journal(Path(journal_path or args.cache))
        prices = load_prices(getattr(args, "prices", None))
    except GenirError:
        if cache is not None:
            cache.close()
        if journal is not None:
            journal.close()
        raise
    return Engine(
        provider,
        concurrency=args.concurrency,
        rpm=args.rpm,
        tpm=args.tpm,
        max_attempts=args.max_attempts,
        attempt_timeout=args.timeout,
        deadline=getattr(args, "deadline", 300.0),
        cache=cache,
        journal=journal,
        prices=prices,
        progress=not args.quiet,
        quiet=args.quiet,
        summary_stream=sys.stderr,
        notice=notice,
        stop_after=getattr(args, "stop_after", DEFAULT_STOP_AFTER),
        give_up_after=getattr(args, "give_up_after", DEFAULT_GIVE_UP_AFTER),
    )
