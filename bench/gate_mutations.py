"""The one-line mutations of issue 25 and of issue 48 (the gate's rule across scores, and
its interval over the runs' repeated judgments),
applied by hand one at a time: each must make at least one test fail. Run from the repository root with the test extras installed:

    python bench/gate_mutations.py            # every mutation
    python bench/gate_mutations.py 3 7        # some of them

For each mutation: the line is changed in the source, the tests named for it are run
(``pytest -x -q -p no:randomly -m ""``: whatever their mark), the source is restored, and
one line says which test caught it (or that none did, and the script exits 1). Not part of
the suite: it edits the source while it runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (what it means, file, the line as written, the mutated line, the tests that must catch it)
MUTATIONS: list[tuple[str, str, str, str, list[str]]] = [
    (
        "compare accepts a run whose status says it failed",
        "genir_eval/cli/compare.py",
        '        if not status.get("ok", True):',
        "        if False:",
        ["tests/runner/test_gate_verdict.py::test_compare_refuses_a_failed_run"],
    ),
    (
        "assert_run accepts a failed run",
        "genir_eval/runner/testing.py",
        '    if not status.get("ok", True):',
        "    if False:",
        ["tests/runner/test_gate_verdict.py::test_assert_run_refuses_a_failed_run"],
    ),
    (
        "the Monte-Carlo randomisation p-value made almost always 1",
        "genir_eval/runner/compare.py",
        "    return (hits + 1) / (n_resamples + 1), False",
        "    return (hits + n_resamples) / (n_resamples + 1), False",
        [
            "tests/runner/test_compare_statistics.py::"
            "test_a_20_session_regression_is_significant_and_fails_the_gate",
            "tests/runner/test_compare_statistics.py::test_monte_carlo_p_agrees_with_the_exact_one",
        ],
    ),
    (
        "compare's bootstrap interval at 90% instead of 95%",
        "genir_eval/runner/compare.py",
        "    lo, hi = np.percentile(means, [2.5, 97.5])",
        "    lo, hi = np.percentile(means, [5, 95])",
        [
            "tests/runner/test_compare_statistics.py::test_bootstrap_bounds_are_the_95_percent_ones",
            "tests/runner/test_compare_statistics.py::test_the_printed_interval_is_the_computed_one",
        ],
    ),
    (
        "load_run skips the digest check for the CSV tables",
        "genir_eval/rundir/verify.py",
        "        if file_digest(path) != digest:",
        '        if not name.endswith(".csv") and file_digest(path) != digest:',
        ["tests/runner/test_gate_verdict.py::test_a_changed_file_of_any_kind_is_refused"],
    ),
    (
        "load_run skips the digest check for report.html",
        "genir_eval/rundir/verify.py",
        "        if file_digest(path) != digest:",
        '        if name != "report.html" and file_digest(path) != digest:',
        ["tests/runner/test_gate_verdict.py::test_a_changed_file_of_any_kind_is_refused"],
    ),
    (
        "the engine's own redaction of failure messages removed",
        "genir_eval/llm/engine.py",
        "            message = self.provider.redact(str(error))",
        "            message = str(error)",
        ["tests/llm/test_stored_values.py::test_the_engine_redacts_what_a_provider_did_not"],
    ),
    (
        "the heartbeat line without a terminal disabled",
        "genir_eval/runner/executor.py",
        "        if self.progress and self.log is not None and not _is_tty(self.log):",
        "        if False:",
        ["tests/runner/test_run_wiring.py::test_a_run_without_a_terminal_prints_its_waiting_line"],
    ),
    # -- issue 48: the gate's rule across scores ----------------------------------------
    (
        "Holm's step-down replaced by Bonferroni",
        "genir_eval/meta/multiplicity.py",
        "        running = max(running, min(1.0, (m - rank) * p_values[i]))",
        "        running = min(1.0, m * p_values[i])",
        [
            "tests/meta/test_multiplicity.py",
            "tests/runner/test_gate_rule.py::test_holm_across_scores_names_the_scores_that_failed",
        ],
    ),
    (
        "Benjamini-Hochberg without its step-up (no running minimum)",
        "genir_eval/meta/multiplicity.py",
        "        running = min(running, m * p_values[i] / rank)",
        "        running = m * p_values[i] / rank",
        ["tests/meta/test_multiplicity.py"],
    ),
    (
        "the non-inferiority margin's sign flipped",
        "genir_eval/runner/compare.py",
        "    if end >= -margin:",
        "    if end >= margin:",
        ["tests/runner/test_gate_rule.py"],
    ),
    (
        "McNemar's mid-p replaced by the exact p-value",
        "genir_eval/meta/mcnemar.py",
        "    mid = min(1.0, 2 * below / total - comb(n, k) / total)",
        "    mid = exact",
        [
            "tests/meta/test_mcnemar.py",
            "tests/runner/test_gate_rule.py::test_pass_fail_scores_use_mcnemars_mid_p",
        ],
    ),
    (
        "the gate's p-values not adjusted across scores",
        "genir_eval/runner/compare.py",
        "    p = c.p_value if p_adjusted is None else p_adjusted",
        "    p = c.p_value",
        ["tests/runner/test_gate_rule.py"],
    ),
    (
        "turns resampled one by one, not by session",
        "genir_eval/runner/compare.py",
        '    sessions = [d.key.rsplit("#", 1)[0] for d in pairs] if level == "turn" else None',
        '    sessions = [d.key for d in pairs] if level == "turn" else None',
        ["tests/runner/test_gate_too_few.py"],
    ),
    (
        "a NaN score compared, not refused",
        "genir_eval/runner/compare.py",
        "    _refuse_non_finite(pairs, metric, level, sources)",
        "",
        ["tests/runner/test_gate_too_few.py"],
    ),
    (
        "the pairwise gate decides over one query",
        "genir_eval/runner/pairwise_gate.py",
        "    if sums.size < MIN_QUERIES:",
        "    if False:",
        ["tests/runner/test_gate_too_few.py"],
    ),
    (
        "ITEM evaluation's micro-pooled precision replaced by the macro mean",
        "genir_eval/meta/item_eval.py",
        "        precision = self.tp / self.n_pred if self.n_pred else None",
        '        precision = self.macro["precision"].result()',
        ["tests/judges/item/test_item_eval.py::test_evaluate_item_pools_counts_over_turns_by_hand"],
    ),
    (
        "compare's nested resample of the runs' repeats replaced by the plain paired one",
        "genir_eval/runner/compare.py",
        '    if repeated is not None and repeated.carried_by == "both":',
        "    if False:",
        ["tests/runner/test_repeats_compare.py"],
    ),
]


def run_mutations(mutations: list[tuple[str, str, str, str, list[str]]], argv: list[str]) -> int:
    """Apply each chosen mutation (1-based numbers in ``argv``; all without), run its tests,
    restore the source; 1 when one survived. ``line`` may be several lines: the text must
    occur once in the file (a line, with its newline)."""
    chosen = [int(a) for a in argv] or list(range(1, len(mutations) + 1))
    survived = 0
    for number in chosen:
        what, name, line, mutant, tests = mutations[number - 1]
        path = ROOT / name
        source = path.read_text(encoding="utf-8")
        if source.count(line + "\n") != 1:
            print(f"{number}. {what}: the line is not in {name} once; update this script")
            return 2
        path.write_text(source.replace(line + "\n", mutant + "\n"), encoding="utf-8")
        try:
            result = subprocess.run(
                # -m "": the tests named run whatever their mark (the default selection,
                # pyproject's addopts, leaves out the slow and heavy ones)
                [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-m", "", *tests],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
        finally:
            path.write_text(source, encoding="utf-8")
        failed = [
            text.split(" ", 2)[1]
            for text in result.stdout.splitlines()
            if text.startswith("FAILED ")
        ]
        if result.returncode == 1 and failed:
            print(f"{number}. {what}: caught by {failed[0]}", flush=True)
        else:
            survived += 1
            print(f"{number}. {what}: SURVIVED (pytest exit {result.returncode})", flush=True)
    return 1 if survived else 0


def main(argv: list[str]) -> int:
    return run_mutations(MUTATIONS, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
