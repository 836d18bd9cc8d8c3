"""The ``genir-eval`` command line.

Each subcommand lives in a module of this package exposing ``add_parser(subparsers)``,
which registers the subcommand and sets ``func(args) -> int`` as its default. Only the
command being run is imported (``--help`` and ``--version`` import none): a command pays for
what it uses, so ``genir-eval parse`` does not load the judges, the engine or the plots.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence

from genir_eval import __version__
from genir_eval.errors import GenirError

__all__ = ["main", "COMMANDS"]

# Module names under genir_eval.cli and their one-line help, in the order `--help` lists them.
COMMANDS: dict[str, str] = {
    "parse": "read sessions (URGE CSV, JSONL or Markdown) and write canonical JSONL",
    "correlate": "correlate usefulness measures with user satisfaction (URGE's table)",
    "cache": "inspect the LLM response cache",
    "run": "run a scenario: judge the sessions, score them, write the run directory",
    "compare": "compare two runs over the same sessions; exit 1 on a regression",
    "arena": "rank systems by judging their answers in pairs (Bradley-Terry, style control)",
    "meta": "meta-evaluate a judge against gold labels",
    "judges": "list every judge with its kind, options and their defaults",
    "measures": "list every measure with its parameters, range and direction",
}


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first argument that is not an option."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: every command is listed, only the one ``argv`` names (all of
    them when ``argv`` is ``None``) is imported and given its arguments."""
    parser = argparse.ArgumentParser(
        prog="genir-eval",
        description="Evaluate generative search sessions: logs in, judged scores out.",
    )
    parser.add_argument("--version", action="version", version=f"genir-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    chosen = _command_in(argv) if argv is not None else None
    for name, summary in COMMANDS.items():
        if argv is None or name == chosen:
            importlib.import_module(f"genir_eval.cli.{name}").add_parser(sub)
        else:
            sub.add_parser(name, help=summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GenirError as error:
        print(f"genir-eval: error: {one_line(str(error))}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("genir-eval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def one_line(message: str) -> str:
    """``message`` with line breaks and other control characters shown escaped (a value
    quoted from a log or a scenario may hold them): an error is always one line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), message)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
