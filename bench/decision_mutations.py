"""One-line mutants of the decision code, applied one at a time in a copy of the repository:
each must make a test fail. The kill rate is printed per module (the decision layer, the
headline, nuggets, labelling, compare, the arena, the statistics, the measures, the run
folder, the engine).

    python bench/decision_mutations.py                     # every mutant
    python bench/decision_mutations.py 3 7                 # some of them (their numbers)
    python bench/decision_mutations.py --module nuggets    # one module's (repeatable)
    python bench/decision_mutations.py --ci                # the bounded subset the slow test runs
    python bench/decision_mutations.py --list              # number, module and meaning of each

The first 23 are the survivors of the audit of the decision code (issue 38), the next three
the pass-throughs the README claimed were tested (issue 40), then neighbours of the same
lines and mutmut's survivors since killed; the last group is the third audit's (issue 51:
the decision layer, headline, nugget, labelling, compare, arena and statistics code) with
the second audit's last survivor (a run folder whose judge lost its ``missing`` key), and
their neighbours. For each: the line is changed in a copy of the package, tests, fixtures
and scenarios (``../shared`` linked beside it, as beside the repository; no bytecode is
written, so a stale cache cannot hide a mutant), the tests named for it are run there
(``pytest -x -m ""``: whatever their mark), the line is restored, and one line says which
test caught it (or that none did, or that every test named for it skipped here: not
checked, counted apart). Exit 1 when one survived, 2 when a line is no longer in
its file (the code changed: update this script). The repository itself is never edited.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]

ARENA = "tests/runner/test_arena_gate.py"
GATE = "tests/runner/test_pairwise_gate.py"
RANKING = "tests/judges/pairwise/test_ranking.py"
PAIRWISE = "tests/runner/test_compare_pairwise.py"
AGREEMENT = "tests/meta/test_preferences_agreement.py"
MEASURES = "tests/metrics/test_metrics_measures.py"
CITATIONS = "tests/metrics/test_metrics_citations.py"
COMPARE = "tests/runner/test_compare.py"
STATISTICS = "tests/runner/test_compare_statistics.py"
# issue 51's test files
DECIDE = "tests/meta/test_decide_chance.py"
VERDICT = "tests/report/test_verdict_evidence.py"
STRENGTH = "tests/meta/test_headline_strength.py"
NAMES = "tests/runner/test_headline_names.py"
GOLD_NUGGETS = "tests/meta/test_gold_nuggets.py"
ARENA_NUGGETS = "tests/runner/test_arena_nuggets_missing.py"
NUGGET_ORDER = "tests/judges/nuggets/test_nuggets_order.py"
SAMPLE = "tests/label/test_label_sample_size.py"
PEOPLE_GOLD = "tests/label/test_label_gold_sessions.py"
JOINT = "tests/runner/test_compare_joint.py"
GATED = "tests/report/test_compare_worse_gated.py"
STYLE = "tests/runner/test_arena_style_intervals.py"
CROSSVAL = "tests/meta/test_crossval_ties.py"
RESAMPLE = "tests/meta/test_resample_tails.py"
KEYS = "tests/runner/test_run_json_keys.py"


class Mutation(NamedTuple):
    """What the change means, the file, the line(s) as written, the mutated line(s), the
    tests that must catch it, and its module when the file alone does not say it."""

    what: str
    file: str
    line: str
    mutant: str
    tests: list[str]
    module: str = ""


#: The module a mutated file belongs to (the first prefix that matches), for the kill rates.
MODULE_OF_FILE = (
    ("genir_eval/meta/decide.py", "decision layer"),
    ("genir_eval/report/verdict.py", "decision layer"),
    ("genir_eval/meta/headline.py", "headline"),
    ("genir_eval/report/card.py", "headline"),
    ("genir_eval/metrics/nuggets.py", "nuggets"),
    ("genir_eval/meta/gold/nuggets.py", "nuggets"),
    ("genir_eval/runner/arena_nuggets.py", "nuggets"),
    ("genir_eval/judges/nuggets/", "nuggets"),
    ("genir_eval/runner/label/", "labelling"),
    ("genir_eval/runner/compare.py", "compare"),
    ("genir_eval/cli/compare.py", "compare"),
    ("genir_eval/report/comparison.py", "compare"),
    ("genir_eval/runner/testing.py", "compare"),
    ("genir_eval/runner/arena", "arena"),
    ("genir_eval/runner/pairwise_gate.py", "arena"),
    ("genir_eval/cli/arena.py", "arena"),
    ("genir_eval/judges/pairwise/", "arena"),
    ("genir_eval/meta/crossval.py", "statistics"),
    ("genir_eval/meta/resample.py", "statistics"),
    ("genir_eval/meta/preferences.py", "statistics"),
    ("genir_eval/metrics/", "measures"),
    ("genir_eval/rundir/", "run folder"),
    ("genir_eval/runner/run.py", "run folder"),
    ("genir_eval/runner/scenario_table.py", "run folder"),
    ("genir_eval/llm/", "engine"),
)


def module_of(mutation: Mutation) -> str:
    if mutation.module:
        return mutation.module
    return next(m for prefix, m in MODULE_OF_FILE if mutation.file.startswith(prefix))


# (what it means, file, the line as written, the mutated line, the tests that must catch it)
AUDITED: list[tuple[str, str, str, str, list[str]]] = [
    (
        "the pairwise gate's interval at 1 - 2 alpha",
        "genir_eval/runner/pairwise_gate.py",
        "    lo, hi = np.percentile(rates, [100 * alpha / 2, 100 * (1 - alpha / 2)])",
        "    lo, hi = np.percentile(rates, [100 * alpha, 100 * (1 - alpha)])",
        [f"{GATE}::test_the_interval_holds_1_minus_alpha_of_the_sampling_distribution"],
    ),
    (
        "the pairwise gate passes when any candidate passes",
        "genir_eval/runner/pairwise_gate.py",
        '        "passed": not any(c["failed"] for c in candidates),',
        '        "passed": not all(c["failed"] for c in candidates),',
        [
            f"{GATE}::test_the_gate_fails_when_any_candidate_fails",
            f"{ARENA}::test_one_failing_candidate_fails_the_gate",
        ],
    ),
    (
        "a candidate with no judged pair passes the gate",
        "genir_eval/runner/pairwise_gate.py",
        '                {"name": name, "pairs": 0, "win_rate": None, "ci": None, "failed": True}',
        '                {"name": name, "pairs": 0, "win_rate": None, "ci": None, "failed": False}',
        [
            f"{GATE}::test_a_candidate_with_no_judged_pair_fails",
            f"{ARENA}::test_a_candidate_never_judged_against_the_baseline_fails",
        ],
    ),
    (
        "arena --baseline ignored (the first system taken as the baseline)",
        "genir_eval/runner/arena.py",
        "            baseline=settings.baseline or names[0],",
        "            baseline=names[0],",
        [f"{ARENA}::test_the_baseline_is_the_one_named_not_the_first"],
    ),
    (
        "arena --alpha not passed on by the command line",
        "genir_eval/cli/arena.py",
        "        alpha=args.alpha,",
        "        alpha=0.05,",
        [f"{ARENA}::test_alpha_sets_the_gate_interval"],
    ),
    (
        "the Bradley-Terry bootstrap refits on the full data (every interval a point)",
        "genir_eval/judges/pairwise/ranking.py",
        "        refit = fit_davidson(outcomes, weights=drawn[outcomes.query], style=style, start=full)",
        "        refit = fit_davidson(outcomes, style=style, start=full)",
        [
            f"{RANKING}::test_bootstrap_draws_have_the_spread_of_the_sampling_distribution",
            f"{ARENA}::test_intervals_have_width_and_follow_resamples_and_seed",
        ],
    ),
    (
        "the arena's score interval at 90% instead of 95%",
        "genir_eval/runner/arena.py",
        "            [float(np.percentile(draws[:, i], 2.5)), float(np.percentile(draws[:, i], 97.5))]",
        "            [float(np.percentile(draws[:, i], 5)), float(np.percentile(draws[:, i], 95))]",
        [f"{RANKING}::test_the_arena_table_interval_is_the_95_percent_one"],
    ),
    (
        "the Elo scale 400 / ln 2 instead of 400 / ln 10",
        "genir_eval/judges/pairwise/ranking.py",
        "ELO_SCALE = 400.0 / math.log(10.0)",
        "ELO_SCALE = 400.0 / math.log(2.0)",
        [
            f"{RANKING}::test_two_systems_match_the_closed_form",
            f"{ARENA}::test_two_systems_score_on_the_elo_scale",
        ],
    ),
    (
        "the style-control feature difference's sign flipped",
        "genir_eval/judges/pairwise/ranking.py",
        "    return 0.0 if total == 0 else (float(x) - float(y)) / total",
        "    return 0.0 if total == 0 else (float(y) - float(x)) / total",
        [
            f"{RANKING}::test_style_differences_are_a_minus_b_over_their_sum",
            f"{ARENA}::test_two_systems_score_on_the_elo_scale",
        ],
    ),
    (
        "preference agreement: turn scores ignore lower-is-better",
        "genir_eval/meta/preferences.py",
        "                    turned, a, b, lower_better=lower_is_better(name), n_boot=n_boot, seed=seed",
        "                    turned, a, b, lower_better=False, n_boot=n_boot, seed=seed",
        [
            f"{AGREEMENT}::test_turn_and_gold_scores_are_compared_in_their_measures_direction",
            "tests/runner/test_preferences_run.py::test_run_reports_pair_agreement_everywhere",
        ],
    ),
    (
        "preference agreement: lower_is_better ignores the gold: prefix",
        "genir_eval/meta/preferences.py",
        '    base = score.removeprefix("gold:").split("@", 1)[0]',
        '    base = score.split("@", 1)[0]',
        [f"{AGREEMENT}::test_lower_is_better_reads_the_measure_behind_gold_and_judge_names"],
    ),
    (
        "preference agreement: the interval at 90%",
        "genir_eval/meta/preferences.py",
        "    return [float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))]",
        "    return [float(np.percentile(ratios, 5)), float(np.percentile(ratios, 95))]",
        [f"{AGREEMENT}::test_the_agreement_interval_holds_95_percent_of_the_sampling_distribution"],
    ),
    (
        "sDCG's per-statement log discount dropped",
        "genir_eval/metrics/measures.py",
        "            dcg = sum(ui / max(1.0, math.log(i, self.b)) for i, ui in enumerate(u, start=1))",
        "            dcg = sum(ui for i, ui in enumerate(u, start=1))",
        [f"{MEASURES}::test_statement_and_turn_discounts_follow_the_parameters"],
    ),
    (
        "sDCG's turn discount ignores bq (the default 4 fixed)",
        "genir_eval/metrics/measures.py",
        "            total += dcg / (1.0 + math.log(k, self.bq))",
        "            total += dcg / (1.0 + math.log(k, 4.0))",
        [f"{MEASURES}::test_statement_and_turn_discounts_follow_the_parameters"],
    ),
    (
        "sDCG-URGE ignores bq (the default 1.05 fixed)",
        "genir_eval/metrics/measures.py",
        "            _urge_query_gain(u, self.br) / _urge_turn_discount(k, self.bq)",
        "            _urge_query_gain(u, self.br) / _urge_turn_discount(k, 1.05)",
        [f"{MEASURES}::test_statement_and_turn_discounts_follow_the_parameters"],
    ),
    (
        "citation recall takes the first judged citation instead of the best",
        "genir_eval/metrics/citations.py",
        "        return [max(self._weight(v) for v in judged)] if judged else []",
        "        return [self._weight(judged[0])] if judged else []",
        [f"{CITATIONS}::test_recall_counts_the_best_citation"],
    ),
    (
        "six words make a claim moved to seven",
        "genir_eval/metrics/citations.py",
        "    return len(_WORD.findall(text)) >= 6 or len(_CJK.findall(text)) >= 10",
        "    return len(_WORD.findall(text)) >= 7 or len(_CJK.findall(text)) >= 10",
        [f"{CITATIONS}::test_needs_support"],
    ),
    (
        "compare's higher_is_better ignores the gold: prefix",
        "genir_eval/runner/compare.py",
        '    base = metric.removeprefix("gold:").split("@", 1)[0]',
        '    base = metric.split("@", 1)[0]',
        [f"{COMPARE}::test_gold_and_judge_scores_keep_their_measures_direction"],
    ),
    (
        "compare drops the sessions only run B has when --common is not given",
        "genir_eval/runner/compare.py",
        "    if (only_a or only_b) and not common:",
        "    if only_a and not common:",
        [f"{COMPARE}::test_a_session_only_one_run_has_is_an_error_either_way"],
    ),
    (
        "the request-rate window stays 1 s below 60 rpm",
        "genir_eval/llm/limits/rate.py",
        "        base = max(window_s, 1.0 / per_second)",
        "        base = window_s",
        ["tests/llm/test_limits.py::test_request_rate_window_below_and_above_60_rpm"],
    ),
    (
        "a Retry-After HTTP date's sign flipped (always 0)",
        "genir_eval/llm/providers/classify.py",
        "    return max(0.0, email.utils.mktime_tz(parsed) - time.time())",
        "    return max(0.0, time.time() - email.utils.mktime_tz(parsed))",
        ["tests/llm/test_providers.py::test_retry_after_reads_seconds_milliseconds_and_http_dates"],
    ),
    (
        "key fragments of 8-9 characters left unredacted",
        "genir_eval/llm/providers/base.py",
        "_MIN_SECRET_PART = 8",
        "_MIN_SECRET_PART = 10",
        [
            "tests/llm/test_secrets.py::test_redact_takes_ends_from_eight_characters_and_leaves_seven"
        ],
    ),
    (
        "compare --pairwise: --alpha not passed on by the command line",
        "genir_eval/cli/compare.py",
        "            alpha=args.alpha,\n            gate_resamples=args.resamples,",
        "            alpha=0.05,\n            gate_resamples=args.resamples,",
        [f"{PAIRWISE}::test_alpha_reaches_the_pairwise_gate"],
    ),
    # -- issue 40: what the README said was tested ---------------------------------------
    (
        "compare: n_resamples=args.resamples removed",
        "genir_eval/cli/compare.py",
        "            n_resamples=args.resamples,",
        "",
        [f"{STATISTICS}::test_the_command_passes_level_resamples_and_seed_on"],
    ),
    (
        "compare: seed=args.seed removed (compare_runs' call)",
        "genir_eval/cli/compare.py",
        "            n_resamples=args.resamples,\n            seed=args.seed,",
        "            n_resamples=args.resamples,",
        [f"{STATISTICS}::test_the_command_passes_level_resamples_and_seed_on"],
    ),
    (
        "assert_run reads the session level whatever the level asked",
        "genir_eval/runner/testing.py",
        "        scores = loaded.scores(metric, level)",
        "        scores = loaded.scores(metric)",
        ["tests/runner/test_assert_run.py::test_assert_run_bounds_are_inclusive_and_levels_differ"],
    ),
    # -- neighbours: the same behaviours from another side ------------------------------
    (
        "arena: --baseline dropped by the command line",
        "genir_eval/cli/arena.py",
        "        baseline=args.baseline,",
        "        baseline=None,",
        [f"{ARENA}::test_the_baseline_is_the_one_named_not_the_first"],
    ),
    (
        "sDCG's statement discount ignores b (the default 2 fixed)",
        "genir_eval/metrics/measures.py",
        "            dcg = sum(ui / max(1.0, math.log(i, self.b)) for i, ui in enumerate(u, start=1))",
        "            dcg = sum(ui / max(1.0, math.log(i, 2.0)) for i, ui in enumerate(u, start=1))",
        [f"{MEASURES}::test_statement_and_turn_discounts_follow_the_parameters"],
    ),
    (
        "compare --pairwise: the gate's resamples not passed on",
        "genir_eval/cli/compare.py",
        "            gate_resamples=args.resamples,",
        "            gate_resamples=None,",
        [f"{PAIRWISE}::test_resamples_and_seed_reach_the_pairwise_gate"],
    ),
    (
        "compare --pairwise: the seed not passed on",
        "genir_eval/cli/compare.py",
        "            out=out,\n            seed=args.seed,",
        "            out=out,\n            seed=0,",
        [f"{PAIRWISE}::test_resamples_and_seed_reach_the_pairwise_gate"],
    ),
    (
        "the pairwise gate's bound not strict (an interval touching the threshold fails)",
        "genir_eval/runner/pairwise_gate.py",
        '                "failed": hi < threshold,',
        '                "failed": hi <= threshold,',
        [f"{GATE}::test_the_threshold_bound_is_strict"],
    ),
    (
        "the pairwise gate's seed not passed to its bootstrap",
        "genir_eval/runner/pairwise_gate.py",
        "        rate, lo, hi = _interval(sums, counts, alpha, resamples, seed)",
        "        rate, lo, hi = _interval(sums, counts, alpha, resamples, 0)",
        [f"{GATE}::test_seed_resamples_and_alpha_are_the_callers"],
    ),
    (
        "ten CJK characters make a claim moved to eleven",
        "genir_eval/metrics/citations.py",
        "    return len(_WORD.findall(text)) >= 6 or len(_CJK.findall(text)) >= 10",
        "    return len(_WORD.findall(text)) >= 6 or len(_CJK.findall(text)) >= 11",
        [f"{CITATIONS}::test_needs_support"],
    ),
    (
        "six words make a claim moved to five",
        "genir_eval/metrics/citations.py",
        "    return len(_WORD.findall(text)) >= 6 or len(_CJK.findall(text)) >= 10",
        "    return len(_WORD.findall(text)) >= 5 or len(_CJK.findall(text)) >= 10",
        [f"{CITATIONS}::test_needs_support"],
    ),
    (
        "key fragments of 7 characters redacted too",
        "genir_eval/llm/providers/base.py",
        "_MIN_SECRET_PART = 8",
        "_MIN_SECRET_PART = 7",
        [
            "tests/llm/test_secrets.py::test_redact_takes_ends_from_eight_characters_and_leaves_seven"
        ],
    ),
    (
        "preference agreement: session scores ignore lower-is-better",
        "genir_eval/meta/preferences.py",
        "                rows, a, b, lower_better=lower_is_better(name), n_boot=n_boot, seed=seed",
        "                rows, a, b, lower_better=False, n_boot=n_boot, seed=seed",
        [f"{AGREEMENT}::test_turn_and_gold_scores_are_compared_in_their_measures_direction"],
    ),
    # -- issue 40: the tests that could not fail ----------------------------------------
    (
        "scenario: an unknown key accepted (every document parses)",
        "genir_eval/runner/scenario_table.py",
        "            if name not in allowed:",
        "            if False:",
        ["tests/runner/test_scenario_fuzz.py::test_every_malformed_scenario_is_one_located_error"],
    ),
    (
        "run folder: a file another writer left is loaded (no digest check)",
        "genir_eval/rundir/verify.py",
        "        if file_digest(path) != digest:",
        "        if False:",
        ["tests/report/test_run_folder.py::test_a_folder_mixing_two_writers_files_is_refused"],
    ),
    (
        "run: the output folder's check before any call removed",
        "genir_eval/runner/run.py",
        '    check_writable_folder(out, "the output folder")',
        "    pass",
        [
            "tests/runner/test_storage_faults.py::test_read_only_output_folder_fails_before_any_call",
            # the read-only folder above skips for root without a mount; this one does not
            "tests/runner/test_output_folder_first.py",
        ],
    ),
    # -- mutmut's survivors in the pairwise gate (bench/mutation.py gate), killed since ----
    (
        "the gate's lower percentile at alpha / 3",
        "genir_eval/runner/pairwise_gate.py",
        "    lo, hi = np.percentile(rates, [100 * alpha / 2, 100 * (1 - alpha / 2)])",
        "    lo, hi = np.percentile(rates, [100 * alpha / 3, 100 * (1 - alpha / 2)])",
        [f"{GATE}::test_the_interval_holds_1_minus_alpha_of_the_sampling_distribution"],
    ),
    (
        "the gate's default resamples 2001",
        "genir_eval/runner/pairwise_gate.py",
        "    resamples: int = 2000,",
        "    resamples: int = 2001,",
        [f"{GATE}::test_seed_resamples_and_alpha_are_the_callers"],
    ),
    (
        "the gate stops at a candidate with no judged pair",
        "genir_eval/runner/pairwise_gate.py",
        '                {"name": name, "pairs": 0, "win_rate": None, "ci": None, "failed": True}\n'
        "            )\n            continue",
        '                {"name": name, "pairs": 0, "win_rate": None, "ci": None, "failed": True}\n'
        "            )\n            break",
        [f"{GATE}::test_a_candidate_with_no_judged_pair_fails"],
    ),
    (
        "the markdown gate's level 2 - alpha",
        "genir_eval/runner/pairwise_gate.py",
        '    level = 1 - gate["alpha"]\n    head = (',
        '    level = 2 - gate["alpha"]\n    head = (',
        [f"{GATE}::test_the_gate_reads_as_written_in_text_and_markdown"],
    ),
    (
        "the markdown gate's PASS written pass",
        "genir_eval/runner/pairwise_gate.py",
        '        "FAIL" if not gate["passed"] else "TOO FEW TO DECIDE" if gate.get("undecided") else "PASS"',
        '        "FAIL" if not gate["passed"] else "TOO FEW TO DECIDE" if gate.get("undecided") else "pass"',
        [f"{GATE}::test_the_gate_reads_as_written_in_text_and_markdown"],
    ),
    # -- mutmut's survivors in preference agreement (bench/mutation.py preferences) -------
    (
        "agreement: a NaN on one side only is not missing",
        "genir_eval/meta/preferences.py",
        "        if a is None or b is None or a != a or b != b:",
        "        if a is None or b is None or a != a and b != b:",
        [f"{AGREEMENT}::test_missing_values_edge_cases"],
    ),
    (
        "agreement: the interval's seed not used",
        "genir_eval/meta/preferences.py",
        "    rng = np.random.default_rng(seed)",
        "    rng = np.random.default_rng(None)",
        [f"{AGREEMENT}::test_defaults_seed_and_draws_are_passed_through"],
    ),
    (
        "agreement: the lower percentile at 3.5",
        "genir_eval/meta/preferences.py",
        "    return [float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))]",
        "    return [float(np.percentile(ratios, 3.5)), float(np.percentile(ratios, 97.5))]",
        [f"{AGREEMENT}::test_each_tail_of_the_agreement_interval_holds_2_5_percent"],
    ),
    (
        "agreement table: n_boot not passed to the turn level",
        "genir_eval/meta/preferences.py",
        "                    turned, a, b, lower_better=lower_is_better(name), n_boot=n_boot, seed=seed",
        "                    turned, a, b, lower_better=lower_is_better(name), seed=seed",
        [f"{AGREEMENT}::test_defaults_seed_and_draws_are_passed_through"],
    ),
    (
        "agreement table: a session the run lacks breaks the table",
        "genir_eval/meta/preferences.py",
        "            a = [session_scores.get(str(r.session_a), {}).get(name) for r in rows]",
        "            a = [session_scores.get(str(r.session_a), None).get(name) for r in rows]",
        [f"{AGREEMENT}::test_rows_naming_a_session_the_run_lacks_are_missing_on_either_side"],
    ),
    (
        "label scores: a yes/no label averaged as a number",
        "genir_eval/meta/preferences.py",
        "        if number is None or isinstance(number, bool) or not isinstance(number, (int, float)):",
        "        if number is None and isinstance(number, bool) or not isinstance(number, (int, float)):",
        [f"{AGREEMENT}::test_label_scores_skip_what_is_not_a_number_wherever_it_is"],
    ),
    # -- mutmut's survivors in the measures (bench/mutation.py measures) -----------------
    (
        "middle_high turns at a third",
        "genir_eval/metrics/measures.py",
        "        return [float(i) if i - 1 < m / 2 else float(m + 1 - i) for i in positions]",
        "        return [float(i) if i - 1 < m / 3 else float(m + 1 - i) for i in positions]",
        [f"{MEASURES}::test_middle_weightings_turn_at_the_middle_for_six_statements"],
    ),
    (
        "a bool taken as a measure's parameter",
        "genir_eval/metrics/measures.py",
        "        if isinstance(value, bool) or not isinstance(value, (int, float)):",
        "        if isinstance(value, bool) and not isinstance(value, (int, float)):",
        [f"{MEASURES}::test_parameters_must_be_numbers_not_bools"],
    ),
    (
        "a full-width question mark not read as a question",
        "genir_eval/metrics/citations.py",
        '        and any(s.text.strip().endswith(("?", "？")) for s in statements)',
        '        and any(s.text.strip().endswith(("?", "XX？XX")) for s in statements)',
        [f"{CITATIONS}::test_a_full_width_question_asks_back"],
    ),
    (
        "gold citation support read past its last turn",
        "genir_eval/metrics/citations.py",
        "        per_statement = gold[position] if position < len(gold) else ()",
        "        per_statement = gold[position] if position <= len(gold) else ()",
        [f"{CITATIONS}::test_gold_for_fewer_turns_than_the_session_leaves_the_rest_unjudged"],
    ),
    (
        "sRBP's lower bound on p inclusive",
        "genir_eval/metrics/measures.py",
        '        _require(0.0 < self.p < 1.0, self, "p must be in (0, 1)")\n'
        '        _require(0.0 <= self.b <= 1.0, self, "b must be in [0, 1]")',
        '        _require(0.0 <= self.p < 1.0, self, "p must be in (0, 1)")\n'
        '        _require(0.0 <= self.b <= 1.0, self, "b must be in [0, 1]")',
        [f"{MEASURES}::test_each_parameter_takes_its_domain_and_refuses_past_its_bounds"],
    ),
]


# -- issue 51: the third audit's survivors and the second's last one, re-made on this code ----
ISSUE_51: list[Mutation] = [
    Mutation(
        "decide: the point-biserial r judged against 0.5 instead of 0",
        "genir_eval/meta/decide.py",
        '    "point_biserial": ("point-biserial r", 0.0, False),',
        '    "point_biserial": ("point-biserial r", 0.5, False),',
        [DECIDE],
    ),
    Mutation(
        "verdict: evidence measured on other data ignored in what to look at next",
        "genir_eval/report/verdict.py",
        "        headline_tracks=tracks_here or (card is not None and card.tracks),",
        "        headline_tracks=tracks_here,",
        [f"{VERDICT}::test_evidence_that_the_headline_tracks_people_counts_as_evidence"],
    ),
    Mutation(
        "verdict: evidence measured on other data read as this run's own in the next steps",
        "genir_eval/report/verdict.py",
        '        [d for d in decisions if "measured before" not in d.subject],',
        "        decisions,",
        [f"{VERDICT}::test_evidence_measured_elsewhere_is_not_this_runs_own_bad_news"],
    ),
    Mutation(
        "headline: a pair agreement's margin not put on a correlation's scale",
        "genir_eval/meta/headline.py",
        '        (f.ci95[0] - f.chance) * (2.0 if f.statistic == "pair agreement" else 1.0)',
        "        (f.ci95[0] - f.chance) * 1.0",
        [STRENGTH],
    ),
    Mutation(
        "headline: evidence looked up by the judge's id instead of its registered name",
        "genir_eval/meta/headline.py",
        "        strength = _strength(name, found)",
        "        strength = _strength(judge_id, found)",
        [STRENGTH, NAMES],
    ),
    Mutation(
        "headline: the run passes the judge's id where its registered name belongs",
        "genir_eval/runner/run.py",
        "        [(j.id, names.get(j.id, j.id)) for j in infos],",
        "        [(j.id, j.id) for j in infos],",
        [NAMES],
        "headline",
    ),
    Mutation(
        "headline card: the figures looked up by the score's id instead of the judge's name",
        "genir_eval/report/card.py",
        "        figures=_this_judge_first(figures_for(judge or score), by),",
        "        figures=_this_judge_first(figures_for(score), by),",
        [NAMES],
    ),
    Mutation(
        "nuggets: the gold block's interval resamples answers instead of queries",
        "genir_eval/meta/gold/nuggets.py",
        "                    mean, values, values, [q for q, _ in pairs], n_boot=self.n_boot, seed=self.seed",
        "                    mean, values, values, list(range(len(values))), n_boot=self.n_boot, seed=self.seed",
        [GOLD_NUGGETS],
    ),
    Mutation(
        "nuggets: every answer put in one system",
        "genir_eval/meta/gold/nuggets.py",
        '            system = str(session.meta.get("system") or "run")',
        '            system = "run"',
        [GOLD_NUGGETS],
    ),
    Mutation(
        "arena --nuggets: answers whose label is missing not counted",
        "genir_eval/runner/arena_nuggets.py",
        "                    missing += 1",
        "                    missing += 0",
        [ARENA_NUGGETS],
    ),
    Mutation(
        "nuggets: not ordered vital first before the max_nuggets cut",
        "genir_eval/judges/nuggets/judge.py",
        '        order = sorted(range(len(facts)), key=lambda i: (importance[i] != "vital", i))[:limit]',
        "        order = list(range(len(facts)))[:limit]",
        [NUGGET_ORDER],
    ),
    Mutation(
        "nuggets: a partly supported nugget listed as missed",
        "genir_eval/judges/nuggets/replies.py",
        '        chosen = [n for n in order if (n["assignment"] != "not_support") == covered]',
        '        chosen = [n for n in order if (n["assignment"] == "support") == covered]',
        [NUGGET_ORDER],
    ),
    Mutation(
        "labelling: PPI sample size without its floor on the assumed variance",
        "genir_eval/runner/label/selection.py",
        "        var_r = max(var_f, 0.25)",
        "        var_r = var_f",
        [SAMPLE],
    ),
    Mutation(
        "labelling: the page asks for the random sample alone, not twice it",
        "genir_eval/runner/label/selection.py",
        "        return min(self.pool, 2 * self.needed)",
        "        return min(self.pool, self.needed)",
        [SAMPLE],
    ),
    Mutation(
        "label export: no gold for a session with only its session satisfaction labelled",
        "genir_eval/runner/label/gold.py",
        "        if not (has_links or has_support or has_turns or has_nuggets or sid in self.sessions):",
        "        if not (has_links or has_support or has_turns or has_nuggets):",
        [PEOPLE_GOLD],
    ),
    Mutation(
        "compare: too few to decide outranks a regression in the joint verdict",
        "genir_eval/runner/compare.py",
        '    for verdict in ("regression", "too few to decide"):',
        '    for verdict in ("too few to decide", "regression"):',
        [JOINT],
    ),
    Mutation(
        "compare: a lower-is-better measure's worse side read as higher-is-better in the note",
        "genir_eval/runner/compare.py",
        "    worse_side = ci[1] < 0 if comparison.higher_is_better else ci[0] > 0",
        "    worse_side = ci[1] < 0",
        [JOINT],
    ),
    Mutation(
        "compare --html: the worse sessions of the first passing score, not the regressed one",
        "genir_eval/report/comparison.py",
        '        if document.get("verdict") == "regression":',
        '        if document.get("verdict") == "pass":',
        [GATED],
    ),
    Mutation(
        "arena: the style-controlled scores' intervals bootstrap the plain fit",
        "genir_eval/runner/arena_figures.py",
        "    draws = bootstrap_scores(outcomes, resamples=resamples, seed=seed, style=True)",
        "    draws = bootstrap_scores(outcomes, resamples=resamples, seed=seed, style=False)",
        [STYLE],
    ),
    Mutation(
        "arena: the style-controlled scores' interval at 90% instead of 95%",
        "genir_eval/runner/arena_figures.py",
        "        name: [float(np.percentile(draws[:, i], 2.5)), float(np.percentile(draws[:, i], 97.5))]",
        "        name: [float(np.percentile(draws[:, i], 5)), float(np.percentile(draws[:, i], 95))]",
        [STYLE],
    ),
    Mutation(
        "cross-validation: a tie between the chosen design and its ingredient adopts the design",
        "genir_eval/meta/crossval.py",
        "    adopted = pick(hits, topics) if figure > ingredient_figure else ingredient",
        "    adopted = pick(hits, topics) if figure >= ingredient_figure else ingredient",
        [CROSSVAL],
    ),
    Mutation(
        "session bootstrap: the 95% interval at 90% (the tail not halved)",
        "genir_eval/meta/resample.py",
        "    tail = 100.0 * (1.0 - ci) / 2.0",
        "    tail = 100.0 * (1.0 - ci)",
        [RESAMPLE],
    ),
    Mutation(
        "run folder: a judge without its missing key taken as missing nothing wrong",
        "genir_eval/rundir/verify.py",
        '        stated = judge.get("missing")',
        '        stated = judge.get("missing", missing[name])',
        [KEYS],
    ),
    # -- their neighbours: the same rules from another side ----------------------------------
    Mutation(
        "decide: an AUC judged against 0.4",
        "genir_eval/meta/decide.py",
        '    "auc": ("AUC", 0.5, True),',
        '    "auc": ("AUC", 0.4, True),',
        [DECIDE],
    ),
    Mutation(
        "decide: a kappa judged against 0.5",
        "genir_eval/meta/decide.py",
        '    "kappa": ("kappa", 0.0, True),',
        '    "kappa": ("kappa", 0.5, True),',
        [DECIDE],
    ),
    Mutation(
        "decide: a pair agreement judged against 0",
        "genir_eval/meta/decide.py",
        '    "pair agreement": ("pair agreement", 0.5, True),',
        '    "pair agreement": ("pair agreement", 0.0, True),',
        [DECIDE],
    ),
    Mutation(
        "verdict: the one-line verdict leads with evidence measured elsewhere",
        "genir_eval/report/verdict.py",
        '    here = [d for d in verdict.decisions if "measured before" not in d.subject]',
        "    here = list(verdict.decisions)",
        [f"{VERDICT}::test_the_one_line_verdict_leads_with_this_runs_own_decision"],
    ),
    Mutation(
        "headline: a figure whose interval holds chance counted as evidence",
        "genir_eval/meta/headline.py",
        "        if f.tracks and f.ci95",
        "        if f.ci95",
        ["tests/meta/test_headline.py"],
    ),
    Mutation(
        "headline: a pair agreement's margin weighed three times",
        "genir_eval/meta/headline.py",
        '        (f.ci95[0] - f.chance) * (2.0 if f.statistic == "pair agreement" else 1.0)',
        '        (f.ci95[0] - f.chance) * (3.0 if f.statistic == "pair agreement" else 1.0)',
        [STRENGTH],
    ),
    Mutation(
        "arena --nuggets: answers not counted",
        "genir_eval/runner/arena_nuggets.py",
        "                answers += 1",
        "                answers += 0",
        [ARENA_NUGGETS],
    ),
    Mutation(
        "nuggets: a partly supported nugget listed as both covered and missed",
        "genir_eval/judges/nuggets/replies.py",
        '        chosen = [n for n in order if (n["assignment"] != "not_support") == covered]',
        '        chosen = [n for n in order if (n["assignment"] != "support") == covered]',
        [NUGGET_ORDER],
    ),
    Mutation(
        "labelling: the floor on the assumed variance at 0.01",
        "genir_eval/runner/label/selection.py",
        "        var_r = max(var_f, 0.25)",
        "        var_r = max(var_f, 0.01)",
        [SAMPLE],
    ),
    Mutation(
        "labelling: the asked labels not capped at the pool",
        "genir_eval/runner/label/selection.py",
        "        return min(self.pool, 2 * self.needed)",
        "        return 2 * self.needed",
        [SAMPLE],
    ),
    Mutation(
        "compare: a lower-is-better measure's note read on its better side",
        "genir_eval/runner/compare.py",
        "    worse_side = ci[1] < 0 if comparison.higher_is_better else ci[0] > 0",
        "    worse_side = ci[1] < 0 if comparison.higher_is_better else ci[1] < 0",
        [JOINT],
    ),
    Mutation(
        "compare --html: always the first score's worse sessions",
        "genir_eval/report/comparison.py",
        '        if document.get("verdict") == "regression":',
        "        if False:",
        [GATED],
    ),
    Mutation(
        "arena: the style-controlled interval's lower bound at 5%",
        "genir_eval/runner/arena_figures.py",
        "        name: [float(np.percentile(draws[:, i], 2.5)), float(np.percentile(draws[:, i], 97.5))]",
        "        name: [float(np.percentile(draws[:, i], 5)), float(np.percentile(draws[:, i], 97.5))]",
        [STYLE],
    ),
    Mutation(
        "cross-validation: an equal figure said to beat the ingredient",
        "genir_eval/meta/crossval.py",
        "        return self.figure > self.ingredient_figure",
        "        return self.figure >= self.ingredient_figure",
        [CROSSVAL],
    ),
    Mutation(
        "session bootstrap: the upper tail not halved",
        "genir_eval/meta/resample.py",
        "    lo, hi = np.percentile(values, [tail, 100.0 - tail])",
        "    lo, hi = np.percentile(values, [tail, 100.0 - 2 * tail])",
        [RESAMPLE],
    ),
    Mutation(
        "run folder: a judge without its missing key taken as missing none",
        "genir_eval/rundir/verify.py",
        '        stated = judge.get("missing")',
        '        stated = judge.get("missing", 0)',
        [KEYS],
    ),
]

MUTATIONS: list[Mutation] = [Mutation(*m) for m in AUDITED] + ISSUE_51

#: The bounded subset the slow test runs in CI (tests/test_decision_mutations.py): issue 51's
#: mutants whose tests take seconds, one or more per module.
CI_SUBSET: tuple[str, ...] = (
    "decide: the point-biserial r judged against 0.5 instead of 0",
    "headline: a pair agreement's margin not put on a correlation's scale",
    "nuggets: the gold block's interval resamples answers instead of queries",
    "nuggets: every answer put in one system",
    "nuggets: a partly supported nugget listed as missed",
    "labelling: PPI sample size without its floor on the assumed variance",
    "labelling: the page asks for the random sample alone, not twice it",
    "label export: no gold for a session with only its session satisfaction labelled",
    "compare: too few to decide outranks a regression in the joint verdict",
    "compare: a lower-is-better measure's worse side read as higher-is-better in the note",
    "arena: the style-controlled scores' interval at 90% instead of 95%",
    "cross-validation: a tie between the chosen design and its ingredient adopts the design",
    "session bootstrap: the 95% interval at 90% (the tail not halved)",
)


def _copy(work: Path) -> Path:
    """The package, tests, fixtures, scenarios and pyproject.toml copied into ``work/repo``
    (``../shared`` linked beside it); the copy's folder."""
    folder = work / "repo"
    folder.mkdir(parents=True)
    for name in ("genir_eval", "tests", "fixtures", "scenarios"):
        shutil.copytree(
            ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    shutil.copy2(ROOT / "pyproject.toml", folder / "pyproject.toml")
    shared = ROOT.parent / "shared"
    if shared.exists():
        (work / "shared").symlink_to(shared.resolve())
    return folder


def _apply(folder: Path, number: int, mutation: Mutation) -> str:
    """Run ``mutation``'s tests in ``folder`` with its line changed: ``caught by TEST``,
    ``SURVIVED ...`` or ``STALE ...`` (the line is not in its file once)."""
    path = folder / mutation.file
    source = path.read_text(encoding="utf-8")
    if source.count(mutation.line + "\n") != 1:
        return f"STALE: the line is not in {mutation.file} once; update this script"
    path.write_text(source.replace(mutation.line + "\n", mutation.mutant + "\n"), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(folder),
        "PYTHONDONTWRITEBYTECODE": "1",  # every run compiles the source it finds
    }
    env.pop("PYTEST_ADDOPTS", None)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly"]
            + ["-p", "no:cacheprovider", "-m", "", *mutation.tests],
            cwd=folder,
            capture_output=True,
            text=True,
            env=env,
        )
    finally:
        path.write_text(source, encoding="utf-8")
    failed = [
        t.removeprefix("FAILED ").split(" - ", 1)[0]  # a test id may hold spaces
        for t in result.stdout.splitlines()
        if t.startswith("FAILED ")
    ]
    if result.returncode == 1 and failed:
        return f"caught by {failed[0]}"
    summary = result.stdout.strip().splitlines()[-1:] or [""]
    if result.returncode == 0 and " skipped" in summary[0] and " passed" not in summary[0]:
        return f"NOT CHECKED: every test named for it skipped here ({summary[0]})"
    return f"SURVIVED (pytest exit {result.returncode})"


