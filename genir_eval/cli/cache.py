"""``genir-eval cache``: look inside the response cache.

``cache stats`` prints rows, size, rows and tokens by provider/model/task and the cache hits
and misses of each recorded run; ``cache show KEY`` prints one entry with the inputs its key
was computed from, so a hit or a miss can be explained.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.errors import InputError
from genir_eval.figures import shown
from genir_eval.llm.config import DEFAULT_CACHE_PATH
from genir_eval.llm.store.cache import Cache
from genir_eval.paths import why_missing

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("cache", help=COMMANDS["cache"])
    actions = parser.add_subparsers(
        dest="cache_command", metavar="ACTION", help="stats or show (required)"
    )
    actions.required = True
    stats = actions.add_parser("stats", help="rows, size, hits and misses per run")
    stats.add_argument(
        "--cache",
        default=DEFAULT_CACHE_PATH,
        metavar="PATH",
        help=f"cache file (default {DEFAULT_CACHE_PATH})",
    )
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=_stats)
    show = actions.add_parser("show", help="one entry and the inputs of its key")
    show.add_argument("key", help="the key, or an unambiguous prefix (>= 6 characters)")
    show.add_argument(
        "--cache",
        default=DEFAULT_CACHE_PATH,
        metavar="PATH",
        help=f"cache file (default {DEFAULT_CACHE_PATH})",
    )
    show.set_defaults(func=_show)


def _open(path: str) -> Cache:
    if not Path(path).exists():
        raise InputError(why_missing(path, "cache file"), path=path)
    return Cache(path)


def _stats(args: argparse.Namespace) -> int:
    with _open(args.cache) as cache:
        data = cache.stats()
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        print()
        return 0
    print(
        f"cache {shown(str(data['path']))}: {data['rows']} rows, {data['size_bytes'] / 1e6:.2f} MB"
    )
    if data["by_model_task"]:
        print("rows by provider / model / task:")
        for row in data["by_model_task"]:
            print(
                f"  {shown(row['provider'])} / {shown(row['model'])} / {shown(row['task'])}: "
                f"{row['rows']} rows, "
                f"tokens in {row['input_tokens']} out {row['output_tokens']}"
            )
    if data["runs"]:
        print("runs:")
        for run in data["runs"]:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run["started"]))
            print(
                f"  {when} {shown(run['run_id'][:8])} {shown(run['provider'])}/"
                f"{shown(run['model'])} ({shown(run['mode'])}): "
                f"hits {run.get('hits', 0)}, misses {run.get('misses', 0)}, calls {run.get('calls', 0)}"
            )
            for task, counts in sorted(run.get("by_task", {}).items()):
                print(
                    f"    {shown(task)}: hits {counts.get('hits', 0)}, misses {counts.get('misses', 0)}"
                )
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        with _open(args.cache) as cache:
            entry = cache.entry(args.key)
    except ValueError as error:
        raise InputError(str(error), path=args.cache) from error
    if entry is None:
        raise InputError(f"no single entry with key {args.key!r}", path=args.cache)
    completion = entry.completion
    out = {
        "key": entry.key,
        "provider": entry.provider,
        "model": entry.model,
        "task": entry.task,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(entry.created)),
        "key_inputs": entry.inputs,
        "reply": {
            "text": completion.text,
            "input_tokens": completion.usage.input_tokens,
            "output_tokens": completion.usage.output_tokens,
            "latency_s": completion.latency_s,
            "model": completion.model,
            "finish_reason": completion.finish_reason,
            "logprobs": None
            if completion.logprobs is None
            else [[t.token, t.logprob, [list(a) for a in t.top]] for t in completion.logprobs],
        },
    }
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0
