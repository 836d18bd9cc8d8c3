"""The engine's command-line options, shared by every command that judges."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from genir_eval.errors import ConfigError
from genir_eval.llm.cache import CACHE_MODES, Cache
from genir_eval.llm.engine import Engine
from genir_eval.llm.journal import Journal
from genir_eval.llm.prices import load_prices
from genir_eval.llm.providers import PROVIDER_NAMES, make_provider, resolve_provider

__all__ = ["DEFAULT_CACHE_PATH", "add_engine_arguments", "engine_from_args"]

DEFAULT_CACHE_PATH = ".genir-cache/cache.sqlite"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM engine")
    group.add_argument(
        "--provider",
        choices=PROVIDER_NAMES,
        default="auto",
        help="auto (default): --base-url or OPENAI_API_KEY -> openai, ANTHROPIC_API_KEY -> "
        "anthropic, else offline",
    )
    group.add_argument("--model", help="model name (default: the provider's default)")
    group.add_argument("--base-url", help="an OpenAI-compatible server (vLLM, Ollama, llama.cpp)")
    group.add_argument(
        "--concurrency", type=_positive_int, default=16, help="requests in flight (default 16)"
    )
    group.add_argument("--rpm", type=_positive_float, help="requests per minute (default: no cap)")
    group.add_argument("--tpm", type=_positive_int, help="tokens per minute (default: no cap)")
    group.add_argument(
        "--cache",
        default=DEFAULT_CACHE_PATH,
        metavar="PATH",
        help=f"cache file (default {DEFAULT_CACHE_PATH})",
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
        help="run journal for resuming (default: the cache file; 'none' to keep no journal)",
    )
    group.add_argument(
        "--max-attempts", type=_positive_int, default=6, help="attempts per call (default 6)"
    )
    group.add_argument(
        "--timeout", type=_positive_float, default=60.0, help="seconds per attempt (default 60)"
    )
    group.add_argument(
        "--deadline",
        type=_positive_float,
        default=300.0,
        help="seconds per judgment, retries included (default 300)",
    )
    group.add_argument("--prices", metavar="FILE", help="a price table overriding the packaged one")
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
    if args.cache_mode != "off":
        cache = Cache(Path(args.cache), mode=args.cache_mode)
    journal_path = getattr(args, "journal", None)
    journal: Journal | None = None
    if journal_path != "none":
        journal = Journal(Path(journal_path or args.cache))
    try:
        prices = load_prices(getattr(args, "prices", None))
    except ConfigError:
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
    )
