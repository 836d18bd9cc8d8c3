"""Does an ensemble of link judges beat its best member on sessions it was not fitted on?

Reads ``bench/bench_judges.py --json`` files (one or more, e.g. an LLM judge's run and the
offline twins' run over the same sessions), takes each link judge's expected label where it
gave one and its label otherwise, and fits a ridge regression of the experts' labels on
them on half of the sessions and scores the other half, many times (:mod:`genir_eval.meta.ensemble`). Prints the ensemble's
held-out Spearman, pairwise AUC and MAE beside each member's on the same links.

    python bench/bench_judges.py --provider offline --judges link_usefulness.dna \\
        link_usefulness.true --json /tmp/offline.json
    python bench/bench_ensemble.py /tmp/offline.json /tmp/llm.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from genir_eval.meta.ensemble import cross_validated_ensemble


def members(paths: Sequence[str], use: str) -> tuple[dict[str, list[Any]], list[int], list[str]]:
    found: dict[str, list[Any]] = {}
    gold: list[int] | None = None
    groups: list[str] | None = None
    for path in paths:
        for row in json.loads(Path(path).read_text("utf-8")):
            pairs = row.get("pairs")
            if not pairs:
                continue
            if gold is None:
                gold, groups = pairs["gold"], pairs["groups"]
            elif pairs["gold"] != gold or pairs["groups"] != groups:
                raise SystemExit(f"{path}: {row['judge']} was run on other links than the first")
            values = pairs["pred"]
            if use == "expected" and any(e is not None for e in pairs["expected"]):
                values = [
                    e if e is not None else p
                    for e, p in zip(pairs["expected"], values, strict=False)
                ]
            source = Path(path).stem
            found[f"{row['judge']} ({source})"] = values
    if gold is None or groups is None:
        raise SystemExit("no link judge with per-link labels in these files")
    return found, gold, groups


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="bench_judges.py --json files")
    parser.add_argument("--alpha", type=float, default=1.0, help="ridge penalty")
    parser.add_argument("--splits", type=int, default=200, help="random halvings of the sessions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--use",
        choices=("expected", "label"),
        default="expected",
        help="each judge's expected label where given (default) or its argmax label",
    )
    args = parser.parse_args(argv)
    found, gold, groups = members(args.files, args.use)
    out = cross_validated_ensemble(
        found, gold, groups, alpha=args.alpha, splits=args.splits, seed=args.seed
    )
    print(
        f"{out['n_links']} links of {out['n_sessions']} sessions "
        f"({out['n_left_out']} left out: a member has no label); {out['validation']}; "
        "mean figures on the held-out halves"
    )
    for name, figures in [*out["single"].items(), ("ensemble", out["ensemble"])]:
        spearman, auc = figures["spearman"], figures["auc"]
        print(
            f"  {name:<45} spearman {'-' if spearman is None else f'{spearman:.3f}'}"
            f"  auc {'-' if auc is None else f'{auc:.3f}'}  mae {figures['mae']:.3f}"
        )
    verdict = "beats" if out["helps"] else "does not beat"
    print(
        f"the ensemble {verdict} its best member ({out['best_member']}) on held-out sessions "
        f"(better in {out['wins']:.0%} of the halvings)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
