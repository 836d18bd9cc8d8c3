"""A judge kind owns what it knows: the stages after the judges loop over the registered
kinds (:mod:`genir_eval.judges.kinds`) instead of testing kind names.

Two checks: the kind names are spelled in at most three files outside ``genir_eval/judges/``
(an AST scan of string constants, docstrings aside), and a new kind is a module of its own
plus one registration line: a toy kind defined in a temporary module, and nowhere else,
gets its turn scores in the run's tables, its block in the meta-evaluation, its table in the
summary and the report and its entry in the glossary.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import pytest

from genir_eval import kind_names
from genir_eval.judges import base, kinds
from genir_eval.report.glossary import describe_score
from genir_eval.report.html import render_report
from genir_eval.report.summary import format_summary
from genir_eval.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "genir_eval"

#: The files outside ``judges/`` that may spell a kind's name: the names module the records
#: and readers take the gold fields' names from, and two run-folder fields that happen to
#: be spelled like a kind (a failure's and a judgment's ``item``, the evidence's ``spans``
#: marks, gold and judged alike).
ALLOWED = {"kind_names.py", "report/evidence.py", "runner/assemble.py"}

#: Kind names that are also ordinary field names of the formats genir-eval reads and writes
#: (a judgment's ``item``, OTLP's ``spans`` lists and the evidence's ``spans`` marks, the
#: users' ``satisfaction``): such a constant spells the kind only where it meets a kind,
#: compared with one or handed to a call that takes one (``judge_kind("spans")``,
#: ``kind == "satisfaction"``).
FIELD_WORDS = {"item", "spans", "satisfaction"}


def _names_a_kind(node: ast.Constant, parent: ast.AST | None) -> bool:
    if node.value not in FIELD_WORDS:
        return True
    if isinstance(parent, ast.Compare):
        return "kind" in ast.unparse(parent).lower()
    if isinstance(parent, ast.Call):
        return "kind" in ast.unparse(parent.func).lower()
    if isinstance(parent, ast.keyword):
        return "kind" in (parent.arg or "")
    return False


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, nodes)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def files_naming_kinds() -> dict[str, list[int]]:
    """Each package file outside ``judges/`` holding a kind name as a string constant, with
    the lines it does so on."""
    names = set(kind_names.KIND_NAMES)
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("judges/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        parents = {
            id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and node.value in names
                and id(node) not in docstrings
                and _names_a_kind(node, parents.get(id(node)))
            ):
                found.setdefault(relative, []).append(node.lineno)
    return found


def test_the_kind_names_module_names_every_registered_kind() -> None:
    assert [kind.name for kind in kinds.judge_kinds()][: len(kind_names.KIND_NAMES)] == list(
        kind_names.KIND_NAMES
    )


def test_a_field_word_spells_a_kind_only_beside_one() -> None:
    tree = ast.parse(
        'kind == "spans"\nrow.get("spans")\njudge_kind("satisfaction")\nf(kind="item")\nx["item"]'
    )
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    constants = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Constant)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    seen = [_names_a_kind(n, parents.get(id(n))) for n in constants]
    assert seen == [True, False, True, True, False]


def test_at_most_three_files_outside_the_judges_spell_a_kind_name() -> None:
    found = files_naming_kinds()
    assert len(found) <= 3, found
    assert set(found) <= ALLOWED, {f: lines for f, lines in found.items() if f not in ALLOWED}


def test_no_function_is_over_100_lines() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 100:
                    long.append(f"{relative}:{node.lineno} {node.name} ({length} lines)")
    assert long == []


# The toy kind: a judge marking a response's long units (over 40 characters); its turn
# score is the share of the units it marks, compared with the users' query satisfaction as
# the marked share of satisfied turns (4-5) against the others'. Written to a module of its
# own, registered there, and known to nothing else.
TOY_MODULE = """
from genir_eval.judges.base import Label, register_judge
from genir_eval.judges.kinds import GoldBlock, JudgeCell, JudgeKind, JudgeTable, register_kind
from genir_eval.llm.providers.base import JudgmentKey


