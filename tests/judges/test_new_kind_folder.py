"""Adding a judge kind is one new folder plus one registration line.

A small kind, ``toy_length`` (which of a response's units are long), is written as a package
folder in a temporary directory: its judge with its option table (``judge.py``), its offline
twin answering the judge's task (``twin.py``) and its :class:`~genir_eval.judges.kinds.
JudgeKind` naming both (``kind.py``). Nothing in ``genir_eval`` knows it. One line registers
it (:func:`~genir_eval.judges.kinds.register_kind`, which registers the kind's judges and
twins with it), and the command line runs it offline end to end: ``genir-eval run`` on a
scenario naming its judge with an option, ``genir-eval meta`` on the gold sessions, the run's
``report.html``, and ``genir-eval compare`` of two runs.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from genir_eval.cli import main
from genir_eval.judges import base, kinds, registry
from genir_eval.llm.providers import offline

JUDGE = '''
"""The toy judge: which units of each response are long (over ``long`` characters)."""

from genir_eval.judges.base import Label, ask
from genir_eval.judges.common import generate_config
from genir_eval.judges.options import MODEL, MAX_TOKENS, TEMPERATURE, Option, check_judge_options, option_values
from genir_eval.judges.parsing import expect_index_list, extract_object
from genir_eval.judges.prompting import fence
from genir_eval.llm.providers.base import JudgmentKey, Message

TASK = "toy_length"


class LengthJudge:
    name = "toy_length.units"
    kind = "toy_length"
    task = TASK
    OPTIONS = (
        Option("long", 40, "a unit over this many characters is long", range=(1, 10000)),
        MODEL,
        TEMPERATURE,
        MAX_TOKENS,
    )

    def __init__(self, **options):
        check_judge_options(self.name, self.OPTIONS, options)
        self.options = dict(options)
        self.values = option_values(self.OPTIONS, options)

    async def __call__(self, session, engine):
        labels = []
        for turn in session.turns:
            n = len(turn.segments)
            units = "\\n".join(f"[{i}] {unit.text}" for i, unit in enumerate(turn.segments))
            prompt = (
                f"List the units over {self.values['long']} characters as "
                '{"long": [indices]}.\\n' + fence(units, "ANSWER UNITS")
            )
            labels.append(
                await ask(
                    engine,
                    JudgmentKey(session.session_id, turn.index, "long_units", self.name, "v1"),
                    [Message("user", prompt)],
                    generate_config(engine, self.values, response_format="json"),
                    self.task,
                    (turn, self.values["long"]),
                    lambda text, n=n: list(expect_index_list(extract_object(text)["long"], n, "long")),
                )
            )
        return labels
'''

TWIN = '''
"""The toy judge's offline twin: counts the characters of each unit."""

import json


def reply(request):
    turn, long = request.context
    return json.dumps({"long": [i for i, u in enumerate(turn.segments) if len(u.text) > long]})
'''

KIND = '''
"""The toy kind: its turn score is the share of the response's units that are long,
compared with the users' query satisfaction as that share on satisfied turns (4-5) and on
the others."""

from genir_eval.judges.kinds import GoldBlock, JudgeCell, JudgeKind, JudgeTable

from toy_length.judge import TASK, LengthJudge
from toy_length.twin import reply


class LengthKind(JudgeKind):
    name = "toy_length"
    own_items = frozenset({"long_units"})
    own_score = ("0-1", "the share of the response's units that are long")
    judges = (LengthJudge,)
    twins = {TASK: reply}

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
                    if label is None or label.value is None or not ratings or not turn.segments:
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
        rows = [
            [JudgeCell(judge), m["n"], m["mean_share"]["satisfied"], m["mean_share"]["other"]]
            for judge, m in blocks.items()
        ]
        head = ("", "turns", "satisfied", "other")
        return JudgeTable("Toy: share of long units by satisfaction", head, rows, key=key) if rows else None

    def summary_table(self, blocks):
        return self._table(blocks)

    def report_table(self, blocks):
        return self._table(blocks, key="toy-length")

    def meta_lines(self, result):
        block = result.get("toy_length")
        return [f"toy_length: {block['n']} turns compared"] if block else []


