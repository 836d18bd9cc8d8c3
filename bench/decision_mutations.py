"""One-line mutants of the decision code (the arena and its ranking, the pairwise gate,
agreement with people's preferences, the measures, compare and assert_run, the request
rate, Retry-After, redaction), applied by hand one at a time: each must make a test fail.

    python bench/decision_mutations.py            # every mutant
    python bench/decision_mutations.py 3 7        # some of them

The first 23 are the survivors of the audit of the decision code (issue 38), the next
three the pass-throughs the README claimed were tested (issue 40), the rest neighbours of
the same lines (a parameter fixed, a bound moved the other way). For each: the line is
changed, the tests named for it are run, the source is restored, and one line says which
test caught it (or that none did, and the script exits 1). Not part of the suite: it edits
the source while it runs (the machinery is bench/gate_mutations.py's).
"""

from __future__ import annotations

import sys

from gate_mutations import run_mutations

ARENA = "tests/runner/test_arena_gate.py"
GATE = "tests/runner/test_pairwise_gate.py"
RANKING = "tests/judges/pairwise/test_ranking.py"
PAIRWISE = "tests/runner/test_compare_pairwise.py"
AGREEMENT = "tests/meta/test_preferences_agreement.py"
MEASURES = "tests/metrics/test_metrics_measures.py"
CITATIONS = "tests/metrics/test_metrics_citations.py"
COMPARE = "tests/runner/test_compare.py"
STATISTICS = "tests/runner/test_compare_statistics.py"

# (what it means, file, the line as written, the mutated line, the tests that must catch it)
MUTATIONS: list[tuple[str, str, str, str, list[str]]] = [
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
        "            alpha=args.alpha,",
        "            alpha=0.05,",
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
        ["tests/runner/test_storage_faults.py::test_read_only_output_folder_fails_before_any_call"],
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
        '    level = 1 - gate["alpha"]\n    head = "PASS" if gate["passed"] else "FAIL"',
        '    level = 2 - gate["alpha"]\n    head = "PASS" if gate["passed"] else "FAIL"',
        [f"{GATE}::test_the_gate_reads_as_written_in_text_and_markdown"],
    ),
    (
        "the markdown gate's PASS written pass",
        "genir_eval/runner/pairwise_gate.py",
        '    head = "PASS" if gate["passed"] else "FAIL"',
        '    head = "pass" if gate["passed"] else "FAIL"',
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
        "        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):",
        "        if value is None and isinstance(value, bool) or not isinstance(value, (int, float)):",
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


def main(argv: list[str]) -> int:
    return run_mutations(MUTATIONS, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
