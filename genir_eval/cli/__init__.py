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
from typing import NoReturn

from genir_eval import __version__
from genir_eval.errors import EXIT_CODES, GenirError

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
    "label": "label a run's items in a browser; the labels become gold for run and meta",
    "serve": "the labelling server of `label` (same options)",
}


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first argument that is not an option."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as every other error of genir-eval is
    (``--rpm inf``, an unknown option, a missing argument): the flag, what was expected and
    where the options are listed, exit code 2; the usage is for ``--help``. Subcommand
    parsers are of this class too (argparse makes them of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("genir-eval").strip()
        where = f"{command}: " if command else ""
        self.exit(
            2,
            f"genir-eval: error: {where}{one_line(message)} "
            f"(`{self.prog} --help` lists the options)\n",
        )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: every command is listed, only the one ``argv`` names (all of
    them when ``argv`` is ``None``) is imported and given its arguments."""
    parser = _Parser(
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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or one line saying what is wrong
        return exit_.code if isinstance(exit_.code, int) else 2
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
    except OSError as error:
        # a file the commands did not expect to fail (they report the ones they do, with
        # what to do): still one line naming it, a storage fault
        where = f"{error.filename}: " if error.filename else ""
        print(
            f"genir-eval: error: {one_line(where + str(error.strerror or error))}",
            file=sys.stderr,
        )
        return EXIT_CODES["input"]


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def one_line(message: str) -> str:
    """``message`` with line breaks, other control characters and bidirectional controls
    (U+202E would reverse the rest of the line) shown escaped (a value quoted from a log or a
    scenario may hold them): an error is always one line, read as written."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), message)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
