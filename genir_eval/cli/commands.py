"""The subcommands by module name, with their one-line help: what ``genir-eval --help`` lists
and each subcommand's parser shows."""

from __future__ import annotations

__all__ = ["COMMANDS"]

# Module names under genir_eval.cli and their one-line help, in the order `--help` lists them:
# the order of the table in docs/guide/commands.md (tests/test_cli_help.py holds them to it):
# evaluate (run, compare, arena, meta, failures), look up (judges, measures), read logs (parse,
# correlate), then the cache, the people in the loop (label, serve) and the viewer (view).
COMMANDS: dict[str, str] = {
    "run": "run a scenario: judge the sessions, score them, write the run directory",
    "compare": "compare two runs over the same sessions; exit 1 on a regression",
    "arena": "rank systems by judging their answers in pairs (Bradley-Terry, style control)",
    "meta": "meta-evaluate a judge against gold labels",
    "failures": "a run's missing judgments grouped by cause, the judges each hit, and a hint",
    "judges": "list every judge with its kind, options and their defaults",
    "measures": "list every measure with its parameters, range and direction",
    "parse": "read sessions (URGE CSV, JSONL, Markdown, traces or a CrowdRAG folder) and "
    "write canonical JSONL",
    "correlate": "correlate usefulness measures with user satisfaction (URGE's table)",
    "export": "write a run's scores back: OTLP evaluation events on the judged spans, or "
    "Parquet tables",
    "cache": "inspect the LLM response cache",
    "label": "label a run's items in a browser; the labels become gold for run and meta",
    "serve": "the labelling server of `label` (same options)",
    "view": "browse runs: filter, sort and search sessions, read every judgment, put runs "
    "side by side, share a link or a static copy",
}
