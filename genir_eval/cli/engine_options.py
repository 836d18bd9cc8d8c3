"""The engine's command-line options, generated from its one declaration
(:class:`genir_eval.llm.config.EngineConfig`), for every command that judges.

Every flag is left unset (``None``) unless given, so a command can tell what the user asked
for from what it defaults to: ``run`` overrides only the scenario settings that were given
(:func:`engine_overrides`), the other commands fill the rest with the declared defaults
(:func:`config_from_args`). Help texts, choices, bounds and defaults come from the
declaration.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from genir_eval.llm.build import build_engine
from genir_eval.llm.config import DEFAULT_CACHE_PATH, EngineConfig, engine_fields, setting_value
from genir_eval.llm.engine import Engine
from genir_eval.llm.providers.factory import PROVIDER_NAMES, resolve_provider
from genir_eval.settings import check_base_url, setting_type

__all__ = [
    "add_engine_arguments",
    "engine_overrides",
    "config_from_args",
    "engine_from_args",
]


def _url(text: str) -> str:
    try:
        return check_base_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _help(f: dataclasses.Field[Any]) -> str:
    text = str(f.metadata["help"])
    if "default" in text or f.default is None or f.metadata["kind"] == "switch":
        return text
    default = f.default if not isinstance(f.default, float) else f"{f.default:g}"
    return f"{text} (default {default})"


def add_engine_arguments(parser: argparse.ArgumentParser, command: str = "all") -> None:
    """The provider options and every engine setting ``command`` takes (``run``: all of
    them, the executor's included), each unset unless given."""
    group = parser.add_argument_group("LLM engine")
    group.add_argument(
        "--provider",
        choices=PROVIDER_NAMES,
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
    for f in engine_fields(command):
        kind = f.metadata["kind"]
        options: dict[str, Any] = {"help": _help(f), "default": None}
        if "metavar" in f.metadata:
            options["metavar"] = f.metadata["metavar"]
        if kind == "setting":
            options["type"] = setting_type(f.name)
        elif kind == "choice":
            options["choices"] = f.metadata["choices"]
        elif kind == "switch":
            options["action"] = argparse.BooleanOptionalAction
        group.add_argument(_flag(f.name), **options)
    group.add_argument("--quiet", action="store_true", help="no progress bar, notice or summary")


def engine_overrides(args: argparse.Namespace, command: str = "run") -> dict[str, Any]:
    """The engine settings given on the command line, as configuration values."""
    return {
        f.name: setting_value(f.name, getattr(args, f.name))
        for f in engine_fields(command)
        if getattr(args, f.name, None) is not None
    }


def config_from_args(args: argparse.Namespace, command: str = "all") -> EngineConfig:
    """The declared defaults with the given flags applied; the cache's default place is
    :data:`DEFAULT_CACHE_PATH` in the working directory."""
    values = {"cache": Path(DEFAULT_CACHE_PATH), **engine_overrides(args, command)}
    return EngineConfig(**values)


@contextlib.asynccontextmanager
async def engine_from_args(args: argparse.Namespace) -> AsyncIterator[Engine]:
    """An open :class:`Engine` from the options of :func:`add_engine_arguments`:
    ``async with engine_from_args(args) as engine:`` (prints the provider notice on entry, a
    progress line while judging and the summary on exit unless ``--quiet``). Without
    ``--journal`` the journal is the cache file."""
    from genir_eval.runner.progress import Progress  # the drawing: not for `--help`

    display = Progress(quiet=args.quiet)
    async with _engine(args, display) as engine:
        try:
            yield engine
        finally:
            display.close()  # before the engine's summary line


def _engine(args: argparse.Namespace, display: Any) -> Engine:
    resolved, notice = resolve_provider(args.provider or "auto", base_url=args.base_url)
    return build_engine(
        config_from_args(args),
        resolved,
        model=args.model,
        base_url=args.base_url,
        progress=display,
        quiet=args.quiet,
        summary_stream=sys.stderr,
        notice=notice,
    )
