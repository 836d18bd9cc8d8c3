"""``genir-eval measures [--json]``: every measure a scenario's ``aggregate.measures`` can
name, with its parameters, range and direction, and how score names are formed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "run", "measure_catalog", "NAMING"]

NAMING = (
    "Score names in a run: a measure as written in the scenario (sdcg_urge) is computed from "
    "the first link judge's labels; sdcg_urge@<judge> from another link judge's; "
    "gold:sdcg_urge from the expert link labels in the input (aggregate.gold = true); a "
    "judge's own score is named by the judge (satisfaction.urs); z(a+b) combines two scores "
    "by z-score. Parameters go in the name: sdcg_urge(bq=1.1)."
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "measures",
        help="list every measure with its parameters, range and direction",
        description=(
            "List every measure [aggregate] measures = [...] can name: short and printed name "
            "with default parameters, level (query, session, citation: pooled over a turn's or session's statements, or nugget: a share of a query's nuggets), range, direction and what it "
            "sums or averages. " + NAMING
        ),
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON array instead of text (default: text)"
    )
    parser.set_defaults(func=run)
    return parser


def measure_catalog() -> list[dict[str, Any]]:
    from genir_eval.metrics.citations import CITATION_MEASURES
    from genir_eval.metrics.measures import MEASURES
    from genir_eval.metrics.nuggets import NUGGET_MEASURES

    out = []
    for short, cls in {**MEASURES, **CITATION_MEASURES, **NUGGET_MEASURES}.items():
        measure = cls()
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        out.append(
            {
                "name": short,
                "printed": str(measure),
                "level": cls.LEVEL,
                "parameters": measure.params(),
                "range": cls.RANGE,
                "higher_is_better": cls.HIGHER_IS_BETTER,
                "summary": cls.SUMMARY or doc,
                "formula": doc,
            }
        )
    return out


def run(args: argparse.Namespace) -> int:
    catalog = measure_catalog()
    if args.json:
        json.dump(catalog, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    lines = []
    for m in catalog:
        better = "higher is better" if m["higher_is_better"] else "lower is better"
        lines.append(f"{m['name']}  [{m['level']}]  {m['printed']}")
        lines.append(f"  {m['summary']}")
        lines.append(f"  range {m['range']}; {better}")
        lines.append("")
    lines.append(NAMING)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
