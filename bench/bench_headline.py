"""Which score should a run lead with? Each candidate's evidence of tracking people.

Runs the offline twins of the default judges (``citation_support``, ``link_usefulness.dna``,
``satisfaction.geval``, ``satisfaction.urs``, ``satisfaction.gah``) with the measures
``sdcg_urge``, ``citation_precision``, ``citation_recall``, ``unsupported_claims`` and a few
z-score combinations (the mission's aggregation: the mean of two scores' z-scores) over

- the CrowdRAG-25 development topics (``../shared/crowdrag``, one session per answer): the
  share of people's decided ``quality_overall`` pairs each score ranks the same way (95%
  bootstrap interval over topics, score ties apart);
- the URGE sample (``../shared/urge``, 12 sessions): each score's Spearman correlation with
  the users' own session satisfaction (and query satisfaction at the turn level), with its
  95% bootstrap interval;

and prints one table. With ``--write`` it stores the figures of the judges' session scores
in ``genir_eval/data/headline_evidence.json`` with this command, the date and the versions:
the data the headline rule and the report card read (``genir_eval/meta/headline.py``).
Figures measured with a real model are kept as they are (they come from other commands).

    python bench/bench_headline.py                 # print the table
    python bench/bench_headline.py --write         # and store the offline figures
    genir-eval meta ../shared/urge/urge_sample_dev.csv --judge satisfaction.geval --json \
        --provider openai --base-url http://127.0.0.1:8091/v1 --model local ... > geval.json
    python bench/bench_headline.py --from-meta geval.json --judged-by "openai/local (...)" \
        --command "genir-eval meta ..."               # store a real model's figures
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from genir_eval.ingest import read_preferences
from genir_eval.ingest.crowdrag import convert_crowdrag
from genir_eval.judges.offline.semantic import evidence_name
from genir_eval.meta.headline import EVIDENCE_PATH
from genir_eval.meta.preferences import lower_is_better, pair_agreement
from genir_eval.runner import parse_scenario, run_scenario

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
JUDGES = (
    "citation_support",
    "link_usefulness.dna",
    "satisfaction.geval",
    "satisfaction.urs",
    "satisfaction.gah",
)
MEASURES = ("sdcg_urge", "citation_precision", "citation_recall", "unsupported_claims")
COMBINE = (
    ("satisfaction.geval", "sdcg_urge"),
    ("satisfaction.geval", "citation_precision"),
    ("satisfaction.geval", "satisfaction.urs"),
    ("satisfaction.geval", "satisfaction.gah"),
)
COMMAND = "python bench/bench_headline.py --write"


def _scenario(path: Path, fmt: str, out: Path, preferences: Path | None, urge: bool) -> Any:
    judges = [
        {"name": name}
        for name in JUDGES
        # the URGE sample has no source texts: the citation judge would find nothing
        if not (urge and name == "citation_support")
    ]
    measures = [m for m in MEASURES if not (urge and m != "sdcg_urge")]
    document: dict[str, Any] = {
        "version": 1,
        "name": "bench-headline",
        "input": {"path": str(path), "format": fmt},
        "engine": {"concurrency": 8, "cache_mode": "off", "journal": False},
        "judges": judges,
        "aggregate": {
            "measures": measures,
            "combine": [
                {"name": f"z({a}+{b})", "scores": [a, b]}
                for a, b in COMBINE
                if b in measures or b in JUDGES
            ],
        },
        "meta": {"enabled": True, "n_boot": 1000, "seed": 0},
        "output": {"dir": str(out), "report": False},
    }
    if preferences is not None:
        document["input"]["preferences"] = str(preferences)
    if urge:
        document["aggregate"]["gold"] = True
    return parse_scenario(document, base_dir=out)


def crowdrag_figures(folder: Path, out: Path) -> dict[str, dict[str, Any]]:
    """Each session score's agreement with people on ``quality_overall``."""
    converted = out / "crowdrag"
    convert_crowdrag(folder, converted)
    run = run_scenario(
        _scenario(
            converted / "answers.jsonl",
            "jsonl",
            out / "crowdrag-run",
            converted / "preferences.jsonl",
            urge=False,
        ),
        out_dir=out / "crowdrag-run",
    )
    block = ((run.meta or {}).get("preferences") or {}).get("quality_overall") or {}
    found = {
        name: entry
        for name, entry in (block.get("session") or {}).items()
        if not name.startswith("labels:")
    }
    rows = [p for p in read_preferences(converted / "preferences.jsonl")]
    rows = [p for p in rows if p.criterion == "quality_overall"]
    scores = {s.session_id: s.scores for s in run.sessions}
    for a, b in COMBINE:
        values = _z_sum(scores, a, b)
        found[f"z({a}+{b})"] = pair_agreement(
            rows,
            [values.get(str(p.session_a)) for p in rows],
            [values.get(str(p.session_b)) for p in rows],
            n_boot=1000,
        )
    return found


