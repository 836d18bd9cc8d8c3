"""The citation support judge with a real model beside its offline twin, on CrowdRAG citations
of both writers (people and an LLM wrote the answers).

Converts the folder (``genir-eval parse DIR --format crowdrag``), draws ``--answers`` answers
of each writer at random (``random.Random(--seed)`` over the sorted answer ids), and runs the
``citation_support`` judge over every citation of those answers twice: offline (the twin) and
through ``--base-url`` (concurrency 1, a cache so that a stopped run resumes). Prints, per
writer and for both together, how often the model and the twin give the same verdict (full,
partial, none) and the same supported-or-not verdict, each with its Wilson 95% interval,
Cohen's kappa, and each side's verdict counts; a citation either side could not judge is
counted apart, never as a verdict.

    python bench/citation_support_llm.py --base-url http://127.0.0.1:8091/v1 --answers 4 \\
        --cache /tmp/citations-llm.sqlite
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scipy.stats import binomtest

from genir_eval.ingest import load_sessions, write_jsonl
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.meta.stats import cohen_kappa
from genir_eval.runner import parse_scenario, run_scenario
from genir_eval.runner.run import Overrides

ROOT = Path(__file__).resolve().parents[1]
CROWDRAG = ROOT.parent / "shared" / "crowdrag"
VERDICTS = ("full", "partial", "none")


def _writer(session_id: str) -> str:
    """``2024-41576/llm-news`` -> ``llm``."""
    return session_id.split("/", 1)[1].split("-", 1)[0]


def _run(answers: Path, out: Path, engine: dict[str, Any], overrides: Overrides) -> list[dict]:
    scenario = parse_scenario(
        {
            "version": 1,
            "name": "citation-support-sample",
            "input": {"path": str(answers), "format": "jsonl"},
            "engine": {"journal": False, "max_missing": 1.0, **engine},
            "judges": [{"name": "citation_support"}],
            "output": {"dir": str(out), "report": False},
        },
        base_dir=out.parent,
    )
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the run's own lines are not the bench's
    try:
        run_scenario(scenario, out_dir=out, overrides=overrides)
    finally:
        sys.stdout.close()
        sys.stdout = sys.__stdout__
    text = (out / "citations.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _key(row: dict[str, Any]) -> tuple[str, int, int, int]:
    return (row["session_id"], row["turn"], row["statement"], row["link_id"])


def _wilson(hits: int, n: int) -> str:
    if n == 0:
        return "n/a"
    ci = binomtest(hits, n).proportion_ci(method="wilson")
    return f"{hits / n:.3f} [{ci.low:.2f}, {ci.high:.2f}]"


def _line(name: str, pairs: list[tuple[str, str]], missing: Counter[str]) -> str:
    n = len(pairs)
    same = sum(a == b for a, b in pairs)
    binary = sum((a == "none") == (b == "none") for a, b in pairs)
    kappa = cohen_kappa(
        [VERDICTS.index(a) for a, _ in pairs], [VERDICTS.index(b) for _, b in pairs]
    )
    model = Counter(a for a, _ in pairs)
    twin = Counter(b for _, b in pairs)
    counts = lambda c: "/".join(str(c[v]) for v in VERDICTS)  # noqa: E731
    kappa_text = f"{kappa:.3f}" if kappa is not None else "n/a"
    return (
        f"{name}: {n} citations judged by both; same verdict {_wilson(same, n)}; same "
        f"supported-or-not {_wilson(binary, n)}; kappa {kappa_text}; model full/partial/none "
        f"{counts(model)}, twin {counts(twin)}; not judged: model {missing['model']}, "
        f"twin {missing['twin']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(CROWDRAG), help="the CrowdRAG folder")
    parser.add_argument("--base-url", required=True, help="an OpenAI-compatible endpoint")
    parser.add_argument("--model", default="local", help="model name (default local)")
    parser.add_argument("--answers", type=int, default=4, help="answers drawn per writer")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed")
    parser.add_argument("--cache", default="none", help="the model run's cache file")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per request")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "local")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        convert_crowdrag(args.data, work / "converted")
        sessions = load_sessions(work / "converted" / "answers.jsonl").sessions
        by_writer: dict[str, list[Any]] = {}
        for session in sorted(sessions, key=lambda s: s.session_id):
            by_writer.setdefault(_writer(session.session_id), []).append(session)
        draw = random.Random(args.seed)
        chosen = [s for w in sorted(by_writer) for s in draw.sample(by_writer[w], args.answers)]
        write_jsonl(chosen, work / "sample.jsonl")
        twin = _run(work / "sample.jsonl", work / "twin", {}, Overrides(cache="none"))
        started = time.perf_counter()
        model = _run(
            work / "sample.jsonl",
            work / "model",
            {"concurrency": 1, "timeout": args.timeout, "deadline": 7200},
            Overrides(
                provider="openai", base_url=args.base_url, model=args.model, cache=args.cache
            ),
        )
        elapsed = time.perf_counter() - started
    twins = {_key(r): r for r in twin}
    pairs: dict[str, list[tuple[str, str]]] = {}
    missing: dict[str, Counter[str]] = {}
    for row in model:
        writer = _writer(row["session_id"])
        other = twins.get(_key(row))
        gone = missing.setdefault(writer, Counter())
        if row.get("support") not in VERDICTS:
            gone["model"] += 1
        elif other is None or other.get("support") not in VERDICTS:
            gone["twin"] += 1
        else:
            pairs.setdefault(writer, []).append((row["support"], other["support"]))
    print(
        f"judge: citation_support, {args.model} at {args.base_url} against its offline twin; "
        f"sample: {args.answers} answers per writer drawn with random.Random({args.seed}) "
        f"({', '.join(s.session_id for s in chosen)}); model run {elapsed:.0f} s"
    )
    everything = [p for writer in sorted(pairs) for p in pairs[writer]]
    for writer in sorted(pairs):
        print(_line(f"writer {writer}", pairs[writer], missing[writer]))
    print(_line("both writers", everything, sum(missing.values(), Counter())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
