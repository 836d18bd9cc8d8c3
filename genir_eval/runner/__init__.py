"""genir-eval runner: scenarios run end to end, runs compared, runs asserted in tests.

Everything ``genir-eval run``, ``compare`` and ``meta`` do, from Python, from any folder
(``GENIR_EVAL_REPO`` names the repository's folder, whose fixtures and scenarios it reads;
``tests/test_api.py`` runs this very code from another folder and checks what it gives)::

    import asyncio
    import os
    from dataclasses import replace
    from pathlib import Path

    import genir_eval as ge
    from genir_eval.llm import Engine, OfflineProvider

    # the repository's folder (its fixtures and scenarios); the runs are written in its runs/
    repo = Path(os.environ.get("GENIR_EVAL_REPO", ".")).resolve()
    runs = repo / "runs"
    runs.mkdir(exist_ok=True)

    # sessions from a log (URGE CSV, canonical JSONL or Markdown), written back as JSONL
    sessions = ge.load_sessions(repo / "fixtures" / "demo_sessions.csv").sessions
    ge.write_jsonl(sessions, runs / "demo_sessions.jsonl")

    # judge, score and report a scenario: offline judges, no API key, no network
    run = ge.run_scenario(repo / "scenarios" / "demo-offline.toml", out_dir=runs / "demo")
    headline = run.meta["correlations"]["session"]["sdcg_urge"]
    # its interval is None: 7 sessions, fewer than the 10 every page needs for one
    print(run.mean("sdcg_urge"), headline["spearman"], headline["ci95"]["spearman"])
    dna = run.meta["judges"]["link_usefulness.dna"]["link_usefulness"]  # as `genir-eval meta`
    print(dna["spearman"], dna["cohen_kappa_binary"], dna["pairwise_auc"])
    print(run.report_path)  # <repo>/runs/demo/report.html

    # the same scenario with sdcg_urge from the TRUE judge's labels, compared per session
    scenario = ge.load_scenario(repo / "scenarios" / "demo-offline.toml")
    links = ("link_usefulness.true", "link_usefulness.dna")
    true_first = replace(scenario, aggregate=replace(scenario.aggregate, link_judges=links))
    ge.run_scenario(true_first, out_dir=runs / "demo-true")
    before, after = ge.load_run(runs / "demo"), ge.load_run(runs / "demo-true")
    comparison = ge.compare_runs(before, after, metric="sdcg_urge")
    print(comparison.mean_delta, comparison.p_value, [d.key for d in comparison.worse()])

    # a regression gate for a test suite: fails with a message naming run, metric and bound
    ge.assert_run(runs / "demo", metric="sdcg_urge", at_least=0.0)

    # one judge on one session, through an engine (here the offline provider)
    async def judge_one():
        async with Engine(OfflineProvider(), quiet=True) as engine:
            judge = ge.make_judge("link_usefulness.true", signals="relevance,behaviour")
            return await ge.judge_sessions(judge, sessions[:1], engine)

    labels = asyncio.run(judge_one())
    print([(label.key.turn, label.key.item, label.value) for label in labels])

    # URGE's table: link metrics from the expert labels against user satisfaction
    table = ge.urge_table(sessions)
    print(table["session_level"]["sdcg_urge"]["spearman"])

Offline judges are deterministic baselines computed from the log, not LLM judgments; give a
scenario's judges a provider (``scenarios/urge-openai.toml``) for LLM ones.
"""

from genir_eval.rundir.folder import Run
from genir_eval.runner.compare import Comparison, compare_runs, gate
from genir_eval.runner.run import Overrides, arun_scenario, run_scenario
from genir_eval.runner.scenario import Scenario, load_scenario, parse_scenario
from genir_eval.runner.tables import load_run
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