def _z_sum(scores: dict[str, dict[str, Any]], a: str, b: str) -> dict[str, float]:
    """The mean of two scores' z-scores over the sessions holding both (the run's
    ``[[aggregate.combine]]``; a lower-is-better score enters negated)."""
    both = {
        sid: (float(s[a]), float(s[b]))
        for sid, s in scores.items()
        if s.get(a) is not None and s.get(b) is not None
    }
    if len(both) < 2:
        return {}
    out = dict.fromkeys(both, 0.0)
    for position, name in enumerate((a, b)):
        column = np.array([v[position] for v in both.values()])
        spread = column.std() or 1.0
        sign = -1.0 if lower_is_better(name) else 1.0
        for sid, value in zip(both, column, strict=True):
            out[sid] += sign * (value - column.mean()) / spread / 2
    return out


def urge_figures(path: Path, out: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Each score's correlations with the users' satisfaction, by level."""
    run = run_scenario(
        _scenario(path, "urge", out / "urge-run", None, urge=True), out_dir=out / "urge-run"
    )
    return dict((run.meta or {}).get("correlations") or {})


def _agreement(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("agreement") is None:
        return "-"
    ci = entry.get("ci95") or [None, None]
    return f"{entry['agreement']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] of {entry.get('decided')}"


def _spearman(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("spearman") is None:
        return "-"
    ci = (entry.get("ci95") or {}).get("spearman") or [None, None]
    return f"{entry['spearman']:.3f} [{ci[0]:.2f}, {ci[1]:.2f}] n {entry.get('n')}"


def _figure(statistic: str, data: str, value: float, ci: Any, n: Any, **more: Any) -> dict:
    return {
        "statistic": statistic,
        "data": data,
        "value": round(float(value), 4),
        "ci95": [round(float(ci[0]), 4), round(float(ci[1]), 4)] if ci else None,
        "n": n,
        **more,
    }


def evidence_rows(
    crowdrag: dict[str, dict[str, Any]], urge: dict[str, dict[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The figures the headline rule reads, one row per judge and measurement (offline)."""
    rows = []
    stamp = {
        "judged_by": "offline twin",
        "command": COMMAND,
        "measured": dt.date.today().isoformat(),
        "offline_evidence": evidence_name(),
    }
    for score in (*JUDGES, *MEASURES):
        entry = crowdrag.get(score)
        if entry and entry.get("agreement") is not None:
            rows.append(
                {
                    "score": score,
                    **_figure(
                        "pair agreement",
                        "CrowdRAG-25 development topics (20 topics): people's preferred answer, "
                        "quality_overall, decided pairs",
                        entry["agreement"],
                        entry.get("ci95"),
                        entry.get("decided"),
                    ),
                    **stamp,
                }
            )
        for level, what in (("session", "session"), ("turn", "query")):
            found = (urge.get(level) or {}).get(score)
            if found and found.get("spearman") is not None:
                rows.append(
                    {
                        "score": score,
                        **_figure(
                            "Spearman",
                            f"URGE sample (12 Perplexity sessions): the users' own {what} "
                            "satisfaction",
                            found["spearman"],
                            (found.get("ci95") or {}).get("spearman"),
                            found.get("n"),
                        ),
                        **stamp,
                    }
                )
    return rows


def meta_rows(meta: dict[str, Any], judged_by: str, command: str) -> list[dict[str, Any]]:
    """A satisfaction judge's figures from ``genir-eval meta --json`` on the URGE sample:
    Spearman of its overall (argmax) and, with log-probabilities, expected rating with the
    users' session and query satisfaction."""
    rows = []
    for label, key in (("", "overall"), (" (expected rating)", "expected")):
        block = (meta.get("satisfaction") or {}).get(key) or {}
        for level, what in (("session_level", "session"), ("query_level", "query")):
            found = block.get(level) or {}
            if found.get("spearman") is None:
                continue
            rows.append(
                {
                    "score": str(meta["judge"]["name"]),
                    **_figure(
                        f"Spearman{label}",
                        f"URGE sample (12 Perplexity sessions): the users' own {what} satisfaction",
                        found["spearman"],
                        (found.get("ci95") or {}).get("spearman"),
                        found.get("n"),
                    ),
                    "judged_by": judged_by,
                    "command": command,
                    "measured": dt.date.today().isoformat(),
                }
            )
    return rows


def write_evidence(rows: list[dict[str, Any]], path: Path, replace: str = "offline twin") -> None:
    """Replace the rows of ``path`` judged by ``replace`` (for a judge named in ``rows``
    when ``replace`` is a model); other rows are kept."""
    names = {r["score"] for r in rows}
    kept = []
    if path.is_file():
        kept = [
            r
            for r in json.loads(path.read_text(encoding="utf-8"))["figures"]
            if r.get("judged_by") != replace
            or (replace != "offline twin" and r.get("score") not in names)
        ]
    document = {
        "version": 1,
        "about": "Evidence that a score tracks people: what the headline rule and the report "
        "card read (genir_eval/meta/headline.py). Each figure carries the command that "
        "measured it.",
        "python": platform.python_version(),
        "figures": rows + kept,
    }
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crowdrag", type=Path, default=SHARED / "crowdrag")
    parser.add_argument("--urge", type=Path, default=SHARED / "urge" / "urge_sample_dev.csv")
    parser.add_argument("--write", action="store_true", help=f"store into {EVIDENCE_PATH}")
    parser.add_argument(
        "--from-meta",
        type=Path,
        help="store the figures of a `genir-eval meta --json` output on the URGE sample "
        "instead (a real model's), with --judged-by and --command",
    )
    parser.add_argument("--judged-by", help="who judged (with --from-meta)")
    parser.add_argument("--command", help="the command that measured them (with --from-meta)")
    args = parser.parse_args()
    if args.from_meta:
        if not (args.judged_by and args.command):
            parser.error("--from-meta needs --judged-by and --command")
        meta = json.loads(args.from_meta.read_text(encoding="utf-8"))
        rows = meta_rows(meta, args.judged_by, args.command)
        write_evidence(rows, EVIDENCE_PATH, replace=args.judged_by)
        for row in rows:
            print(f"{row['score']} {row['statistic']} {row['value']} {row['ci95']} n {row['n']}")
        print(f"wrote {len(rows)} rows to {EVIDENCE_PATH}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-headline-") as tmp:
        out = Path(tmp)
        crowdrag = crowdrag_figures(args.crowdrag, out)
        urge = urge_figures(args.urge, out)
    names = list(dict.fromkeys([*crowdrag, *(urge.get("session") or {})]))
    print(f"offline twins ({evidence_name()})")
    print(
        f"{'score':<48} {'CrowdRAG dev quality_overall':<34} {'URGE session Spearman':<28} "
        "URGE query Spearman"
    )
    for name in names:
        print(
            f"{name:<48} {_agreement(crowdrag.get(name)):<34} "
            f"{_spearman((urge.get('session') or {}).get(name)):<28} "
            f"{_spearman((urge.get('turn') or {}).get(name))}"
        )
    if args.write:
        write_evidence(evidence_rows(crowdrag, urge), EVIDENCE_PATH)
        print(f"wrote {EVIDENCE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
