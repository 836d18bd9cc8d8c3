"""mutmut over the decision code, one module at a time, each against every test of it.

    python bench/mutation.py --list              # the modules, their files and tests
    python bench/mutation.py gate                # one module (prints the score)
    python bench/mutation.py gate --minutes 15   # stopped after 15 minutes (counted so far)

``[tool.mutmut]`` in pyproject.toml names every file below and every test of them; run whole,
it makes thousands of mutants and takes hours on two cores. This script runs one module: it
copies the package, the tests, fixtures/ and scenarios/ into a work folder
(``/tmp/genir-mutation/<module>``; ``../shared`` is linked beside it, as beside the
repository), writes a pyproject.toml whose ``[tool.mutmut]`` mutates only that module's
files against its tests, runs ``mutmut run`` there at nice 10 with one worker (the machine
is shared), and prints ``mutmut results`` and the score (killed / (killed + survived), the
mutants with no test or a timeout counted apart). Nothing in the repository is changed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = Path("/tmp/genir-mutation")

#: module -> (files mutated, tests that exercise them: every test file importing a mutated
#: module; for llm/providers/base.py, whose records every stage imports, those of its
#: redaction; tests/test_mutation_config.py checks it)
MODULES: dict[str, tuple[list[str], list[str]]] = {
    "compare": (
        [
            "genir_eval/runner/compare.py",
            "genir_eval/cli/compare.py",
            "genir_eval/runner/testing.py",
            "genir_eval/runner/run_threshold.py",
            "genir_eval/meta/multiplicity.py",
            "genir_eval/meta/mcnemar.py",
            "genir_eval/meta/paired.py",
        ],
        [
            "tests/runner/test_hostile_gate.py",
            "tests/runner/test_nuggets_run.py",
            "tests/runner/test_compare.py",
            "tests/runner/test_compare_joint.py",
            "tests/runner/test_compare_statistics.py",
            "tests/runner/test_gate_rule.py",
            "tests/runner/test_gate_too_few.py",
            "tests/meta/test_multiplicity.py",
            "tests/meta/test_mcnemar.py",
            "tests/meta/test_nested_bootstrap.py",
            "tests/runner/test_repeats_compare.py",
            "tests/runner/test_compare_damaged.py",
            "tests/runner/test_compare_pairwise.py",
            "tests/runner/test_assert_run.py",
            "tests/runner/test_gate_verdict.py",
            "tests/runner/test_citation_run.py",
            "tests/runner/test_run.py",
            "tests/report/test_run_folder.py",
        ],
    ),
    "gate": (
        ["genir_eval/runner/pairwise_gate.py"],
        [
            "tests/runner/test_pairwise_gate.py",
            "tests/runner/test_arena_gate.py",
            "tests/runner/test_arena.py",
            "tests/runner/test_compare_pairwise.py",
            "tests/runner/test_gate_too_few.py",
        ],
    ),
    "arena": (
        [
            "genir_eval/runner/arena.py",
            "genir_eval/runner/arena_gold.py",
            "genir_eval/cli/arena.py",
            "genir_eval/judges/pairwise/ranking.py",
        ],
        [
            "tests/hostile/test_linear_time.py",
            "tests/hostile/test_reader_fuzz.py",
            "tests/runner/test_nuggets_run.py",
            "tests/judges/pairwise/test_ranking.py",
            "tests/runner/test_arena.py",
            "tests/runner/test_arena_gate.py",
            "tests/runner/test_arena_figures.py",
            "tests/runner/test_arena_style_intervals.py",
            "tests/runner/test_arena_bounded.py",
            "tests/runner/test_compare_pairwise.py",
            "tests/runner/test_pairwise_gate.py",
            "tests/runner/test_gate_too_few.py",
        ],
    ),
    "preferences": (
        ["genir_eval/meta/preferences.py"],
        [
            "tests/meta/test_preferences_agreement.py",
            "tests/runner/test_preferences_run.py",
            "tests/ingest/test_preferences.py",
        ],
    ),
    "measures": (
        ["genir_eval/metrics/measures.py", "genir_eval/metrics/citations.py"],
        [
            "tests/metrics/test_metrics_measures.py",
            "tests/metrics/test_evidence_declared.py",
            "tests/metrics/test_metrics_citations.py",
            "tests/metrics/test_metrics_aggregate.py",
            "tests/metrics/test_metrics_usefulness.py",
            "tests/judges/test_catalog.py",
            "tests/runner/test_citation_run.py",
        ],
    ),
    "rate": (
        ["genir_eval/llm/limits/rate.py"],
        [
            "tests/llm/test_limits.py",
            "tests/llm/test_rate_learning.py",
            "tests/llm/test_send_window_stalls.py",
        ],
    ),
    "redaction": (
        ["genir_eval/llm/providers/base.py", "genir_eval/llm/providers/classify.py"],
        [
            "tests/llm/test_classify_causes.py",
            "tests/llm/test_secrets.py",
            "tests/llm/test_providers.py",
            "tests/llm/test_http_path.py",
            "tests/llm/test_stored_values.py",
            "tests/llm/test_limit_or_noise.py",
            "tests/llm/test_health.py",
            "tests/llm/test_engine_faults.py",
            "tests/llm/test_rate_learning.py",
        ],
    ),
}


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def prepare(module: str) -> Path:
    """A fresh work folder for ``module``: the code and tests copied, its own config."""
    files, tests = MODULES[module]
    base = WORK / module
    shutil.rmtree(base, ignore_errors=True)
    folder = base / "repo"
    folder.mkdir(parents=True)
    for name in ("genir_eval", "tests", "fixtures", "scenarios"):
        shutil.copytree(
            ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    shared = ROOT.parent / "shared"
    if shared.exists():
        (base / "shared").symlink_to(shared.resolve())
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = project[: project.index("[tool.mutmut]")]
    project += (
        "[tool.mutmut]\n"
        'source_paths = ["genir_eval/"]\n'
        f"only_mutate = {_toml_list(files)}\n"
        'also_copy = ["fixtures/", "scenarios/"]\n'
        # every test of the selection, the slow and heavy marks included (pyproject's
        # addopts, copied above, leave them out of a plain run)
        'pytest_add_cli_args = ["-p", "no:randomly", "-p", "no:cacheprovider", "-m", ""]\n'
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        "use_git_change_detection = false\n"
    )
    (folder / "pyproject.toml").write_text(project, encoding="utf-8")
    return folder


def run(module: str, minutes: float) -> int:
    folder = prepare(module)
    # mutmut puts mutants/ first on sys.path itself; a PYTHONPATH naming it before it exists
    # is cached by the import system as "no such folder" and the tests would import the
    # unmutated package instead (every mutant "not checked")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    command = ["nice", "-n", "10", sys.executable, "-m", "mutmut", "run", "--max-children", "1"]
    started = time.monotonic()
    with (folder / "mutmut-run.log").open("w") as log:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=log)
        try:
            code = process.wait(timeout=minutes * 60)
            stopped = False
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            code, stopped = None, True
    took = time.monotonic() - started
    results = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    (folder / "mutmut-results.txt").write_text(results, encoding="utf-8")
    counts: dict[str, int] = {}
    for line in results.splitlines():
        if ":" in line:
            status = line.rsplit(":", 1)[1].strip()
            counts[status] = counts.get(status, 0) + 1
    killed, survived = counts.get("killed", 0), counts.get("survived", 0)
    score = killed / (killed + survived) if killed + survived else float("nan")
    state = f"stopped after {minutes:g} min" if stopped else f"finished (mutmut exit {code})"
    print(f"{module}: {state} in {took / 60:.1f} min; {dict(sorted(counts.items()))}")
    print(f"{module}: score {killed}/{killed + survived} = {score:.1%} (killed / checked)")
    print(f"{module}: results in {folder / 'mutmut-results.txt'}; log {folder / 'mutmut-run.log'}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", nargs="?", choices=sorted(MODULES))
    parser.add_argument("--minutes", type=float, default=15.0, help="stop after (default 15)")
    parser.add_argument("--list", action="store_true", help="list the modules")
    args = parser.parse_args(argv)
    if args.list or not args.module:
        for name, (files, tests) in MODULES.items():
            print(f"{name}: {', '.join(files)}\n  tests: {', '.join(tests)}")
        return 0
    return run(args.module, args.minutes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
