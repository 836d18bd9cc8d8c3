"""The ``genir-eval`` command line.

Each subcommand lives in a module of this package exposing ``add_parser(subparsers)``,
which registers the subcommand and sets ``func(args) -> int`` as its default.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from genir_eval import __version__
from genir_eval.errors import GenirError

__all__ = ["main", "COMMANDS"]

# Module names under genir_eval.cli, in the order `--help` lists them.
COMMANDS: tuple[str, ...] = ("parse", "correlate", "cache", "run", "compare", "meta")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, just that subcommand's (imports it alone)."""
    parser = argparse.ArgumentParser(
        prog="genir-eval",
        description="Evaluate generative search sessions: logs in, judged scores out.",
    )
    parser.add_argument("--version", action="version", version=f"genir-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"genir_eval.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # A command imports only its own module: `genir-eval parse` never loads the judges,
    # the engine or the plotting code. Help without a command lists them all.
    words = list(sys.argv[1:] if argv is None else argv)
    named = next((w for w in words if not w.startswith("-")), None)
    parser = build_parser(named if named in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GenirError as error:
        print(f"genir-eval: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("genir-eval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