KIND = LengthKind()
'''

SCENARIO = """
version = 1
name = "toy-length"

[input]
path = "{fixtures}/demo_sessions.csv"
format = "urge"

[llm]
provider = "offline"

[engine]
cache_mode = "off"

[[judges]]
name = "toy_length.units"
options = {{ long = {long} }}

[meta]
enabled = true
n_boot = 0
"""


@pytest.fixture
def toy_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kind's folder, ``<tmp>/kinds/toy_length/``, on ``sys.path``; the registries of
    kinds, judges and offline twins are restored after the test."""
    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))
    monkeypatch.setattr(base, "REGISTRY", dict(base.REGISTRY))
    monkeypatch.setattr(offline, "_HANDLERS", dict(offline._HANDLERS))
    folder = tmp_path / "kinds" / "toy_length"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("", encoding="utf-8")
    for name, text in (("judge", JUDGE), ("twin", TWIN), ("kind", KIND)):
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder.parent))
    yield folder
    for module in [m for m in sys.modules if m == "toy_length" or m.startswith("toy_length.")]:
        del sys.modules[module]


def _run(tmp_path: Path, fixtures: Path, name: str, long: int) -> Path:
    scenario = tmp_path / f"{name}.toml"
    scenario.write_text(SCENARIO.format(fixtures=fixtures.as_posix(), long=long), encoding="utf-8")
    out = tmp_path / name
    assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 0
    return out


def test_a_kind_from_its_own_folder_runs_through_run_meta_report_and_compare(
    toy_folder: Path,
    tmp_path: Path,
    fixtures_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "toy_length.units" not in registry.judge_names()
    kinds.register_kind(importlib.import_module("toy_length.kind").KIND)  # the one line

    judge = "toy_length.units"
    run_a = _run(tmp_path, fixtures_dir, "run-a", long=40)
    run_b = _run(tmp_path, fixtures_dir, "run-b", long=20)

    # run: every turn scored by the twin's reply (the share of units over the option's bound)
    evidence = [json.loads(x) for x in (run_a / "evidence.jsonl").read_text().splitlines()]
    turns = {
        (t["session_id"], t["turn"]): t
        for t in map(json.loads, (run_a / "turns.jsonl").read_text().splitlines())
    }
    checked = 0
    for row in evidence:
        if row["turn"] is None or not row["segments"]:
            continue
        # the evidence gives each unit as its [start, end) in the response
        lengths = [end - start for start, end in row["segments"]]
        expected = sum(length > 40 for length in lengths) / len(lengths)
        score = turns[(row["session_id"], row["turn"])]["scores"][judge]
        assert score == pytest.approx(expected)
        checked += 1
    assert checked > 0
    # the two runs differ as their option does: a lower bound marks more units long
    scores_b = {
        (t["session_id"], t["turn"]): t["scores"][judge]
        for t in map(json.loads, (run_b / "turns.jsonl").read_text().splitlines())
    }
    assert all(scores_b[k] >= t["scores"][judge] for k, t in turns.items())
    assert any(scores_b[k] > t["scores"][judge] for k, t in turns.items())

    # the run's meta-evaluation holds the kind's block
    meta = json.loads((run_a / "meta.json").read_text())
    assert meta["judges"][judge]["kind"] == "toy_length"
    assert meta["judges"][judge]["toy_length"]["n"] == checked

    # genir-eval meta: the judge against the gold sessions, its block and its line
    capsys.readouterr()
    assert main(["meta", str(fixtures_dir / "demo_sessions.csv"), "--judge", judge, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"toy_length: {checked} turns compared" in out

    # the report: the kind's table
    report = (run_a / "report.html").read_text(encoding="utf-8")
    assert "id='toy-length'" in report
    assert "Toy: share of long units by satisfaction" in report

    # genir-eval compare: the two runs on the kind's score
    capsys.readouterr()
    code = main(
        ["compare", str(run_a), str(run_b), "--metric", judge, "--min-sessions", "2", "--json"]
    )
    assert code == 0, capsys.readouterr().err
    (compared,) = json.loads(capsys.readouterr().out)["comparisons"]
    sessions_a = [
        row["scores"][judge]
        for row in map(json.loads, (run_a / "sessions.jsonl").read_text().splitlines())
    ]
    assert (compared["metric"], compared["n"]) == (judge, len(sessions_a))
    assert compared["mean_a"] == pytest.approx(sum(sessions_a) / len(sessions_a))
    assert compared["mean_delta"] > 0  # B marks more units long, and its score is higher


def test_the_kind_s_option_table_refuses_a_value_out_of_bounds(
    toy_folder: Path, tmp_path: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kinds.register_kind(importlib.import_module("toy_length.kind").KIND)
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SCENARIO.format(fixtures=fixtures_dir.as_posix(), long=0), encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "toy_length.units" in err and "long" in err
