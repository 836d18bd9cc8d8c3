"""``genir-eval view RUN_DIR [RUN_DIR_B ...]``: the viewer and the labelling page on one
server; ``view RUN_DIR --bundle DIR`` writes a static copy of a view instead."""

from __future__ import annotations

import argparse
import gc
import os
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from genir_eval.cli.commands import COMMANDS
from genir_eval.cli.label import TOKEN_VARIABLE, _loopback, add_server_arguments
from genir_eval.errors import ConfigError
from genir_eval.settings import setting_type

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "view",
        help=COMMANDS["view"],
        description=(
            "Serve a browser view of one run or more (`genir-eval run` wrote them): the "
            "session table with filters (score ranges, judge, task type, failed or missing "
            "judgments, judge-vs-people disagreement, text), sort by any column, each "
            "session's turns and judgments; with two runs or more, the sessions they share, "
            "aligned, the most changed first. The labelling page is served under /label/. "
            "`--bundle DIR` writes the view as static files instead (open DIR/index.html)."
        ),
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="finished run folders")
    parser.add_argument(
        "--bundle",
        metavar="DIR",
        default=None,
        help="write a static copy of the view to DIR (a new or empty folder, or an earlier "
        "bundle's) and exit (default: serve the view)",
    )
    parser.add_argument(
        "--view",
        metavar="QUERY",
        default="",
        help="the view to bundle: the query string (or whole URL) of a viewer page, e.g. "
        "'dis=disagree:users:sdcg_urge&dis_min=0.5' (default: every session)",
    )
    parser.add_argument(
        "--bundle-limit",
        type=setting_type("bundle_limit"),
        default=500,
        metavar="N",
        help="at most N sessions in the copy, the view's first (default: 500)",
    )
    add_server_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from genir_eval.runner.web.index import open_index

    if args.view and args.bundle is None:
        raise ConfigError(
            "--view: the view to copy with --bundle DIR (a server takes the view from its URL)"
        )
    runs = [open_index(path) for path in args.run_dirs]
    # what the index holds lives as long as the server: out of the collector's sight, a
    # full collection no longer walks it in the middle of a request
    gc.collect()
    gc.freeze()
    if args.bundle is not None:
        return _bundle(args, runs)
    return _serve(args, runs)


def _bundle(args: argparse.Namespace, runs: list[Any]) -> int:
    from genir_eval.runner.web.bundle import write_bundle
    from genir_eval.runner.web.query import QueryError, parse_query

    text = args.view
    if "://" in text or text.startswith("/"):
        text = urlsplit(text).query
    try:
        query = parse_query(parse_qs(text.lstrip("?"), keep_blank_values=True), runs[0])
    except QueryError as error:
        raise ConfigError(f"--view: {error}") from None
    folder, written, total = write_bundle(runs, query, args.bundle, limit=args.bundle_limit)
    print(f"{folder / 'index.html'}: {written} of the view's {total} sessions")
    return 0


def _serve(args: argparse.Namespace, runs: list[Any]) -> int:
    import uvicorn

    from genir_eval.runner.label.guard import machine_names
    from genir_eval.runner.web.app import LabelOptions, make_viewer_app

    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if token is not None:
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(
                f"--token (or ${TOKEN_VARIABLE}): not valid UTF-8 text; a token is compared as "
                "the bytes of its UTF-8"
            ) from None
    if not _loopback(args.host) and token is None:
        raise ConfigError(
            f"--host {args.host}: binding beyond the loopback needs a token (--token or "
            f"${TOKEN_VARIABLE}), so that only your team sees the runs"
        )
    scenarios = {}
    for text in args.scenario:
        name, sep, path = text.partition("=")
        if not sep or not name or not Path(path).is_file():
            raise ConfigError(f"--scenario: expected NAME=FILE of a scenario file, got {text!r}")
        scenarios[name] = Path(path)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # a page is written as headers then body: without this the second waits for the client's
    # delayed acknowledgement (40 ms on Linux), whatever the page costs to make
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as error:
        sock.close()
        raise ConfigError(
            f"--port {args.port}: cannot listen on {args.host} ({error.strerror})"
        ) from None
    port = sock.getsockname()[1]
    label = LabelOptions(args.store, args.per_item, args.width, scenarios)
    # the names `genir-eval label` accepts: this machine's names and addresses, never a name
    # that only resolves here
    app = make_viewer_app(runs, hosts=machine_names(args.host), token=token, label=label)
    shown = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    names = ", ".join(r.title for r in runs)
    print(
        f"genir-eval: viewing {names} at http://{shown}:{port}/ "
        f"({sum(len(r) for r in runs)} sessions; labelling at /label/; Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0
