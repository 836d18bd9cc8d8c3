"""``genir-eval judges [NAME] [--json]``: every judge a scenario can name, with its options;
with a name, that judge's card: its kind, what its scores rest on and their scale, what it
asks (its summary and its prompt's file), and its options."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "run", "format_judges"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "judges",
        help="list every judge with its kind, options and their defaults",
        description=(
            "List every judge a scenario ([[judges]] name = ...) or `genir-eval meta --judge` "
            "can name: its kind (what it labels), what it does, and each option with its "
            "default and bound or choices (set them with options = {...} in a scenario, "
            "--option KEY=VALUE in meta)."
        ),
    )
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="one judge's card: its kind, what its scores rest on and their scale, what it "
        "asks and its options (default: every judge)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON array instead of text (default: text)"
    )
    parser.set_defaults(func=run)
    return parser


def _default(value: Any) -> str:
    return "-" if value is None else json.dumps(value)


def _bound(option: Any) -> str:
    if option.choices is not None:
        return " (" + " | ".join(_default(c) for c in option.choices) + ")"
    if option.range is not None:
        low, high = (_default(int(v) if float(v).is_integer() else v) for v in option.range)
        return f" ({low} to {high})"
    return ""


def format_judges(entries: Any) -> str:
    lines = []
    for entry in entries:
        lines.append(f"{entry.name}  [{entry.kind}]")
        if entry.summary:
            lines.append(f"  {entry.summary}")
        width = max((len(o.name) for o in entry.options), default=0)
        for option in entry.options:
            lines.append(
                f"    {option.name.ljust(width)}  default {_default(option.default)}"
                f"{_bound(option)}: {option.help}"
            )
        lines.append("")
    return "\n".join(lines)


def judge_card(entry: Any) -> dict[str, Any]:
    """One judge's card: its catalog entry with what its kind declares (the evidence its
    scores rest on, their scale and meaning) and the prompt it sends."""
    from genir_eval.judges.kinds import judge_kind
    from genir_eval.judges.registry import make_judge
    from genir_eval.records import EVIDENCE_KINDS

    kind = judge_kind(entry.kind)
    evidence = EVIDENCE_KINDS.get(kind.evidence) if kind is not None else None
    scale, meaning = (kind.own_score if kind is not None else None) or ("", "")
    template = getattr(make_judge(entry.name), "template", None)
    return {
        **entry.to_dict(),
        "evidence": evidence.name if evidence is not None else None,
        "evidence_says": evidence.says if evidence is not None else None,
        "scale": scale or None,
        "score": meaning or None,
        "prompt": f"genir_eval/prompts/{template}.{{en,zh}}.txt" if template else None,
    }


def format_card(card: dict[str, Any], entry: Any) -> str:
    lines = [f"{card['name']}  [{card['kind']}]"]
    if card["summary"]:
        lines.append(f"  asks: {card['summary']}")
    if card["evidence"]:
        lines.append(f"  its scores rest on {card['evidence']}: {card['evidence_says']}")
    else:
        lines.append("  its kind declares no evidence its scores rest on")
    if card["scale"] or card["score"]:
        lines.append(f"  its own score: {card['scale'] or 'no fixed scale'}, {card['score']}")
    if card["prompt"]:
        lines.append(f"  prompt: {card['prompt']}")
    lines.append("  options (options = {...} in a scenario, --option KEY=VALUE in meta):")
    lines += [line for line in format_judges([entry]).splitlines()[2:] if line]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from genir_eval.errors import ConfigError, did_you_mean
    from genir_eval.judges.catalog import judge_catalog

    entries = judge_catalog()
    if args.name is not None:
        found = [e for e in entries if e.name == args.name]
        if not found:
            names = [e.name for e in entries]
            raise ConfigError(
                f"no judge named {args.name!r}{did_you_mean(args.name, names)}; "
                "`genir-eval judges` lists them"
            )
        card = judge_card(found[0])
        if args.json:
            json.dump(card, sys.stdout, ensure_ascii=False, indent=2)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(format_card(card, found[0]))
        return 0
    if args.json:
        json.dump([e.to_dict() for e in entries], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_judges(entries))
    return 0
