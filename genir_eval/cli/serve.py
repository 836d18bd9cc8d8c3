"""``genir-eval serve RUN_DIR``: the labelling server of ``genir-eval label`` under its
other name."""

from __future__ import annotations

import argparse
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.cli.label import add_server_arguments, serve

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"],
        description="The same server as `genir-eval label RUN_DIR`.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a finished run folder")
    add_server_arguments(parser)
    parser.set_defaults(func=lambda args: serve(args, args.run_dir))
    return parser
