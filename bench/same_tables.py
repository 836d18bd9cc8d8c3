"""Does a change leave the offline runs' tables as they were? Runs the offline scenarios with
the working tree and with a git ref (default HEAD), and compares every table they write.
Besides the scenario files it runs ``crowdrag-dev``: the CrowdRAG-25 development topics
(``../shared/crowdrag``) converted by each tree's ``genir-eval parse --format crowdrag`` and
judged, one session per answer, by the default judges with people's preferences as gold.

    python bench/same_tables.py                  # working tree against HEAD
    python bench/same_tables.py --base main~3    # against any ref

The tables (``links``, ``turns``, ``sessions`` as JSONL and CSV) must be byte-identical; run
ids and timestamps live in ``run.json`` and ``meta.json``, which are not compared. The ref is
exported with ``git archive`` into a temporary folder beside a link to ``../shared``, so the
scenarios' relative paths resolve the same way. Prints one line per table and exits 1 when
any differs (the first differing line is shown).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ("demo-offline", "urge-offline", "demo-citations", "product-feedback", "crowdrag-dev")
CROWDRAG_SCENARIO = """version = 1
name = "crowdrag-dev"
[input]
path = "answers.jsonl"
format = "jsonl"
preferences = "preferences.jsonl"
[engine]
concurrency = 8
[[judges]]
name = "citation_support"
[[judges]]
name = "link_usefulness.dna"
[[judges]]
name = "satisfaction.geval"
[aggregate]
measures = ["sdcg_urge", "citation_precision", "citation_recall", "unsupported_claims"]
[meta]
enabled = true
n_boot = 200
seed = 0
[output]
report = false
"""
TABLES = ("links", "turns", "sessions")


def _export(ref: str, into: Path) -> Path:
    tree = into / "main"
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (into / "shared").symlink_to(shared)
    return tree


def _crowdrag(tree: Path, out: Path, env: dict[str, str]) -> Path:
    """The CrowdRAG development topics as this tree converts them, and a scenario over them."""
    folder = out.parent / f"{out.name}-input"
    command = [
        sys.executable, "-m", "genir_eval", "parse", str(ROOT.parent / "shared" / "crowdrag"),
        "--format", "crowdrag", "--output", str(folder),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"crowdrag conversion failed in {tree}: {done.stderr}")
    scenario = folder / "crowdrag-dev.toml"
    scenario.write_text(CROWDRAG_SCENARIO, encoding="utf-8")
    return scenario


def _run(tree: Path, scenario: str, out: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    path = tree / "scenarios" / f"{scenario}.toml"
    if scenario == "crowdrag-dev":
        path = _crowdrag(tree, out, env)
    command = [
        sys.executable, "-m", "genir_eval", "run", str(path),
        "--out", str(out), "--quiet", "--cache-mode", "off", "--journal", "none",
    ]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{scenario} failed in {tree} (exit {done.returncode}): {done.stderr}")


def _first_difference(a: Path, b: Path) -> str:
    left, right = a.read_bytes().splitlines(), b.read_bytes().splitlines()
    for number, (x, y) in enumerate(zip(left, right, strict=False), start=1):
        if x != y:
            return f"line {number}: {x[:120]!r} != {y[:120]!r}"
    return f"{len(left)} lines against {len(right)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the git ref to compare with (HEAD)")
    parser.add_argument("--scenario", action="append", help="only these scenarios (repeatable)")
    args = parser.parse_args()
    different = 0
    with tempfile.TemporaryDirectory(prefix="same-tables-") as tmp:
        base = _export(args.base, Path(tmp) / "base")
        for scenario in args.scenario or SCENARIOS:
            runs = {name: Path(tmp) / name / scenario for name in ("before", "after")}
            _run(base, scenario, runs["before"])
            _run(ROOT, scenario, runs["after"])
            for table in TABLES:
                for suffix in ("jsonl", "csv"):
                    a, b = (runs[n] / f"{table}.{suffix}" for n in ("before", "after"))
                    if not a.exists() and not b.exists():
                        continue
                    if a.exists() and b.exists() and a.read_bytes() == b.read_bytes():
                        print(f"same       {scenario}/{a.name}")
                        continue
                    different += 1
                    why = _first_difference(a, b) if a.exists() and b.exists() else "missing"
                    print(f"DIFFERENT  {scenario}/{a.name}: {why}")
    print(f"{different} table(s) differ from {args.base}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
