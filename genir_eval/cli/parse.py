"""``genir-eval parse``: read logs in any supported format, write canonical JSONL.

Sessions are written as they are read, so memory stays flat however long the file is. The
output appears under its name only when the whole input was read: it is written to a
temporary file beside it and moved into place at the end, so a failed parse leaves no
half-written file behind (and an existing one untouched).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from genir_eval.cli.commands import COMMANDS
from genir_eval.figures import counted as counted_noun

__all__ = ["add_parser", "run"]

# genir_eval.ingest.FORMATS, without importing it, and CrowdRAG's folder (a converter)
_FORMATS = (
    "urge",
    "jsonl",
    "markdown",
    "otlp",
    "openinference",
    "langfuse",
    "langsmith",
    "crowdrag",
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "parse",
        help=COMMANDS["parse"],
        description=(
            "Read search sessions and write them as canonical JSONL, one session a line. "
            "The input format is taken from the file (.csv URGE, .jsonl, .md Markdown; trace "
            "files and folders by their first object: OTLP JSON or protobuf, Langfuse and "
            "LangSmith exports, the reason printed) unless --format says otherwise. --format crowdrag reads a CrowdRAG folder "
            "(responses, sources and ratings) and writes a folder: one JSONL file per system, "
            "answers.jsonl (every answer a session) and preferences.jsonl (people's gold)."
        ),
    )
    parser.add_argument(
        "input", metavar="INPUT", help="file of sessions to read (a folder of trace files)"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="SESSIONS.jsonl",
        help="JSONL file to write (required; a folder for --format crowdrag)",
    )
    parser.add_argument(
        "--format",
        choices=_FORMATS,
        default=None,
        help="input format (default: from the file name)",
    )
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out invalid sessions (each is listed on stderr) instead of stopping",
    )
    parser.add_argument(
        "--sources",
        metavar="FILE",
        default=None,
        help="JSONL or CSV file of source texts keyed by url (url, text), attached to the links "
        "(default: none, the texts in the log)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from genir_eval.errors import InputError
    from genir_eval.ingest import iter_sessions, write_jsonl
    from genir_eval.paths import check_output_path, output_file

    if args.format == "crowdrag":
        return _convert_crowdrag(args)
    if args.format is None:
        from genir_eval.ingest.loader import detect_format_reason

        if Path(args.input).exists():
            fmt, reason = detect_format_reason(args.input)
            if fmt in ("otlp", "openinference", "langfuse", "langsmith"):
                # a trace file is told by its content, not its name: say how
                print(f"genir-eval: reading {args.input} as {fmt}: {reason}", file=sys.stderr)
    # what stands at the path is refused before any work; a missing folder is reported
    # after the input, which may be wrong too
    output = check_output_path(args.output, "--output", folder_exists=False)
    stream = iter_sessions(
        args.input, format=args.format, skip_invalid=args.skip_invalid, sources=args.sources
    )
    turns = links = texts = 0

    def counted() -> Any:
        nonlocal turns, links, texts
        for session in stream:
            turns += len(session.turns)
            links += sum(len(t.links) for t in session.turns)
            texts += sum(1 for t in session.turns for lk in t.links if lk.has_text)
            yield session

    from genir_eval.stale import remove_stale_parts

    # a killed parse's temporary output beside this one goes first
    remove_stale_parts(output.parent if str(output.parent) else Path("."), [output.name])
    try:
        with output_file(output, "--output", binary=True) as out:
            count = write_jsonl(counted(), out)
    except OSError as error:
        raise InputError(
            f"cannot write the output: {error.strerror or error}", path=str(output)
        ) from None
    finally:
        stream.close()
    for skipped in stream.skipped:
        print(f"genir-eval: skipped: {skipped}", file=sys.stderr)
    print(
        f"parsed {counted_noun(count, 'session')}, {counted_noun(turns, 'turn')}, {counted_noun(links, 'link')}, "
        f"{len(stream.skipped)} skipped -> {args.output}",
        file=sys.stderr,
    )
    if texts or args.sources:
        print(f"{texts} of {links} links have a source text", file=sys.stderr)
    _print_trace_notes(stream)
    return 0


def _print_trace_notes(stream: Any) -> None:
    """A trace stream's counts: spans read and the traces with each kind of note (each
    session's ``meta.trace_notes`` has their lines)."""
    notes = getattr(stream, "notes", None)
    if notes is None:
        return
    print(f"{counted_noun(stream.spans, 'span')} read", file=sys.stderr)
    for kind, count in sorted(notes.items(), key=lambda item: -item[1]):
        print(f"genir-eval: note ({count}x): {kind}", file=sys.stderr)
    if notes:
        print("(each session's meta.trace_notes says which trace)", file=sys.stderr)


def _convert_crowdrag(args: argparse.Namespace) -> int:
    from genir_eval.errors import InputError
    from genir_eval.ingest.crowdrag import convert_crowdrag

    if args.sources or args.skip_invalid:
        raise InputError(
            "--format crowdrag reads its passages from the folder and stops at a bad row; "
            "--sources and --skip-invalid do not apply"
        )
    summary = convert_crowdrag(args.input, args.output)
    missing = (
        f"; {summary.missing_passages} citations name a passage their topic does not have "
        "(kept, with no source text)"
        if summary.missing_passages
        else ""
    )
    print(
        f"converted {summary.answers} answers of {summary.systems} systems on {summary.topics} "
        f"topics; {summary.rated_pairs} rated pairs -> {summary.preferences} preferences "
        f"({summary.split_dropped} pair-dimensions left out: their two ratings split)"
        f"{missing} -> {args.output}",
        file=sys.stderr,
    )
    return 0