def _chosen(args: argparse.Namespace) -> list[int]:
    if args.ci:
        whats = [m.what for m in MUTATIONS]
        return [whats.index(what) + 1 for what in CI_SUBSET]
    numbers = args.numbers or list(range(1, len(MUTATIONS) + 1))
    if args.module:
        numbers = [n for n in numbers if module_of(MUTATIONS[n - 1]) in args.module]
    return numbers


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*", type=int, help="mutants to apply (1-based)")
    parser.add_argument("--module", action="append", help="only this module's mutants")
    parser.add_argument("--ci", action="store_true", help="the subset the slow test runs")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    args = parser.parse_args(list(argv))
    modules = sorted({module_of(m) for m in MUTATIONS})
    for name in args.module or ():
        if name not in modules:
            parser.error(f"no module {name!r}; the modules: {', '.join(modules)}")
    chosen = _chosen(args)
    if args.list:
        for n in chosen:
            print(f"{n}. [{module_of(MUTATIONS[n - 1])}] {MUTATIONS[n - 1].what}")
        return 0
    tally: dict[str, list[int]] = {}
    stale = survived = unchecked = 0
    with tempfile.TemporaryDirectory(prefix="genir-decision-mutations-") as work:
        folder = _copy(Path(work))
        for n in chosen:
            mutation = MUTATIONS[n - 1]
            outcome = _apply(folder, n, mutation)
            module = module_of(mutation)
            print(f"{n}. [{module}] {mutation.what}: {outcome}", flush=True)
            if outcome.startswith("STALE"):
                stale += 1
                continue
            if outcome.startswith("NOT CHECKED"):
                unchecked += 1
                continue
            counts = tally.setdefault(module, [0, 0])
            counts[0] += outcome.startswith("caught")
            counts[1] += 1
            survived += outcome.startswith("SURVIVED")
    print("kill rate per module:")
    for module, (killed, total) in sorted(tally.items()):
        print(f"  {module}: {killed} of {total} killed ({100.0 * killed / total:.0f}%)")
    killed = sum(k for k, _ in tally.values())
    total = sum(t for _, t in tally.values())
    if total:
        print(f"  all: {killed} of {total} killed ({100.0 * killed / total:.1f}%)")
    if unchecked:
        print(f"{unchecked} mutant(s) not checked: their tests skipped here (left out above)")
    if stale:
        print(f"{stale} mutant(s) no longer match their file: update this script")
    return 2 if stale else 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
