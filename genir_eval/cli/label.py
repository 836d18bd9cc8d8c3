"""``genir-eval label RUN_DIR``: the labelling page and API over a finished run;
``genir-eval label export RUN_DIR --out DIR`` writes the labels in genir-eval's gold formats;
``genir-eval label agreement RUN_DIR`` prints the judges' agreement with the people."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from genir_eval import figures as display
from genir_eval.cli.commands import COMMANDS
from genir_eval.errors import ConfigError, InputError
from genir_eval.settings import setting_type

__all__ = ["add_parser", "add_server_arguments", "run", "serve"]

TOKEN_VARIABLE = "GENIR_EVAL_LABEL_TOKEN"


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: 127.0.0.1; any other needs a token)",
    )
    parser.add_argument(
        "--port",
        type=setting_type("port"),
        default=8765,
        help="port (default: 8765; 0: any free port)",
    )
    parser.add_argument(
        "--token",
        default=None,
        help=f"a secret every request must carry (required to bind beyond the loopback); "
        f"prefer ${TOKEN_VARIABLE}: a --token given here is readable by every local user in "
        "the process list (ps)",
    )
    parser.add_argument(
        "--store",
        metavar="FILE",
        default=None,
        help="the label store (default: RUN_DIR/labels.sqlite)",
    )
    parser.add_argument(
        "--per-item",
        type=setting_type("per_item"),
        default=1,
        metavar="K",
        help="people who label each item (default: 1)",
    )
    parser.add_argument(
        "--width",
        type=setting_type("width"),
        default=0.2,
        metavar="SHARE",
        help="target width of the 95%% PPI interval, as a share of the scale: sets the "
        "calibration sample's size (default: 0.2)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a scenario POST /api/judge may name, repeatable (default: the run's own)",
    )


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "label",
        help=COMMANDS["label"],
        description=(
            "`label RUN_DIR`: serve the labelling page and its JSON API over a finished run "
            "(the judges' least certain items first, stratified over their labels, as many as "
            "a prediction-powered mean needs); the labels go to RUN_DIR/labels.sqlite, and "
            "`run --labels` / `meta --labels` read them as gold. `label export RUN_DIR --out "
            "DIR`: the sessions with the people's gold (canonical JSONL) and every label. "
            "`label agreement RUN_DIR`: judges against people, people against each other, PPI "
            "means."
        ),
    )
    parser.add_argument(
        "words",
        nargs="+",
        metavar="[export|agreement] RUN_DIR",
        help="a finished run folder (`genir-eval run` wrote it), after `export` or `agreement`",
    )
    parser.add_argument(
        "--out", metavar="DIR", default=None, help="export: the folder to write (required there)"
    )
    parser.add_argument(
        "--json", action="store_true", help="agreement: print one JSON object (default: text)"
    )
    add_server_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    words = list(args.words)
    if len(words) == 1:
        return serve(args, words[0])
    if len(words) == 2 and words[0] == "export":
        return _export(args, words[1])
    if len(words) == 2 and words[0] == "agreement":
        return _agreement(args, words[1])
    raise ConfigError(
        f"label: expected RUN_DIR, `export RUN_DIR` or `agreement RUN_DIR`, got {' '.join(words)!r}"
    )


def _workspace(args: argparse.Namespace, run_dir: str) -> Any:
    from genir_eval.runner.label.queue import open_workspace

    return open_workspace(run_dir, store=args.store, per_item=args.per_item, width_share=args.width)


def _scenarios(args: argparse.Namespace, space: Any) -> dict[str, Path]:
    from genir_eval.rundir import load_run

    found: dict[str, Path] = {}
    for text in args.scenario:
        name, sep, path = text.partition("=")
        if not sep or not name or not Path(path).is_file():
            raise ConfigError(f"--scenario: expected NAME=FILE of a scenario file, got {text!r}")
        found[name] = Path(path)
    if not found and (space.run_dir / "run.json").is_file():  # a run folder, not an arena
        scenario = load_run(space.run_dir).info.get("scenario") or {}
        path = scenario.get("path")
        if path and Path(path).is_file():
            found[str(scenario.get("name") or Path(path).stem)] = Path(path)
    return found


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(args: argparse.Namespace, run_dir: str) -> int:
    """Start the server and serve until interrupted."""
    import uvicorn

    from genir_eval.runner.label.app import make_app
    from genir_eval.runner.label.guard import machine_names

    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if token is not None:
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(
                f"--token (or ${TOKEN_VARIABLE}): not valid UTF-8 text; a token is compared as "
                "the bytes of its UTF-8"
            ) from None
    if args.token:
        print(
            f"genir-eval: warning: --token on the command line is readable by every local user "
            f"in the process list (ps); set ${TOKEN_VARIABLE} instead",
            file=sys.stderr,
            flush=True,
        )
    if not _loopback(args.host) and token is None:
        raise ConfigError(
            f"--host {args.host}: binding beyond the loopback needs a token (--token or "
            f"${TOKEN_VARIABLE}), so that only your team can label"
        )
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port: 0-65535, got {args.port}")
    space = _workspace(args, run_dir)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as error:
        sock.close()
        raise ConfigError(
            f"--port {args.port}: cannot listen on {args.host} ({error.strerror})"
        ) from None
    port = sock.getsockname()[1]
    hosts = machine_names(args.host)
    app = make_app(space, hosts=hosts, token=token, scenarios=_scenarios(args, space))
    shown = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    print(
        f"genir-eval: labelling {display.shown(space.title)} at http://{shown}:{port}/ "
        f"(labels in {display.shown(str(space.store.path))}; Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _export(args: argparse.Namespace, run_dir: str) -> int:
    from genir_eval.ingest.preferences import write_preferences
    from genir_eval.paths import claim_folder, output_file
    from genir_eval.rundir import load_run
    from genir_eval.runner.label.gold import PeopleGold, write_gold_sessions
    from genir_eval.runner.label.items import run_sessions
    from genir_eval.runner.label.pairs import is_arena, preference_rows
    from genir_eval.runner.label.queue import store_owner
    from genir_eval.runner.label.store import STORE_FILE, LabelStore

    if not args.out:
        raise ConfigError("label export: --out DIR is required")
    folder = Path(run_dir)
    arena = is_arena(folder)
    run = None if arena else load_run(run_dir)
    directory = folder if run is None else run.directory
    store_path = Path(args.store) if args.store else directory / STORE_FILE
    if not store_path.is_file():
        raise InputError(
            f"{store_path}: no label store here (`genir-eval label {run_dir}` makes one)"
        )
    store = LabelStore(store_path, readonly=True, owner=store_owner(directory))
    events = store.events(live=False)  # every row checked before anything is written
    gold = PeopleGold(store)
    out = Path(args.out)
    claim_folder(out, "label export", signature=EXPORTED, option="--out")
    if run is not None:
        sessions = run_sessions(run)
        with output_file(out / "sessions-gold.jsonl", "--out", binary=True) as stream:
            carrying = write_gold_sessions(sessions.values(), gold, stream)
        print(
            f"{out / 'sessions-gold.jsonl'}: {len(sessions)} sessions, {carrying} with "
            f"people's gold ({len(gold) - len(gold.pairs)} labelled items)"
        )
    if gold.pairs:
        with output_file(out / "preferences.jsonl", "--out", binary=True) as stream:
            written = write_preferences(preference_rows(gold.pairs), stream)
        print(f"{out / 'preferences.jsonl'}: {written} preferences (arena --gold reads it)")
    with output_file(out / "labels.jsonl", "--out") as stream:
        for event in events:
            row = {"version": 1, **event.__dict__}
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{out / 'labels.jsonl'}: {len(events)} actions (labels, skips, the undone ones marked)")
    return 0


#: The file only ``label export`` writes, which makes an unmarked folder its own.
EXPORTED = ("labels.jsonl",)


def _agreement(args: argparse.Namespace, run_dir: str) -> int:
    from genir_eval.runner.label.agreement_text import agreement_lines

    space = _workspace(args, run_dir)
    figures = space.agreement()
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=1))
    else:
        sys.stdout.write("".join(line + "\n" for line in agreement_lines(figures)))
    return 0
