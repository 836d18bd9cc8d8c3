"""The ``genir-eval`` command line.

Each subcommand lives in a module of this package exposing ``add_parser(subparsers)``,
which registers the subcommand and sets ``func(args) -> int`` as its default. Only the
command being run is imported (``--help`` and ``--version`` import none): a command pays for
what it uses, so ``genir-eval parse`` does not load the judges, the engine or the plots.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from genir_eval.cli.commands import COMMANDS
from genir_eval.errors import EXIT_CODES, GenirError
from genir_eval.figures import shown, terminal_safe
from genir_eval.records import PACKAGE_VERSION

__all__ = ["main", "COMMANDS"]


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
    parser.add_argument("--version", action="version", version=f"genir-eval {PACKAGE_VERSION}")
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
    with _guarded_streams(), _terminated_as_exit():
        return _main(argv)


def _main(argv: list[str]) -> int:
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
    except OSError as error:
        # a file the commands did not expect to fail (they report the ones they do, with
        # what to do): still one line naming it, a storage fault
        where = f"{error.filename}: " if error.filename else ""
        print(
            f"genir-eval: error: {one_line(where + str(error.strerror or error))}",
            file=sys.stderr,
        )
        return EXIT_CODES["input"]
    except Exception as error:  # noqa: BLE001 (every unexpected error: never a decision code)
        return internal_error(args.command, error)


def internal_error(command: str, error: BaseException) -> int:
    """An error genir-eval did not expect (a bug, not the input's fault): one line naming the
    command and the error, and exit code 5, which no decision uses: a crash must never read
    as a regression (1), a pass (0) or too few to decide (4)."""
    print(
        f"genir-eval: internal error in {command}: {type(error).__name__}: "
        f"{one_line(str(error))} (a bug of genir-eval, not of the input: exit "
        f"{EXIT_CODES['internal']}; please report it with the command)",
        file=sys.stderr,
    )
    return EXIT_CODES["internal"]


class _GuardedStream:
    """``sys.stdout`` or ``sys.stderr`` while a command runs: text is written with its
    control characters escaped (:func:`genir_eval.figures.terminal_safe`: a system name or a
    log's text holding an escape sequence reaches the reader as ``\\u001b``, whether the
    stream is a terminal or a pipe to one, a CI log, ``less -R``; :meth:`write_control` is
    the progress line's own way to redraw itself), and a reader that went away (``genir-eval compare ... |
    head``) ends the output, not the command: the rest is dropped, so the command still exits
    with its verdict (a regression 1) instead of a ``BrokenPipeError``."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._tty = _isatty(stream)
        self.broken = False

    def write(self, text: str) -> int:
        self._write(terminal_safe(text))
        return len(text)

    def write_control(self, text: str) -> int:
        """Write ``text`` as is: the progress line's carriage return and erase sequence."""
        self._write(text)
        return len(text)

    def _write(self, text: str) -> None:
        if self.broken:
            return
        try:
            self._stream.write(text)
        except BrokenPipeError:
            self._close()

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._close()

    def _close(self) -> None:
        """The reader is gone: what is buffered and what follows goes to ``os.devnull`` (so
        that Python's own flush at exit does not fail either)."""
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass  # not a file descriptor (a test's capture): nothing buffered to lose

    def isatty(self) -> bool:
        return self._tty

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


@contextlib.contextmanager
def _guarded_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`_GuardedStream` for the command's time,
    flushed (a closed pipe tolerated) before they are given back."""
    saved = sys.stdout, sys.stderr
    # a stream Python found closed at start (`>&-`) is None, which print() skips: kept so
    guarded = [None if stream is None else _GuardedStream(stream) for stream in saved]
    sys.stdout, sys.stderr = guarded  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in guarded:
            if stream is not None:
                stream.flush()
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """A ``SIGTERM`` (a CI job cancelled, ``kill``) unwinds the command as an interruption
    does, so every temporary file and store it made is removed on the way out (exit code
    143); without it Python ends at once and leaves them. Only from the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except (ValueError, OSError):  # not allowed here (an embedding interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def one_line(message: str) -> str:
    """``message`` with line breaks, other control characters and bidirectional controls
    (U+202E would reverse the rest of the line) shown escaped (a value quoted from a log or a
    scenario may hold them): an error is always one line, read as written."""
    return shown(message)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
