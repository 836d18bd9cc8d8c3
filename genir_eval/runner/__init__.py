"""genir-eval runner: scenarios run end to end, runs compared, runs asserted in tests.

Everything ``genir-eval run`` and ``genir-eval compare`` do, from Python::

    from genir_eval import load_sessions, run_scenario, load_run, compare_runs

    # judge, score and report a scenario (offline judges: no key, no network)
    run = run_scenario("scenarios/demo-offline.toml", out_dir="runs/demo")
    print(run.mean("sdcg_urge"), run.meta["correlations"]["session"]["sdcg_urge"]["spearman"])
    print(run.report_path)  # runs/demo/report.html

    # the same judges over sessions you loaded yourself
    sessions = load_sessions("fixtures/demo_sessions.csv").sessions
    mine = run_scenario("scenarios/demo-offline.toml", out_dir="runs/mine", sessions=sessions[:4])

    # a regression gate between two runs over the same sessions
    before, after = load_run("runs/baseline"), load_run("runs/demo")
    comparison = compare_runs(before, after, metric="sdcg_urge")
    print(comparison.mean_delta, comparison.p_value, comparison.cohen_dz)
    print([d.key for d in comparison.worse()])

In a test suite, ``assert_run("runs/demo", metric="sdcg_urge", at_least=2.5)`` (from
:mod:`genir_eval.runner.testing`) fails with a message naming the run, metric and bound.
"""

from genir_eval.report.outputs import Run, load_run
from genir_eval.runner.compare import Comparison, compare_runs, gate
from genir_eval.runner.run import Overrides, arun_scenario, run_scenario
from genir_eval.runner.scenario import Scenario, load_scenario, parse_scenario
from genir_eval.runner.testing import assert_run

__all__ = [
    "Scenario",
    "load_scenario",
    "parse_scenario",
    "Overrides",
    "run_scenario",
    "arun_scenario",
    "Run",
    "load_run",
    "Comparison",
    "compare_runs",
    "gate",
    "assert_run",
]