class LongUnits(JudgeKind):
    name = "toy_long_units"
    own_items = frozenset({"long_units"})
    own_score = ("0-1", "the share of the response's units over 40 characters")

    def turn_value(self, value, n_segments):
        return len(value) / n_segments if isinstance(value, list) and n_segments else None

    def gold_blocks(self, context):
        shares = {"satisfied": [], "other": []}

        def add(sessions, labels, link_labels):
            by_turn = {(lb.key.session_id, lb.key.turn): lb for lb in labels}
            for session in sessions:
                ratings = session.gold.query_satisfaction if session.gold else None
                for position, turn in enumerate(session.turns):
                    label = by_turn.get((session.session_id, turn.index))
                    if label is None or not ratings or not turn.segments:
                        continue
                    side = "satisfied" if ratings[position] >= 4 else "other"
                    shares[side].append(len(label.value) / len(turn.segments))

        def result():
            if not any(shares.values()):
                return None
            mean = {k: sum(v) / len(v) if v else None for k, v in shares.items()}
            return {"n": sum(len(v) for v in shares.values()), "mean_share": mean}

        return [GoldBlock(self.name, add, result)]

    def _table(self, blocks, key=""):
        if not blocks:
            return None
        rows = [
            [JudgeCell(judge), m["n"], m["mean_share"]["satisfied"], m["mean_share"]["other"]]
            for judge, m in blocks.items()
        ]
        head = ("", "turns", "satisfied", "other")
        return JudgeTable("Toy: share of long units by satisfaction", head, rows, key=key)

    def summary_table(self, blocks):
        return self._table(blocks)

    def report_table(self, blocks):
        return self._table(blocks, key="toy-agreement")


class LongUnitsJudge:
    name = "toy.long_units"
    kind = "toy_long_units"

    def __init__(self, **options):
        self.options = dict(options)

    async def __call__(self, session, engine):
        return [
            Label(
                JudgmentKey(session.session_id, turn.index, "long_units", self.name, "v1"),
                [i for i, unit in enumerate(turn.segments) if len(unit.text) > 40],
            )
            for turn in session.turns
        ]


register_judge("toy.long_units")(LongUnitsJudge)
register_kind(LongUnits())
"""

SCENARIO = """
version = 1
name = "toy-kind"

[input]
path = "{fixtures}/demo_sessions.csv"
format = "urge"

[engine]
cache_mode = "off"

[[judges]]
name = "toy.long_units"

[[judges]]
name = "satisfaction.urs"

[meta]
enabled = true
n_boot = 0
"""


@pytest.fixture
def toy_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> kinds.JudgeKind:
    """The toy kind's module imported from a temporary folder; the registries are restored
    afterwards."""
    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))
    monkeypatch.setattr(base, "REGISTRY", dict(base.REGISTRY))
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "toy_long_units.py").write_text(TOY_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    importlib.import_module("toy_long_units")
    monkeypatch.delitem(sys.modules, "toy_long_units")
    return kinds.judge_kind("toy_long_units")


def test_a_new_kind_flows_through_tables_meta_and_report(
    toy_kind: kinds.JudgeKind, tmp_path: Path, fixtures_dir: Path
) -> None:
    scenario = tmp_path / "toy.toml"
    scenario.write_text(SCENARIO.format(fixtures=fixtures_dir.as_posix()), encoding="utf-8")
    run = run_scenario(scenario, out_dir=tmp_path / "run")
    judge = "toy.long_units"
    # the run's tables: the kind's labels (lists of units) scored by its turn_value
    turns = [
        json.loads(line) for line in (tmp_path / "run" / "turns.jsonl").read_text().splitlines()
    ]
    assert turns and all(judge in row["scores"] for row in turns)
    sessions = {s.session_id: s for s in run.sessions}
    assert sessions
    evidence = [
        json.loads(line) for line in (tmp_path / "run" / "evidence.jsonl").read_text().splitlines()
    ]
    for row in evidence:
        if row["turn"] is None:
            continue
        (judged,) = [j for j in row["judgments"] if j["judge"] == judge]
        expected = len(judged["value"]) / len(row["segments"]) if row["segments"] else None
        (turn,) = [
            t for t in turns if (t["session_id"], t["turn"]) == (row["session_id"], row["turn"])
        ]
        assert turn["scores"][judge] == pytest.approx(expected)
    # the meta-evaluation: the kind's own block beside the other kinds' (satisfaction's)
    assert run.meta is not None
    block = run.meta["judges"][judge]
    assert block["kind"] == "toy_long_units"
    assert block["toy_long_units"]["n"] == len(turns)
    assert "satisfaction" in run.meta["judges"]["satisfaction.urs"]
    # the report: its table in the summary and the HTML page, its score in the glossary
    summary = format_summary(run)
    assert "Toy: share of long units by satisfaction" in summary
    assert "id='toy-agreement'" in render_report(run)
    described = describe_score(judge, run)
    assert (described.range, described.averages) == toy_kind.own_score
